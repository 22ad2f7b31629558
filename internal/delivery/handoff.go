package delivery

import (
	"context"
	"sync"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// slots counts, per endpoint, the engine's claims (its own, and the
// leases a store took for it as it registered deliveries: see Lease) two
// ways. held counts a claim until its record is stored, as the database
// does (its count of unexpired leases is what ClaimDeliveries caps);
// active counts it until its attempt ends, which is what the cap is for:
// the requests one endpoint has in flight. A lease is taken within the
// active count, so a receiver that answers fast gets its next delivery
// without waiting for the last one's record to be written: with the
// held count, one endpoint's rate was its cap over the time from an
// attempt's start to its record's commit: about 3,000 deliveries/s at a
// cap of 64 on the benchmark's machine, behind registrations on the one
// SQLite writer.
type slots struct {
	mu     sync.Mutex
	held   map[string]int
	active map[string]int
}

func newSlots() slots {
	return slots{held: map[string]int{}, active: map[string]int{}}
}

// take takes a slot of endpoint unless it has limit attempts in flight.
func (s *slots) take(endpoint string, limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if limit > 0 && s.active[endpoint] >= limit {
		return false
	}
	s.held[endpoint]++
	s.active[endpoint]++
	return true
}

// add takes a slot of endpoint whatever the count (a claim's, which the
// database capped).
func (s *slots) add(endpoint string) {
	s.mu.Lock()
	s.held[endpoint]++
	s.active[endpoint]++
	s.mu.Unlock()
}

// over reports whether endpoint has more than limit attempts in flight.
func (s *slots) over(endpoint string, limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return limit > 0 && s.active[endpoint] > limit
}

// ended counts an attempt to endpoint as ended.
func (s *slots) ended(endpoint string) {
	s.mu.Lock()
	decrement(s.active, endpoint)
	s.mu.Unlock()
}

// free gives back a slot of endpoint whose attempt ended.
func (s *slots) free(endpoint string) {
	s.mu.Lock()
	decrement(s.held, endpoint)
	s.mu.Unlock()
}

func decrement(m map[string]int, key string) {
	if m[key] <= 1 {
		delete(m, key)
	} else {
		m[key]--
	}
}

// Lease implements queue.Engine: it takes one of the engine's Concurrency
// slots and one of the endpoint's PerEndpoint, for a delivery the caller
// inserts leased with the token until the returned time. The caller then
// calls Hand once the insert committed, or Unlease.
//
// The per-endpoint count is this engine's attempts in flight (see slots),
// which include its claims' (ClaimRequest.Hold): with one process, no
// attempt to the endpoint escapes it. On a database that several processes
// share, an attempt also takes a slot of the cluster's semaphore before it
// starts (Config.Slots).
func (e *Engine) Lease(endpointID string, now time.Time) (string, time.Time, bool) {
	if !e.running.Load() {
		return "", time.Time{}, false
	}
	for {
		n := e.inflight.Load()
		if n+e.unstored.Load() >= int64(e.cfg.Concurrency) {
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

// Unlease implements queue.Engine.
func (e *Engine) Unlease(endpointIDs []string) {
	for _, id := range endpointIDs {
		e.slots.ended(id)
		e.slots.free(id)
		e.inflight.Add(-1)
	}
}

// Hand implements queue.Engine. It never blocks: the handed channel has room
// for every slot.
func (e *Engine) Hand(claims []*webhooks.Claim) {
	if len(claims) > 0 {
		e.handed <- claims
	}
}

// progress is closed, and replaced, each time the dispatcher stores
// records (see Pace).
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

// Pace implements queue.Engine.
func (e *Engine) Pace(ctx context.Context, full bool, max time.Duration) {
	if !e.running.Load() {
		return
	}
	next := e.progress.wait() // before the check: a store after it signals next
	if !full && !e.storing.Load() {
		return
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-next:
	case <-t.C:
	case <-ctx.Done():
	}
}
