package delivery

import (
	"context"
	"sync"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// slots counts the claims the engine holds per endpoint: from its claims,
// and from the leases a store took for it as it registered deliveries
// (see Lease). A claim holds its endpoint's slot until its record is
// stored, as in the database, whose count of unexpired leases is what
// ClaimDeliveries caps.
type slots struct {
	mu   sync.Mutex
	held map[string]int
}

func (s *slots) take(endpoint string, limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if limit > 0 && s.held[endpoint] >= limit {
		return false
	}
	s.held[endpoint]++
	return true
}

func (s *slots) add(endpoint string) {
	s.mu.Lock()
	s.held[endpoint]++
	s.mu.Unlock()
}

func (s *slots) free(endpoint string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[endpoint] <= 1 {
		delete(s.held, endpoint)
	} else {
		s.held[endpoint]--
	}
}

// Lease implements app.Engine: it takes one of the engine's Concurrency
// slots and one of the endpoint's PerEndpoint, for a delivery the caller
// inserts leased with the token until the returned time. The caller then
// calls Hand once the insert committed, or Unlease.
//
// The per-endpoint count is this engine's: with one process it is the
// database's. On a database that several processes share, the store also
// counts the endpoint's leases there (see postgres.Store.SetEngine).
func (e *Engine) Lease(endpointID string, now time.Time) (string, time.Time, bool) {
	// A claim counts its slots before it commits (ClaimRequest.Hold), so
	// the count here misses no claim that a transaction can see: with one
	// writer (SQLite) it is the database's.
	if !e.running.Load() {
		return "", time.Time{}, false
	}
	for {
		n := e.inflight.Load()
		if n >= int64(e.cfg.Concurrency) {
			return "", time.Time{}, false
		}
		if e.inflight.CompareAndSwap(n, n+1) {
			break
		}
	}
	if !e.slots.take(endpointID, e.cfg.PerEndpoint) {
		e.inflight.Add(-1)
		return "", time.Time{}, false
	}
	return e.token, now.Add(e.cfg.Lease), true
}

// Unlease implements app.Engine.
func (e *Engine) Unlease(endpointIDs []string) {
	for _, id := range endpointIDs {
		e.slots.free(id)
		e.inflight.Add(-1)
	}
}

// Hand implements app.Engine. It never blocks: the handed channel has room
// for every slot.
func (e *Engine) Hand(claims []*webhooks.Claim) {
	if len(claims) > 0 {
		e.handed <- claims
	}
}

// PerEndpoint implements app.Engine.
func (e *Engine) PerEndpoint() int { return e.cfg.PerEndpoint }

// progress is closed, and replaced, each time the dispatcher stores
// records (see AwaitProgress).
type progress struct {
	mu sync.Mutex
	ch chan struct{}
}

func (p *progress) wait() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch == nil {
		p.ch = make(chan struct{})
	}
	return p.ch
}

func (p *progress) signal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch != nil {
		close(p.ch)
		p.ch = nil
	}
}

// AwaitProgress implements app.Engine.
func (e *Engine) AwaitProgress(ctx context.Context, max time.Duration) {
	if !e.running.Load() {
		return
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-e.progress.wait():
	case <-t.C:
	case <-ctx.Done():
	}
}
