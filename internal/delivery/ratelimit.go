package delivery

import (
	"context"
	"sync"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Limiter spaces the attempts to an endpoint with a rate limit (SPEC 14):
// at most perSecond starts in any one-second window, as the receiver sees
// them. Reserve takes the next start time for one attempt: ok with the
// start (not before now) when it is within `within` of now; otherwise not
// ok and nothing taken, with the earliest start there would be, for the
// engine to hand the delivery back until about then. A PostgreSQL store
// implements it for every process on the database; the engine's own
// in-process limiter serves the one process on SQLite.
type Limiter interface {
	Reserve(ctx context.Context, endpointID string, perSecond int, now time.Time, within time.Duration) (start time.Time, ok bool, err error)
}

// localLimiter is the Limiter of one process: each endpoint's next free
// start, in memory.
type localLimiter struct {
	mu   sync.Mutex
	next map[string]time.Time
}

func newLocalLimiter() *localLimiter { return &localLimiter{next: map[string]time.Time{}} }

func (l *localLimiter) Reserve(_ context.Context, endpointID string, perSecond int, now time.Time, within time.Duration) (time.Time, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := later(l.next[endpointID], now)
	if start.Sub(now) > within {
		return start, false, nil
	}
	l.next[endpointID] = start.Add(webhooks.RateInterval(perSecond))
	if len(l.next) > 100000 {
		l.forget(now)
	}
	return start, true, nil
}

// forget drops the endpoints whose next start is past: they are free.
func (l *localLimiter) forget(now time.Time) {
	for id, t := range l.next {
		if t.Before(now) {
			delete(l.next, id)
		}
	}
}

// throttle waits for the rate-limited endpoint's next start, if it is near
// enough, and reports true; or reports false with when to try again: the
// delivery goes back to the queue until then, pending, and no attempt is
// recorded. Deliveries handed back for one endpoint are spread one
// interval apart, so that they come back about as fast as they can go.
func (e *Engine) throttle(ctx context.Context, c *webhooks.Claim) (bool, time.Time) {
	ep := c.Endpoint
	for try := 0; ; try++ {
		now := e.cfg.Now()
		start, ok, err := e.cfg.Limiter.Reserve(ctx, ep.ID, ep.RateLimit, now, e.throttleWithin())
		if err != nil {
			// The shared limiter does not answer: hand the delivery back
			// shortly rather than send past the limit.
			e.cfg.Logger.Warn("delivery: rate limit not available; handing the delivery back", "endpoint_id", ep.ID, "err", err)
			return false, now.Add(time.Second)
		}
		if !ok || try == 3 {
			e.cfg.Metrics.Throttled(false)
			return false, e.deferrals.next(ep.ID, start, webhooks.RateInterval(ep.RateLimit))
		}
		if wait := start.Sub(now); wait > 0 {
			e.waiting.Add(1)
			e.cfg.Metrics.Waiting(int(e.waiting.Load()))
			slept := sleep(ctx, wait)
			e.cfg.Metrics.Waiting(int(e.waiting.Add(-1)))
			if !slept {
				return false, now // shutdown: handed back, as aborted
			}
		}
		// Woken too late, the attempt would crowd the next ones at the
		// receiver: it takes a later start instead (the missed one is a
		// gap, which only slows the endpoint a little).
		if e.cfg.Now().Sub(start) <= webhooks.RateLateness {
			e.cfg.Metrics.Throttled(true)
			return true, time.Time{}
		}
	}
}

// throttleWithin is how long an attempt may wait for its slot while it
// holds its claim: well inside the lease, which must not lapse meanwhile.
func (e *Engine) throttleWithin() time.Duration {
	return min(5*time.Second, max(e.cfg.Lease-e.cfg.AttemptTimeout-10*time.Second, time.Second))
}

// deferrals spreads the deliveries an engine hands back for a rate limit.
type deferrals struct {
	mu      sync.Mutex
	horizon map[string]time.Time
}

// next returns when a delivery of endpoint id, which could start at
// earliest, comes back: after the ones already handed back.
func (d *deferrals) next(id string, earliest time.Time, interval time.Duration) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.horizon == nil {
		d.horizon = map[string]time.Time{}
	}
	t := later(d.horizon[id], earliest)
	d.horizon[id] = t.Add(interval)
	if len(d.horizon) > 100000 {
		clear(d.horizon)
	}
	return t
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
