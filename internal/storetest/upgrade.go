package storetest

import (
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// BodiesUpgrade names what both drivers' upgrade tests write in the
// schema before an event's bodies were shared (SQLite 0016, PostgreSQL
// 0017): D1 and D2 deliver Event to two endpoints of one version (Latest,
// equal bodies), D3 to Ep3 of another (Older), Replay replays D3, and D5
// delivers the erased event (no body). D1, D3, Replay and D5 have an
// attempt, answered "thanks", "gone", "" and "".
type BodiesUpgrade struct {
	Ep3, Event, Erased, D1, D2, D3, Replay, D5 string
	Latest, Older                              string
	Object                                     string // Event's payload
	Now                                        time.Time
}

// CheckBodiesUpgrade checks a store migrated from u's history: every
// delivery reads back its own bytes and attempts, the lists answer, equal
// bodies are stored once (bodies counts an event's), the erased event has
// none, and a new replay of the event reuses its original's body.
func CheckBodiesUpgrade(t *testing.T, s driver.Driver, u BodiesUpgrade, bodies func(eventID string) int) {
	t.Helper()
	ctx := t.Context()
	for id, want := range map[string]struct {
		body     string
		attempts int
		response string
	}{u.D1: {u.Latest, 1, "thanks"}, u.D2: {u.Latest, 0, ""}, u.D3: {u.Older, 1, "gone"}, u.Replay: {u.Older, 1, ""}, u.D5: {"", 1, ""}} {
		d, err := s.FindDelivery(ctx, id)
		if err != nil {
			t.Fatalf("delivery %s after the upgrade: %v", id, err)
		}
		if string(d.Body) != want.body || len(d.Attempts) != want.attempts || (want.attempts > 0 && d.Attempts[0].ResponseBody != want.response) {
			t.Errorf("delivery %s after the upgrade: body %q, %d attempts; want %q, %d (answered %q)", id, d.Body, len(d.Attempts), want.body, want.attempts, want.response)
		}
	}
	if ev, err := s.FindEvent(ctx, u.Event); err != nil || string(ev.Object) != u.Object {
		t.Errorf("event after the upgrade: %+v, %v", ev, err)
	}
	if l, err := s.ListDeliveries(ctx, webhooks.DeliveryFilter{EndpointID: u.Ep3}, webhooks.Page{Limit: 10}); err != nil || len(l.Data) != 2 {
		t.Errorf("the older endpoint's history after the upgrade: %v, %v; want the original and its replay", l, err)
	}
	if l, err := s.ListDeliveries(ctx, webhooks.DeliveryFilter{EndpointID: u.Ep3, Status: webhooks.DeliveryFailedPermanently}, webhooks.Page{Limit: 10}); err != nil || len(l.Data) != 1 || l.Data[0].ID != u.D3 {
		t.Errorf("its failed_permanently deliveries: %v, %v; want %s", l, err, u.D3)
	}
	if n := bodies(u.Event); n != 2 {
		t.Errorf("the event's bodies after the upgrade: %d, want 2 (one per rendering)", n)
	}
	if n := bodies(u.Erased); n != 0 {
		t.Errorf("the erased event's bodies: %d, want none", n)
	}

	// A new replay of the original, as resend writes it: the same bytes,
	// the same body row.
	again := &webhooks.Delivery{ID: webhooks.NewID(), EndpointID: u.Ep3, EventID: u.Event, EventType: "invoice.sent", ReplayOf: u.D3,
		Status: webhooks.DeliveryPending, Body: []byte(u.Older), Manual: true, NextAttemptAt: u.Now, Created: u.Now}
	if err := s.InTx(ctx, func(tx driver.Tx) error { _, err := tx.InsertDeliveries(ctx, []*webhooks.Delivery{again}); return err }); err != nil {
		t.Fatal(err)
	}
	if d, err := s.FindDelivery(ctx, again.ID); err != nil || string(d.Body) != u.Older {
		t.Errorf("a replay after the upgrade: %v, %v", d, err)
	}
	if n := bodies(u.Event); n != 2 {
		t.Errorf("the event's bodies after another replay: %d, want still 2", n)
	}
}
