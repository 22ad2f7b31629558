package delivery

import (
	"cmp"
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Defaults of Config.
const (
	DefaultAttemptTimeout = 10 * time.Second
	DefaultConcurrency    = 256
	DefaultPerEndpoint    = 32
	DefaultPollInterval   = time.Second
	DefaultBatchSize      = 100
)

// Config configures an Engine. Zero fields take the defaults above.
type Config struct {
	Store webhooks.Store
	// Client makes the attempts. It must not follow redirects and should
	// dial through the SSRF guard; NewClient builds one.
	Client *http.Client
	Policy webhooks.RetryPolicy
	// AttemptTimeout bounds an attempt from dial to the end of the answer.
	AttemptTimeout time.Duration
	// Concurrency caps this process's attempts in flight.
	Concurrency int
	// PerEndpoint caps the attempts in flight to one endpoint across every
	// process on the database, so that a slow endpoint with a deep backlog
	// holds at most that many workers.
	PerEndpoint int
	// Lease is how long a claim lasts before another worker may take the
	// delivery. It must exceed AttemptTimeout. Defaults to AttemptTimeout
	// plus 30 seconds.
	Lease time.Duration
	// PollInterval is the safety net: the engine looks for due work at
	// least this often, even if nothing woke it.
	PollInterval time.Duration
	// ShutdownGrace is how long Run waits, once its context ends, for the
	// attempts in flight to finish before it aborts them and hands their
	// deliveries back. Defaults to AttemptTimeout plus one second.
	ShutdownGrace time.Duration
	// IsRefused reports whether an attempt's error means the address was
	// refused by the SSRF guard: such a delivery fails permanently.
	IsRefused func(error) bool
	// Now and Random are the clock and the jitter's source; tests replace them.
	Now    func() time.Time
	Random func() float64
	Logger *slog.Logger
	// Metrics receives the engine's measurements; nil discards them.
	Metrics Metrics
	// Recorded, if set, is called after each batch of attempts is stored.
	Recorded func([]*webhooks.AttemptRecord)
}

// Engine claims due deliveries and attempts them.
type Engine struct {
	cfg      Config
	wake     chan struct{}
	records  chan *webhooks.AttemptRecord
	slots    chan struct{} // one per attempt in flight
	inflight sync.WaitGroup
}

// New returns an engine; Run starts it.
func New(cfg Config) *Engine {
	cfg.AttemptTimeout = cmp.Or(cfg.AttemptTimeout, DefaultAttemptTimeout)
	cfg.Concurrency = cmp.Or(cfg.Concurrency, DefaultConcurrency)
	cfg.PerEndpoint = cmp.Or(cfg.PerEndpoint, DefaultPerEndpoint)
	cfg.Lease = cmp.Or(cfg.Lease, cfg.AttemptTimeout+30*time.Second)
	cfg.PollInterval = cmp.Or(cfg.PollInterval, DefaultPollInterval)
	cfg.ShutdownGrace = cmp.Or(cfg.ShutdownGrace, cfg.AttemptTimeout+time.Second)
	if cfg.Policy.Waits == nil {
		cfg.Policy = webhooks.DefaultRetryPolicy()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Random == nil {
		cfg.Random = rand.Float64
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = nopMetrics{}
	}
	if cfg.IsRefused == nil {
		cfg.IsRefused = func(error) bool { return false }
	}
	if cfg.Client == nil {
		cfg.Client = NewClient(http.DefaultTransport)
	}
	if cfg.Lease <= cfg.AttemptTimeout {
		panic("delivery: Lease must exceed AttemptTimeout")
	}
	return &Engine{
		cfg:     cfg,
		wake:    make(chan struct{}, 1),
		records: make(chan *webhooks.AttemptRecord, cfg.Concurrency),
		slots:   make(chan struct{}, cfg.Concurrency),
	}
}

// Wake tells the engine that deliveries may be due now: it claims at once
// instead of waiting for its next poll. It never blocks.
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Run claims and attempts deliveries until ctx ends, then stops: it waits
// up to ShutdownGrace for the attempts in flight, aborts and hands back the
// rest, and stores every result it has.
func (e *Engine) Run(ctx context.Context) error {
	recorderDone := make(chan struct{})
	go func() {
		defer close(recorderDone)
		e.record()
	}()
	// Attempts outlive ctx: a SIGTERM lets them finish within the grace.
	attemptCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()

	e.dispatch(ctx, attemptCtx)

	done := make(chan struct{})
	go func() { e.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(e.cfg.ShutdownGrace):
		e.cfg.Logger.Warn("delivery: attempts still in flight after the shutdown grace; handing them back")
		abort()
		<-done
	}
	close(e.records)
	<-recorderDone
	return nil
}

// dispatch is the claim loop.
func (e *Engine) dispatch(ctx, attemptCtx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	backoff := 0 * time.Second
	for ctx.Err() == nil {
		free := cap(e.slots) - len(e.slots)
		full := false
		if free > 0 {
			n, err := e.claim(ctx, attemptCtx, min(free, DefaultBatchSize))
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				backoff = min(max(2*backoff, 50*time.Millisecond), 5*time.Second)
				e.cfg.Logger.Error("delivery: claim failed", "err", err, "retry_in", backoff)
				if !sleep(ctx, backoff) {
					return
				}
				continue
			}
			backoff = 0
			full = n == min(free, DefaultBatchSize)
		}
		if full {
			continue // there may be more due right now
		}
		wait := e.cfg.PollInterval
		if next, err := e.cfg.Store.NextScheduled(ctx, e.cfg.Now()); err == nil && !next.IsZero() {
			wait = min(wait, max(next.Sub(e.cfg.Now()), time.Millisecond))
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// claim claims up to limit due deliveries and starts their attempts.
func (e *Engine) claim(ctx, attemptCtx context.Context, limit int) (int, error) {
	now := e.cfg.Now()
	claims, err := e.cfg.Store.ClaimDeliveries(ctx, webhooks.ClaimRequest{
		Now:         now,
		Limit:       limit,
		Token:       webhooks.NewID(),
		LeaseUntil:  now.Add(e.cfg.Lease),
		PerEndpoint: e.cfg.PerEndpoint,
	})
	if err != nil {
		return 0, err
	}
	for _, c := range claims {
		e.slots <- struct{}{}
		e.inflight.Add(1)
		go func() {
			defer e.inflight.Done()
			e.finish(c, e.attempt(attemptCtx, c))
		}()
	}
	return len(claims), nil
}

// finish ends an attempt's slot and queues its record; an aborted attempt
// (nil record) hands its delivery back instead.
func (e *Engine) finish(c *webhooks.Claim, r *webhooks.AttemptRecord) {
	if r == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.cfg.Store.ReleaseClaims(ctx, c.Token, []string{c.Delivery.ID}); err != nil {
			e.cfg.Logger.Warn("delivery: hand back failed; the claim will lapse", "delivery_id", c.Delivery.ID, "err", err)
		}
	} else {
		e.records <- r
	}
	<-e.slots
}

// record stores results in batches: while one batch is written, the next
// gathers, so the batch size follows the load.
func (e *Engine) record() {
	batch := make([]*webhooks.AttemptRecord, 0, DefaultBatchSize)
	for r := range e.records {
		batch = append(batch[:0], r)
	drain:
		for len(batch) < cap(batch) {
			select {
			case r, ok := <-e.records:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		e.store(batch)
		e.Wake() // claims were released: endpoints at their cap may take more
	}
}

// store writes a batch, retrying until it is stored: the attempts were
// made, and losing their records would send them again after the lease.
func (e *Engine) store(batch []*webhooks.AttemptRecord) {
	backoff := 50 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := e.cfg.Store.RecordAttempts(ctx, batch)
		cancel()
		if err == nil {
			break
		}
		e.cfg.Logger.Error("delivery: storing attempts failed; retrying", "attempts", len(batch), "err", err, "retry_in", backoff)
		time.Sleep(backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
	for _, r := range batch {
		e.cfg.Metrics.Recorded(r)
	}
	if e.cfg.Recorded != nil {
		e.cfg.Recorded(append([]*webhooks.AttemptRecord(nil), batch...))
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
