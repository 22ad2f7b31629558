package storetest

import (
	"net/http"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func testMaintenance(t *testing.T, open func(t *testing.T) Store) {
	group(t, "QueueStats", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			a, b := q.endpoint(t), q.endpoint(t)
			st, err := s.QueueStats(t.Context(), t0)
			if err != nil || st.Due != 0 || !st.OldestDue.IsZero() || st.InFlight != 0 || st.Failing != 0 || len(st.Disabled) != 0 {
				t.Fatalf("empty: got %+v, %v; want zero", st, err)
			}
			d1 := q.add(t, a, at(time.Second))
			q.add(t, a, at(2*time.Second))
			q.add(t, b, at(3*time.Second))
			q.add(t, b, at(time.Hour)) // not due yet
			now := at(time.Minute)
			check := func(name string, due int, oldest time.Time, inFlight int) {
				t.Helper()
				st, err := s.QueueStats(t.Context(), now)
				if err != nil {
					t.Fatalf("%s: QueueStats: %v", name, err)
				}
				if st.Due != due || !st.OldestDue.Equal(oldest) || st.InFlight != inFlight {
					t.Errorf("%s: got %+v, want due %d oldest %s in flight %d", name, st, due, oldest, inFlight)
				}
			}
			check("three due", 3, d1.NextAttemptAt, 0)
			// With a cap of 1, one of a's is claimed and the other parked:
			// still due, not started.
			claims := q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10, PerEndpoint: 1})
			if len(claims) != 2 {
				t.Fatalf("claimed %d, want 2", len(claims))
			}
			check("two claimed", 1, at(2*time.Second), 2)
			MustRecord(t, s, NewRecord(claims[0], now, http.StatusOK, delivered))
			check("one recorded", 1, at(2*time.Second), 1)
		})
	})

	group(t, "Purge", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e := q.endpoint(t)
			old1 := q.add(t, e, t0)
			pending := q.add(t, e, at(2*time.Second))
			recent := q.add(t, e, at(10*day))
			now := at(100 * day)
			c := MustClaimOne(t, s, old1.ID, at(time.Minute))
			MustRecord(t, s, NewRecord(c, at(time.Minute), http.StatusOK, delivered))
			c = MustClaimOne(t, s, recent.ID, at(10*day+time.Minute))
			MustRecord(t, s, NewRecord(c, at(10*day+time.Minute), http.StatusGone, failedPermanently))
			// An old company event whose delivery failed and was replayed:
			// the replay refers to the original, and both go.
			co := MustCreateCompany(t, s, MustCreateAccount(t, s, "").ID)
			ce := MustCreateEndpoint(t, s, NewCompanyEndpoint(co.ID, "*"))
			old2 := MustRegisterOne(t, s, NewEvent(t, "invoice.sent", co.ID, at(time.Second)), ce.ID)
			MustFailPermanently(t, s, old2.ID, at(2*time.Minute))
			r, err := replayDelivery(t, s, old2.ID, at(3*time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			c = MustClaimOne(t, s, r.ID, at(3*time.Minute))
			MustRecord(t, s, NewRecord(c, at(3*time.Minute), http.StatusOK, delivered))

			before := at(5 * day)
			if n, err := s.Purge(t.Context(), before, now, 1); err != nil || n != 1 {
				t.Fatalf("Purge with limit 1: got %d, %v; want 1", n, err)
			}
			if n, err := s.Purge(t.Context(), before, now, 10); err != nil || n != 1 {
				t.Fatalf("Purge again: got %d, %v; want 1", n, err)
			}
			if n, err := s.Purge(t.Context(), before, now, 10); err != nil || n != 0 {
				t.Fatalf("Purge a third time: got %d, %v; want 0", n, err)
			}
			for _, d := range []*webhooks.Delivery{old1, old2, r} {
				if _, err := s.FindDelivery(t.Context(), d.ID); webhooks.ErrorCode(err) != webhooks.ENOTFOUND {
					t.Errorf("purged delivery %s: got %v, want ENOTFOUND", d.ID, err)
				}
				if _, err := s.FindEvent(t.Context(), d.EventID); webhooks.ErrorCode(err) != webhooks.ENOTFOUND {
					t.Errorf("purged event %s: got %v, want ENOTFOUND", d.EventID, err)
				}
			}
			// A pending delivery may still be attempted: its event stays,
			// however old.
			if got := MustFindDelivery(t, s, pending.ID); got.Status != webhooks.DeliveryPending {
				t.Errorf("pending delivery after purge: %s", got.Status)
			}
			MustFindEvent(t, s, pending.EventID)
			MustFindDelivery(t, s, recent.ID)
		})

		t.Run("IdempotencyKeys", func(t *testing.T) {
			s := setup(t, open)
			c := MustCreateCompany(t, s, MustCreateAccount(t, s, "").ID)
			ev := NewEvent(t, "invoice.sent", c.ID, t0)
			key := &webhooks.IdempotencyKey{Key: "k-" + nextSerial(), RequestHash: []byte("h"), Created: t0}
			if _, _, _, err := s.RegisterEvent(t.Context(), ev, key); err != nil {
				t.Fatal(err)
			}
			// The event is recent enough to keep; the key is not.
			if _, err := s.Purge(t.Context(), t0.Add(-day), t0.Add(webhooks.IdempotencyWindow+time.Minute), 10); err != nil {
				t.Fatal(err)
			}
			MustFindEvent(t, s, ev.ID)
			// The key is forgotten: the same key with another request is a
			// new event, not a conflict.
			again := NewEvent(t, "invoice.paid", c.ID, t0.Add(webhooks.IdempotencyWindow/2))
			key2 := &webhooks.IdempotencyKey{Key: key.Key, RequestHash: []byte("other"), Created: again.Created}
			got, _, created, err := s.RegisterEvent(t.Context(), again, key2)
			if err != nil || !created || got.ID != again.ID {
				t.Errorf("same key after the purge: got %v created %t, %v; want a new event", got, created, err)
			}
		})
	})
}
