package storetest

import (
	"sync"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// The service calls a store from many goroutines (API handlers, delivery
// workers) and, on PostgreSQL, from many processes: these tests call it at
// once from several goroutines.
func testConcurrency(t *testing.T, open func(t *testing.T) Store) {
	group(t, "Concurrency", func(t *testing.T) {
		// A delivery is read in one snapshot: its attempt_count and the
		// attempts listed with it agree while attempts are recorded.
		t.Run("FindDelivery", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			d := q.add(t, q.endpoint(t), t0)
			const attempts = 150
			done, stop := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				for n := range attempts {
					select {
					case <-stop:
						return
					default:
					}
					now := at(time.Duration(n) * time.Second)
					claims, err := s.ClaimDeliveries(t.Context(), webhooks.ClaimRequest{Now: now, Limit: 1, Token: webhooks.NewID(), LeaseUntil: now.Add(time.Minute)})
					if err != nil || len(claims) != 1 {
						t.Errorf("ClaimDeliveries: got %d claims, %v; want the delivery", len(claims), err)
						return
					}
					if err := s.RecordAttempts(t.Context(), []*webhooks.AttemptRecord{NewRecord(claims[0], now, 503, retryAt(now.Add(time.Second)))}); err != nil {
						t.Errorf("RecordAttempts: %v", err)
						return
					}
				}
			}()
			defer func() { close(stop); <-done }()
			for reading := true; reading; {
				select {
				case <-done:
					reading = false
				default:
				}
				got, err := s.FindDelivery(t.Context(), d.ID)
				if err != nil {
					t.Fatalf("FindDelivery: %v", err)
				}
				if got.AttemptCount != len(got.Attempts) {
					t.Fatalf("FindDelivery: attempt_count %d with %d attempts listed, want them equal", got.AttemptCount, len(got.Attempts))
				}
			}
		})

		// Workers claiming at once never claim one delivery twice.
		t.Run("ClaimDeliveries", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			want := map[string]bool{}
			for i := range 3 {
				e := q.endpoint(t)
				for j := range 4 {
					want[q.add(t, e, at(time.Duration(i*4+j)*time.Second)).ID] = true
				}
			}
			var mu sync.Mutex
			claimed := map[string]int{}
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for {
						now := at(time.Minute)
						claims, err := s.ClaimDeliveries(t.Context(), webhooks.ClaimRequest{
							Now: now, Limit: 2, Token: webhooks.NewID(), LeaseUntil: now.Add(time.Minute),
						})
						if err != nil {
							t.Errorf("ClaimDeliveries: %v", err)
							return
						}
						if len(claims) == 0 {
							return
						}
						mu.Lock()
						for _, c := range claims {
							claimed[c.Delivery.ID]++
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			for id, n := range claimed {
				if n != 1 || !want[id] {
					t.Errorf("delivery %s: claimed %d times (one of ours: %t), want once", id, n, want[id])
				}
			}
			if len(claimed) != len(want) {
				t.Errorf("claimed %d deliveries, want %d", len(claimed), len(want))
			}
		})

		// Producers retrying at once with one Idempotency-Key register one
		// event, and all get it.
		t.Run("IdempotencyKey", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			const n = 4
			events := make([]*webhooks.Event, n)
			for i := range n {
				events[i] = NewEvent(t, "invoice.sent", c.ID, at(time.Minute))
			}
			got := make([]string, n)
			created := make([]bool, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					key := &webhooks.IdempotencyKey{Key: "same", RequestHash: []byte("same request"), Created: at(time.Minute)}
					ev, _, ok, err := s.RegisterEvent(t.Context(), events[i], key)
					if err != nil {
						t.Errorf("RegisterEvent %d: %v", i, err)
						return
					}
					got[i], created[i] = ev.ID, ok
				})
			}
			wg.Wait()
			first := -1
			for i := range n {
				if created[i] {
					if first >= 0 {
						t.Errorf("requests %d and %d both created an event", first, i)
					}
					first = i
				}
			}
			if first < 0 {
				t.Fatalf("no request created the event")
			}
			for i := range n {
				if got[i] != events[first].ID {
					t.Errorf("request %d: got event %s, want %s", i, got[i], events[first].ID)
				}
			}
			if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: e.ID}); len(ds) != 1 {
				t.Errorf("deliveries: got %d, want 1", len(ds))
			}
		})

		// Registrations at once are each their own transaction: a refused
		// one does not undo the others.
		t.Run("RegisterEvent", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			const n = 6
			events := make([]*webhooks.Event, n)
			for i := range n {
				company := c.ID
				if i == n/2 {
					company = webhooks.NewID()
				}
				events[i] = NewEvent(t, "invoice.sent", company, at(time.Duration(i)*time.Second))
			}
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { _, _, _, errs[i] = s.RegisterEvent(t.Context(), events[i], nil) })
			}
			wg.Wait()
			for i, err := range errs {
				if i == n/2 {
					checkCode(t, "the event of an unknown company", err, webhooks.EUNKNOWNCOMPANY)
					continue
				}
				if err != nil {
					t.Errorf("RegisterEvent %d: %v", i, err)
					continue
				}
				MustFindEvent(t, s, events[i].ID)
			}
			if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: e.ID}); len(ds) != n-1 {
				t.Errorf("deliveries: got %d, want %d", len(ds), n-1)
			}
		})
	})
}
