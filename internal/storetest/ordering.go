package storetest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// testOrdering: an ordered endpoint gets the deliveries of events that
// share an ordering key one at a time, in registration order (SPEC 18);
// the others wait behind, naming the one they wait for, and only that key
// waits.
func testOrdering(t *testing.T, open func(t *testing.T) Store) {
	group(t, "Ordering", func(t *testing.T) {
		t.Run("OneAtATimePerKey", func(t *testing.T) {
			s := setup(t, open)
			o := newOrdered(t, s, true)
			k1, k2 := o.add(t, "inv_1", 0), o.add(t, "inv_1", 1)
			k3 := o.add(t, "inv_1", 2)
			other := o.add(t, "inv_2", 3)
			keyless := o.add(t, "", 4)
			o.checkWaiting(t, "registered", map[*webhooks.Delivery]*webhooks.Delivery{k1: nil, k2: k1, k3: k2, other: nil, keyless: nil})
			now := at(time.Minute)
			claims := MustClaim(t, s, now, 100)
			checkClaimsAnyOrder(t, "the first claim", claims, k1, other, keyless)
			// A failure keeps the key's next waiting: only that key.
			MustRecord(t, s, NewRecord(claimOf(t, claims, k1), now, 503, retryAt(at(time.Hour))))
			MustRecord(t, s, NewRecord(claimOf(t, claims, other), now, 200, delivered))
			MustRecord(t, s, NewRecord(claimOf(t, claims, keyless), now, 200, delivered))
			checkClaims(t, "after the head failed", MustClaim(t, s, at(2*time.Minute), 100))
			o.checkWaiting(t, "after the head failed", map[*webhooks.Delivery]*webhooks.Delivery{k2: k1, k3: k2})
			// The head delivered: the next one goes, and the one after
			// waits behind it.
			c := MustClaimOne(t, s, k1.ID, at(time.Hour))
			MustRecord(t, s, NewRecord(c, at(time.Hour), 200, delivered))
			o.checkWaiting(t, "after the head was delivered", map[*webhooks.Delivery]*webhooks.Delivery{k2: nil, k3: k2})
			checkClaims(t, "after the head was delivered", MustClaim(t, s, at(time.Hour), 100), k2)
		})

		t.Run("FailedPermanentlyReleasesTheNext", func(t *testing.T) {
			s := setup(t, open)
			o := newOrdered(t, s, true)
			first, second := o.add(t, "inv_1", 0), o.add(t, "inv_1", 1)
			c := MustClaimOne(t, s, first.ID, at(time.Minute))
			MustRecord(t, s, NewRecord(c, at(time.Minute), 422, failedPermanently))
			o.checkWaiting(t, "after the head failed permanently", map[*webhooks.Delivery]*webhooks.Delivery{second: nil})
			checkClaims(t, "after the head failed permanently", MustClaim(t, s, at(time.Minute), 100), second)
		})

		// An endpoint that does not ask for order, and events without a
		// key, pay nothing for it: every delivery is due at once.
		t.Run("UnorderedEndpoint", func(t *testing.T) {
			s := setup(t, open)
			o := newOrdered(t, s, false)
			a, b := o.add(t, "inv_1", 0), o.add(t, "inv_1", 1)
			o.checkWaiting(t, "registered", map[*webhooks.Delivery]*webhooks.Delivery{a: nil, b: nil})
			checkClaimsAnyOrder(t, "claim", MustClaim(t, s, at(time.Minute), 100), a, b)
		})

		// A retry by hand goes at once, whatever the order; what waits
		// behind the chain's head goes on waiting for it.
		t.Run("ManualRetryGoesAtOnce", func(t *testing.T) {
			s := setup(t, open)
			o := newOrdered(t, s, true)
			first, second := o.add(t, "inv_1", 0), o.add(t, "inv_1", 1)
			third := o.add(t, "inv_1", 2)
			c := MustClaimOne(t, s, first.ID, at(time.Minute))
			MustRecord(t, s, NewRecord(c, at(time.Minute), 422, failedPermanently))
			// second is the head now; first is sent again by hand.
			if _, err := retryDelivery(t, s, first.ID, at(2*time.Minute)); err != nil {
				t.Fatal(err)
			}
			o.checkWaiting(t, "after the retry", map[*webhooks.Delivery]*webhooks.Delivery{first: nil, second: nil, third: second})
			checkClaimsAnyOrder(t, "after the retry", MustClaim(t, s, at(2*time.Minute), 100), first, second)
		})

		// A disable ends the chain; recover sends it again in registration
		// order, one at a time.
		t.Run("RecoverInOrder", func(t *testing.T) {
			for _, scope := range []webhooks.Scope{webhooks.ScopeAccount, webhooks.ScopeCompany} {
				t.Run(string(scope), func(t *testing.T) {
					s := setup(t, open)
					o := newOrderedScope(t, s, true, scope)
					ds := []*webhooks.Delivery{o.add(t, "inv_1", 0), o.add(t, "inv_1", 1), o.add(t, "inv_1", 2), o.add(t, "inv_2", 3)}
					disable(t, s, o.ep.ID, at(time.Minute))
					for _, d := range ds {
						if got := MustFindDelivery(t, s, d.ID); got.Status != webhooks.DeliveryFailed || got.WaitingFor != "" {
							t.Fatalf("after the disable: %s is %s waiting for %q, want failed waiting for none", d.ID, got.Status, got.WaitingFor)
						}
					}
					enabled := webhooks.EndpointEnabled
					if _, err := updateEndpoint(t, s, o.ep.ID, &webhooks.EndpointUpdate{Status: &enabled}, at(2*time.Minute)); err != nil {
						t.Fatal(err)
					}
					if n, err := recoverRange(t, s, o.ep.ID, t0, at(time.Hour), at(3*time.Minute)); err != nil || n != 4 {
						t.Fatalf("recover: %d, %v; want 4", n, err)
					}
					sent := o.pending(t)
					if len(sent) != 4 {
						t.Fatalf("pending after the recovery: %d, want 4", len(sent))
					}
					// Oldest first: each key's first goes, the rest wait in
					// registration order.
					slices.SortFunc(sent, func(a, b *webhooks.Delivery) int { return a.Created.Compare(b.Created) })
					byEvent := map[string]*webhooks.Delivery{}
					for _, d := range sent {
						byEvent[d.EventID] = d
					}
					r := func(i int) *webhooks.Delivery { return byEvent[ds[i].EventID] }
					for i, want := range []*webhooks.Delivery{nil, r(0), r(1), nil} {
						got := r(i)
						if w := ""; want != nil {
							w = want.ID
							if got.WaitingFor != w {
								t.Errorf("recovered %d waits for %q, want %q", i, got.WaitingFor, w)
							}
						} else if got.WaitingFor != "" {
							t.Errorf("recovered %d waits for %q, want none", i, got.WaitingFor)
						}
					}
					checkClaimsAnyOrder(t, "after the recovery", MustClaim(t, s, at(3*time.Minute), 100), r(0), r(3))
				})
			}
		})

		// What waits is not handed to the engine at registration.
		t.Run("HandOffSkipsWaiting", func(t *testing.T) {
			s := setup(t, open)
			e := &engine{room: true}
			s.SetEngine(e)
			o := newOrdered(t, s, true)
			first, second := o.add(t, "inv_1", 0), o.add(t, "inv_1", 1)
			e.mu.Lock()
			handed := claimIDs(e.handed)
			e.mu.Unlock()
			if !slices.Equal(handed, []string{first.ID}) {
				t.Errorf("handed %v, want the head %s alone (not %s, which waits)", handed, first.ID, second.ID)
			}
		})

		// A batch's items of one key are in the batch's order.
		// An erased event's pending delivery ends failed: the next of its
		// key, another event's, goes (SPEC 19 beside SPEC 18). So does
		// the next after a company's deletion, on an account endpoint
		// whose key the deleted company's events shared with another's.
		t.Run("ErasedHeadReleasesTheNext", func(t *testing.T) {
			s := setup(t, open)
			o := newOrdered(t, s, true)
			head, next := o.add(t, "inv_1", 0), o.add(t, "inv_1", 1)
			o.checkWaiting(t, "registered", map[*webhooks.Delivery]*webhooks.Delivery{head: nil, next: head})
			if _, err := UseCases(s, at(time.Minute)).EraseEvent(t.Context(), admin, head.EventID); err != nil {
				t.Fatal(err)
			}
			o.checkWaiting(t, "after the head's event was erased", map[*webhooks.Delivery]*webhooks.Delivery{head: nil, next: nil})
			checkClaims(t, "after the head's event was erased", MustClaim(t, s, at(time.Minute), 100), next)
		})

		t.Run("DeletedCompanyReleasesTheNext", func(t *testing.T) {
			s := setup(t, open)
			o := newOrdered(t, s, true)
			gone := MustCreateCompany(t, s, o.account)
			stays := MustCreateCompany(t, s, o.account)
			add := func(co *webhooks.Company, i int) *webhooks.Delivery {
				ev := NewEvent(t, "invoice.sent", co.ID, at(time.Duration(i)*time.Second))
				ev.OrderingKey = "shared"
				return MustRegisterOne(t, s, ev, o.ep.ID)
			}
			head, next := add(gone, 0), add(stays, 1)
			o.checkWaiting(t, "registered", map[*webhooks.Delivery]*webhooks.Delivery{head: nil, next: head})
			uc := UseCases(s, at(time.Minute))
			if err := uc.DeleteCompany(t.Context(), admin, gone.ID); err != nil {
				t.Fatal(err)
			}
			for more := true; more; {
				var err error
				if more, err = uc.EraseNext(t.Context(), 10); err != nil {
					t.Fatal(err)
				}
			}
			if got := MustFindDelivery(t, s, head.ID); got.Status != webhooks.DeliveryFailed {
				t.Errorf("the deleted company's delivery: %s, want failed", got.Status)
			}
			o.checkWaiting(t, "after the company's deletion", map[*webhooks.Delivery]*webhooks.Delivery{next: nil})
			checkClaims(t, "after the company's deletion", MustClaim(t, s, at(time.Minute), 100), next)
		})

		t.Run("BatchInOrder", func(t *testing.T) {
			s := setup(t, open)
			o := newOrdered(t, s, true)
			var in []app.EventInput
			for range 5 {
				in = append(in, app.EventInput{Type: "account.updated", AccountID: o.account, OrderingKey: "inv_1",
					Object: json.RawMessage(`{"object":"account"}`)})
			}
			out, err := UseCases(s, t0).RegisterEvents(t.Context(), admin, in)
			if err != nil {
				t.Fatal(err)
			}
			var prev string
			for i, r := range out {
				if r.Err != nil {
					t.Fatalf("item %d: %v", i, r.Err)
				}
				ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: o.ep.ID, EventID: r.Event.ID})
				if len(ds) != 1 || ds[0].WaitingFor != prev {
					t.Fatalf("item %d waits for %q, want %q (the item before it)", i, ds[0].WaitingFor, prev)
				}
				prev = ds[0].ID
			}
		})
	})
}

// ordered is an account endpoint that takes every event (ordered or not),
// and the events added to it.
type ordered struct {
	s       Store
	account string
	ep      *webhooks.Endpoint
	added   []*webhooks.Delivery
}

func newOrdered(tb testing.TB, s Store, order bool) *ordered {
	return newOrderedScope(tb, s, order, webhooks.ScopeAccount)
}

func newOrderedScope(tb testing.TB, s Store, order bool, scope webhooks.Scope) *ordered {
	tb.Helper()
	a := MustCreateAccount(tb, s, "")
	o := &ordered{s: s, account: a.ID}
	e := NewAccountEndpoint(a.ID, nil, "*")
	if scope == webhooks.ScopeCompany {
		e = NewCompanyEndpoint(MustCreateCompany(tb, s, a.ID).ID, "*")
	}
	e.Ordered = order
	o.ep = MustCreateEndpoint(tb, s, e)
	if o.ep.Ordered != order {
		tb.Fatalf("created endpoint: ordered %t, want %t", o.ep.Ordered, order)
	}
	return o
}

// add registers an event with the ordering key, created at t0 plus i
// seconds, and returns its delivery to the endpoint.
func (o *ordered) add(tb testing.TB, key string, i int) *webhooks.Delivery {
	tb.Helper()
	var ev *webhooks.Event
	if o.ep.Scope == webhooks.ScopeCompany {
		ev = NewEvent(tb, "invoice.sent", o.ep.CompanyID, at(time.Duration(i)*time.Second))
	} else {
		ev = NewAccountEvent(tb, "account.updated", o.account, at(time.Duration(i)*time.Second))
	}
	ev.OrderingKey = key
	d := MustRegisterOne(tb, o.s, ev, o.ep.ID)
	if got := MustFindEvent(tb, o.s, ev.ID); got.OrderingKey != key {
		tb.Fatalf("stored event: ordering key %q, want %q", got.OrderingKey, key)
	}
	o.added = append(o.added, d)
	return d
}

// pending returns the endpoint's pending deliveries.
func (o *ordered) pending(tb testing.TB) []*webhooks.Delivery {
	tb.Helper()
	return MustListDeliveries(tb, o.s, webhooks.DeliveryFilter{EndpointID: o.ep.ID, Status: webhooks.DeliveryPending})
}

// checkWaiting reports a delivery that does not wait for the one want
// says (nil: none), as stored.
func (o *ordered) checkWaiting(tb testing.TB, when string, want map[*webhooks.Delivery]*webhooks.Delivery) {
	tb.Helper()
	for d, behind := range want {
		w := ""
		if behind != nil {
			w = behind.ID
		}
		if got := MustFindDelivery(tb, o.s, d.ID).WaitingFor; got != w {
			tb.Errorf("%s: %s waits for %q, want %q", when, d.ID, got, w)
		}
	}
}

// claimOf returns the claim of d among claims.
func claimOf(tb testing.TB, claims []*webhooks.Claim, d *webhooks.Delivery) *webhooks.Claim {
	tb.Helper()
	for _, c := range claims {
		if c.Delivery.ID == d.ID {
			return c
		}
	}
	tb.Fatalf("no claim of %s", d.ID)
	return nil
}
