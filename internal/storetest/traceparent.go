package storetest

import (
	"sync"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// registeredTraceparent is the traceparent of a registration's span, as
// the tracing stores it with the event.
const registeredTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// testTraceparents: an event's traceparent comes back with its deliveries'
// claims when the claim asks for it (tracing on), from the delivery's own
// row and after a retry, and with the claims a store hands its engine;
// an event registered without one, and a claim that does not ask, carry
// none.
func testTraceparents(t *testing.T, open func(t *testing.T) Store) {
	group(t, "Traceparents", func(t *testing.T) {
		t.Run("Claimed", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			ep := q.endpoint(t)
			traced, untraced := registerTraced(t, s, ep, 4)
			byID := claimTraceparents(q.claim(t, webhooks.ClaimRequest{Now: at(time.Second), Limit: 10, Traceparents: true}))
			checkTraceparents(t, "a claim that asks", byID, traced, untraced)

			// Without asking (tracing off), once the leases lapsed.
			byID = claimTraceparents(q.claim(t, webhooks.ClaimRequest{Now: at(2 * time.Minute), Limit: 10}))
			if len(byID) != len(traced)+len(untraced) {
				t.Errorf("a claim that does not ask: got %d claims, want %d", len(byID), len(traced)+len(untraced))
			}
			for id, tp := range byID {
				if tp != "" {
					t.Errorf("a claim that does not ask: delivery %s has traceparent %q", id, tp)
				}
			}

			// A retry by hand is the same event's: its claim links to the
			// registration still.
			now := at(5 * time.Minute)
			MustFailPermanently(t, s, traced[0].ID, now)
			if _, err := retryDelivery(t, s, traced[0].ID, now); err != nil {
				t.Fatalf("RetryDelivery: %v", err)
			}
			byID = claimTraceparents(q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10, Traceparents: true}))
			if got, ok := byID[traced[0].ID]; !ok || got != registeredTraceparent {
				t.Errorf("the retry's claim: got %q (claimed %t), want the registration's traceparent", got, ok)
			}
		})
		t.Run("Handed", func(t *testing.T) {
			s := setup(t, open)
			e := &engine{room: true}
			s.SetEngine(e)
			q := newQueue(s)
			traced, untraced := registerTraced(t, s, q.endpoint(t), 4)
			e.mu.Lock()
			byID := claimTraceparents(e.handed)
			e.mu.Unlock()
			checkTraceparents(t, "the claims handed over", byID, traced, untraced)
		})
	})
}

// registerTraced registers n events at once (so that a store may write
// them in one group), every other one with registeredTraceparent, and
// returns their deliveries to ep: those of the events with a traceparent
// and those without.
func registerTraced(t *testing.T, s Store, ep *webhooks.Endpoint, n int) (traced, untraced []*webhooks.Delivery) {
	t.Helper()
	ds := make([][]*webhooks.Delivery, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		ev := NewAccountEvent(t, "account.updated", ep.AccountID, t0)
		if i%2 == 0 {
			ev.Traceparent = registeredTraceparent
		}
		wg.Go(func() { _, ds[i], _, errs[i] = s.RegisterEvent(t.Context(), ev, nil) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || len(ds[i]) != 1 || ds[i][0].EndpointID != ep.ID {
			t.Fatalf("RegisterEvent: got deliveries to %v, %v; want one to %s", deliveryEndpoints(ds[i]), errs[i], ep.ID)
		}
		if d := ds[i][0]; i%2 == 0 {
			traced = append(traced, d)
		} else {
			untraced = append(untraced, d)
		}
	}
	return traced, untraced
}

// claimTraceparents maps each claim's delivery to its traceparent.
func claimTraceparents(claims []*webhooks.Claim) map[string]string {
	m := map[string]string{}
	for _, c := range claims {
		m[c.Delivery.ID] = c.Traceparent
	}
	return m
}

// checkTraceparents checks that byID has every delivery, with
// registeredTraceparent for those traced and none for the others.
func checkTraceparents(t *testing.T, name string, byID map[string]string, traced, untraced []*webhooks.Delivery) {
	t.Helper()
	if len(byID) != len(traced)+len(untraced) {
		t.Errorf("%s: got %d claims, want %d", name, len(byID), len(traced)+len(untraced))
	}
	for _, d := range traced {
		if got, ok := byID[d.ID]; !ok || got != registeredTraceparent {
			t.Errorf("%s: delivery %s of an event with a traceparent: got %q (claimed %t), want %q", name, d.ID, got, ok, registeredTraceparent)
		}
	}
	for _, d := range untraced {
		if got, ok := byID[d.ID]; !ok || got != "" {
			t.Errorf("%s: delivery %s of an event without one: got %q (claimed %t), want none", name, d.ID, got, ok)
		}
	}
}
