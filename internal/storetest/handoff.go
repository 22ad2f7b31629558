package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// engine is a core.Engine that records what a store hands it; it leases
// while room is set.
type engine struct {
	mu     sync.Mutex
	room   bool
	leased int
	handed []*webhooks.Claim
	wakes  int
}

const engineToken = "storetest-engine"

func (e *engine) Lease(_ string, now time.Time) (string, time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.room {
		return "", time.Time{}, false
	}
	e.leased++
	return engineToken, now.Add(time.Minute), true
}

func (e *engine) Hand(claims []*webhooks.Claim) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.handed = append(e.handed, claims...)
}

func (e *engine) Unlease(ids []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.leased -= len(ids)
}

func (e *engine) Wake() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.wakes++
}

func (e *engine) HasRoom() bool                             { e.mu.Lock(); defer e.mu.Unlock(); return e.room }
func (e *engine) Pace(context.Context, bool, time.Duration) {}

// testHandOff: a store with an engine inserts a new delivery leased to it
// and hands it over once committed, where no claim finds it until the
// lease lapses and its record is taken; without room, the delivery waits
// for a claim and the engine is woken.
func testHandOff(t *testing.T, open func(t *testing.T) Store) {
	group(t, "HandOff", func(t *testing.T) {
		t.Run("Handed", func(t *testing.T) {
			s := setup(t, open)
			e := &engine{room: true}
			s.SetEngine(e)
			q := newQueue(s)
			d := q.add(t, q.endpoint(t), t0)
			e.mu.Lock()
			handed, leased, wakes := e.handed, e.leased, e.wakes
			e.mu.Unlock()
			if len(handed) != 1 || leased != 1 || handed[0].Delivery.ID != d.ID || handed[0].Token != engineToken ||
				handed[0].Endpoint == nil || handed[0].Endpoint.ID != d.EndpointID || handed[0].Endpoint.Secret == "" {
				t.Fatalf("handed %+v with %d leases; want the delivery's claim, with its endpoint and secret, and one lease", handed, leased)
			}
			if wakes != 0 {
				t.Errorf("the engine was woken %d times for a delivery it was handed", wakes)
			}
			if cs := q.claim(t, webhooks.ClaimRequest{Now: at(time.Second), Limit: 10}); len(cs) != 0 {
				t.Errorf("a claim took %d deliveries leased to the engine", len(cs))
			}
			now := at(2 * time.Second)
			if err := s.RecordAttempts(t.Context(), []*webhooks.AttemptRecord{NewRecord(handed[0], now, 204, delivered)}); err != nil {
				t.Fatal(err)
			}
			checkState(t, "the handed delivery", MustFindDelivery(t, s, d.ID), delivered, 1)
		})
		t.Run("Lapsed", func(t *testing.T) {
			s := setup(t, open)
			s.SetEngine(&engine{room: true})
			q := newQueue(s)
			d := q.add(t, q.endpoint(t), t0)
			checkClaims(t, "a claim after the lease lapsed", q.claim(t, webhooks.ClaimRequest{Now: at(2 * time.Minute), Limit: 10}), d)
		})
		t.Run("NoRoom", func(t *testing.T) {
			s := setup(t, open)
			e := &engine{}
			s.SetEngine(e)
			q := newQueue(s)
			d := q.add(t, q.endpoint(t), t0)
			e.mu.Lock()
			handed, wakes := len(e.handed), e.wakes
			e.mu.Unlock()
			if handed != 0 || wakes == 0 {
				t.Errorf("without room: %d handed, %d wakes; want none handed and a wake", handed, wakes)
			}
			checkClaims(t, "a claim", q.claim(t, webhooks.ClaimRequest{Now: at(time.Second), Limit: 10}), d)
		})
	})
}
