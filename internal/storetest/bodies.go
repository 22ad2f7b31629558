package storetest

import (
	"bytes"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// testBodies: a backend may store an event's equal bodies once (issue 28),
// but every delivery still reads back the exact bytes it was created
// with, whatever the others of its event send; a replay sends its
// original's; an erasure removes them all; and the store's size grows with
// what it holds.
func testBodies(t *testing.T, open func(t *testing.T) Store) {
	group(t, "Bodies", func(t *testing.T) {
		t.Run("EachDeliveryItsBytes", func(t *testing.T) {
			s := setup(t, open)
			account := MustCreateAccount(t, s, "")
			co := MustCreateCompany(t, s, account.ID)
			latest1 := MustCreateEndpoint(t, s, NewCompanyEndpoint(co.ID, "*"))
			latest2 := MustCreateEndpoint(t, s, NewCompanyEndpoint(co.ID, "*"))
			older := NewCompanyEndpoint(co.ID, "*")
			older.APIVersion = webhooks.APIVersion20250601
			MustCreateEndpoint(t, s, older)
			acc := MustCreateEndpoint(t, s, NewAccountEndpoint(account.ID, nil, "*"))

			size0, err := s.StoreBytes(t.Context())
			if err != nil || size0 <= 0 {
				t.Fatalf("StoreBytes of a store with a company: %d, %v; want > 0", size0, err)
			}
			ev := NewEvent(t, "invoice.sent", co.ID, t0)
			ds := MustRegisterEvent(t, s, ev)
			if len(ds) != 4 {
				t.Fatalf("registered %d deliveries, want 4 (two endpoints of the latest version, one older, one account's)", len(ds))
			}
			sent := map[string][]byte{}
			for _, d := range ds {
				if len(d.Body) == 0 {
					t.Fatalf("delivery to %s registered without a body", d.EndpointID)
				}
				sent[d.EndpointID] = d.Body
				if got := MustFindDelivery(t, s, d.ID).Body; !bytes.Equal(got, d.Body) {
					t.Errorf("delivery to %s reads back\n%s\nwant the bytes it was created with\n%s", d.EndpointID, got, d.Body)
				}
			}
			if !bytes.Equal(sent[latest1.ID], sent[latest2.ID]) {
				t.Errorf("two endpoints of one version and envelope: bodies differ")
			}
			if bytes.Equal(sent[latest1.ID], sent[older.ID]) || bytes.Equal(sent[latest1.ID], sent[acc.ID]) {
				t.Errorf("another version or envelope sends the same bytes: the test proves nothing")
			}
			l, err := s.ListDeliveries(t.Context(), webhooks.DeliveryFilter{EndpointID: older.ID}, webhooks.Page{Limit: 10})
			if err != nil || len(l.Data) != 1 || !bytes.Equal(MustFindDelivery(t, s, l.Data[0].ID).Body, sent[older.ID]) {
				t.Errorf("the older endpoint's history: %v, %v; want its one delivery, with its own bytes", l, err)
			}

			var original *webhooks.Delivery
			for _, d := range ds {
				if d.EndpointID == older.ID {
					original = d
				}
			}
			MustFailPermanently(t, s, original.ID, at(time.Minute))
			r, err := replayDelivery(t, s, original.ID, at(2*time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if got := MustFindDelivery(t, s, r.ID).Body; !bytes.Equal(got, sent[older.ID]) {
				t.Errorf("the replay reads back\n%s\nwant its original's\n%s", got, sent[older.ID])
			}

			if size, err := s.StoreBytes(t.Context()); err != nil || size < size0 {
				t.Errorf("StoreBytes after registering: %d, %v; want at least %d", size, err, size0)
			}

			if _, err := UseCases(s, at(3*time.Minute)).EraseEvent(t.Context(), admin, ev.ID); err != nil {
				t.Fatal(err)
			}
			for _, d := range append(ds, r) {
				if got := MustFindDelivery(t, s, d.ID).Body; len(got) != 0 {
					t.Errorf("delivery to %s after the erasure: body %q, want none", d.EndpointID, got)
				}
			}
		})
	})
}
