package storetest

import (
	"slices"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func testDeliveries(t *testing.T, open func(t *testing.T) Store) {
	group(t, "FindDelivery", func(t *testing.T) {
		t.Run("NoAttempts", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			d := MustRegisterOne(t, s, NewAccountEvent(t, "account.updated", a.ID, at(time.Minute)), e.ID)
			got := MustFindDelivery(t, s, d.ID)
			// An empty list, not a missing one: the API renders it as [].
			if got.Attempts == nil || len(got.Attempts) != 0 {
				t.Errorf("attempts: got %#v, want an empty slice", got.Attempts)
			}
		})

		t.Run("Attempts", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			d := MustRegisterOne(t, s, NewAccountEvent(t, "account.updated", a.ID, at(time.Minute)), e.ID)
			first := NewRecord(MustClaimOne(t, s, d.ID, at(time.Minute)), at(time.Minute), 0, retryAt(at(2*time.Minute)))
			first.Attempt.Duration = 10 * time.Second
			MustRecord(t, s, first)
			second := NewRecord(MustClaimOne(t, s, d.ID, at(2*time.Minute)), at(2*time.Minute), 200, delivered)
			second.Attempt.ResponseBody = "ok"
			MustRecord(t, s, second)

			got := MustFindDelivery(t, s, d.ID)
			checkState(t, "delivery", got, delivered, 2)
			if got.LastResponseStatus != 200 {
				t.Errorf("last response status: got %d, want 200", got.LastResponseStatus)
			}
			if len(got.Attempts) != 2 {
				t.Fatalf("attempts: got %d, want 2", len(got.Attempts))
			}
			for i, want := range []*webhooks.Attempt{first.Attempt, second.Attempt} {
				checkAttempt(t, got.Attempts[i], want)
			}
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			_, err := s.FindDelivery(t.Context(), webhooks.NewID())
			checkCode(t, "FindDelivery", err, webhooks.ENOTFOUND)
		})
	})

	group(t, "ListDeliveries", func(t *testing.T) {
		t.Run("Pagination", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			other := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			var want []string
			for i := range 5 {
				ev := NewEvent(t, "invoice.sent", c.ID, at(time.Duration(i)*time.Minute))
				want = append([]string{MustRegisterOne(t, s, ev, e.ID).ID}, want...)
			}
			checkList(t, func(p webhooks.Page) (*webhooks.List[*webhooks.Delivery], error) {
				return s.ListDeliveries(t.Context(), webhooks.DeliveryFilter{EndpointID: e.ID}, p)
			}, deliveryID, want)
			// The other endpoint's deliveries are its own list: one of
			// them is no cursor here.
			otherDS := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: other.ID})
			if len(otherDS) != 5 || slices.ContainsFunc(otherDS, func(d *webhooks.Delivery) bool { return slices.Contains(want, d.ID) }) {
				t.Errorf("other endpoint's deliveries: got %v, want 5 others", deliveryIDs(otherDS))
			}
		})

		t.Run("Filters", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			var ds []*webhooks.Delivery
			for i := range 4 {
				ds = append(ds, MustRegisterOne(t, s, NewEvent(t, "invoice.sent", c.ID, at(time.Duration(i)*time.Minute)), e.ID))
			}
			MustAttempt(t, s, ds[1].ID, at(time.Hour), 200, delivered)
			MustFailPermanently(t, s, ds[2].ID, at(time.Hour))
			for _, tc := range []struct {
				name string
				f    webhooks.DeliveryFilter
				want []*webhooks.Delivery
			}{
				{"status pending", webhooks.DeliveryFilter{Status: webhooks.DeliveryPending}, []*webhooks.Delivery{ds[3], ds[0]}},
				{"status delivered", webhooks.DeliveryFilter{Status: webhooks.DeliveryDelivered}, []*webhooks.Delivery{ds[1]}},
				{"status failed_permanently", webhooks.DeliveryFilter{Status: webhooks.DeliveryFailedPermanently}, []*webhooks.Delivery{ds[2]}},
				{"status failed", webhooks.DeliveryFilter{Status: webhooks.DeliveryFailed}, nil},
				{"event", webhooks.DeliveryFilter{EventID: ds[2].EventID}, []*webhooks.Delivery{ds[2]}},
				{"event and status", webhooks.DeliveryFilter{EventID: ds[2].EventID, Status: webhooks.DeliveryPending}, nil},
				{"unknown event", webhooks.DeliveryFilter{EventID: webhooks.NewID()}, nil},
			} {
				tc.f.EndpointID = e.ID
				got := MustListDeliveries(t, s, tc.f)
				if ids, want := deliveryIDs(got), deliveryIDs(tc.want); !slices.Equal(ids, want) {
					t.Errorf("%s: got %v, want %v", tc.name, ids, want)
				}
			}
			// Listed deliveries are whole, without their attempts and bodies.
			got := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: e.ID, Status: webhooks.DeliveryFailedPermanently})
			if len(got) == 1 {
				checkState(t, "listed delivery", got[0], failedPermanently, 1)
				if got[0].EventID != ds[2].EventID || len(got[0].Body) != 0 || got[0].LastResponseStatus != 410 {
					t.Errorf("listed delivery: got event %s status %d body %q, want %s 410 and no body", got[0].EventID, got[0].LastResponseStatus, got[0].Body, ds[2].EventID)
				}
			}
		})
	})
}

// checkAttempt reports the fields of got that differ from want's.
func checkAttempt(tb testing.TB, got, want *webhooks.Attempt) {
	tb.Helper()
	if got.DeliveryID != want.DeliveryID || got.Number != want.Number || got.ResponseStatus != want.ResponseStatus ||
		got.ResponseBody != want.ResponseBody || got.Error != want.Error || got.Manual != want.Manual {
		tb.Errorf("attempt %d: got %+v, want %+v", want.Number, got, want)
	}
	checkTime(tb, "attempt started at", got.StartedAt, want.StartedAt)
	if got.Duration.Truncate(time.Millisecond) != want.Duration.Truncate(time.Millisecond) {
		tb.Errorf("attempt %d: duration: got %s, want %s", want.Number, got.Duration, want.Duration)
	}
}
