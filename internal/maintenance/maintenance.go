// Package maintenance runs the service's background work, one named
// service per job (the outbox's drain, the purge, and, on a database that
// several processes share, the notifier, the listener, the vacuum and the
// refresh of the cluster's keys), each started and stopped with the
// others by Run. Each job's interval is in its configuration (see
// service.Config, and the configuration table in docs/operations.md).
package maintenance

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Service is one job of background work.
type Service interface {
	// Name names it in logs.
	Name() string
	// Run works until ctx ends; it logs its errors and goes on.
	Run(ctx context.Context)
}

// Run runs services until ctx ends, then waits for each to stop.
func Run(ctx context.Context, services ...Service) {
	var wg sync.WaitGroup
	for _, s := range services {
		if s != nil {
			wg.Go(func() { s.Run(ctx) })
		}
	}
	wg.Wait()
}

// Periodic is a Service that calls Work at least every Interval (never by
// the clock when Interval is 0), and as soon as it can after a Kick, at
// most once per MinGap: many kicks in a row make one run.
type Periodic struct {
	ServiceName string
	// Interval is how often Work runs unasked; First how long it waits
	// before its first run (0: Interval).
	Interval time.Duration
	First    time.Duration
	// MinGap is the least time between two runs.
	MinGap time.Duration
	// Work does one run. An error is logged (at warning level) unless
	// ctx ended.
	Work   func(ctx context.Context) error
	Logger *slog.Logger

	once sync.Once
	kick chan struct{}
}

// Name implements Service.
func (p *Periodic) Name() string { return p.ServiceName }

func (p *Periodic) kicks() chan struct{} {
	p.once.Do(func() { p.kick = make(chan struct{}, 1) })
	return p.kick
}

// Kick asks for a run as soon as possible. It never blocks.
func (p *Periodic) Kick() {
	select {
	case p.kicks() <- struct{}{}:
	default:
	}
}

// Run implements Service.
func (p *Periodic) Run(ctx context.Context) {
	kick := p.kicks()
	var tick <-chan time.Time
	var timer *time.Timer
	if p.Interval > 0 {
		first := p.First
		if first == 0 {
			first = p.Interval
		}
		timer = time.NewTimer(first)
		defer timer.Stop()
		tick = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-kick:
		}
		if err := p.Work(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			logger := p.Logger
			if logger == nil {
				logger = slog.Default()
			}
			logger.Warn("background: "+p.ServiceName+" failed; it runs again", "err", err)
		}
		if timer != nil {
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			timer.Reset(p.Interval)
		}
		if p.MinGap > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(p.MinGap):
			}
		}
	}
}

// Func is a Service that runs one function until ctx ends (one that loops
// on its own, such as a listener).
type Func struct {
	ServiceName string
	Fn          func(ctx context.Context)
}

// Name implements Service.
func (f Func) Name() string { return f.ServiceName }

// Run implements Service.
func (f Func) Run(ctx context.Context) { f.Fn(ctx) }
