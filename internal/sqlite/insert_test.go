package sqlite

import (
	"fmt"
	"slices"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// TestInsertDeliveryRows: a group of 70 deliveries goes in statements of
// 32, 32, 4 and 2 rows; each is stored in order with its body and, if it
// has one, its lease, and a second original of an event to an endpoint,
// in the same statement or a later one, is not inserted.
func TestInsertDeliveryRows(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	account, company := webhooks.NewID(), webhooks.NewID()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.write.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO accounts (id, name, created) VALUES (?, 'Acme', ?)`, dbID(account), now.UnixMilli())
	exec(`INSERT INTO companies (id, account_id, nif, name, created) VALUES (?, ?, 'B12345674', 'Acme', ?)`, dbID(company), dbID(account), now.UnixMilli())
	var endpoints, events []string
	for i := range 2 {
		ep := webhooks.NewID()
		exec(`INSERT INTO endpoints (id, scope, company_id, url, enabled_events, relationships, api_version, livemode, description, status, secret, created, updated)
			VALUES (?, 'company', ?, ?, '["*"]', '[]', '2026-09-23', 1, '', 'enabled', 'whsec_x', ?4, ?4)`, dbID(ep), dbID(company), fmt.Sprint("https://example.com/", i), now.UnixMilli())
		endpoints = append(endpoints, ep)
	}
	for range 35 {
		ev := webhooks.NewID()
		exec(`INSERT INTO events (id, type, api_version, livemode, test, account_id, company_id, object, created)
			VALUES (?, 'invoice.sent', '2026-09-23', 1, 0, ?, ?, '{}', ?)`, dbID(ev), dbID(account), dbID(company), now.UnixMilli())
		events = append(events, ev)
	}
	delivery := func(ev, ep string) *webhooks.Delivery {
		return &webhooks.Delivery{ID: webhooks.NewID(), EndpointID: ep, EventID: ev, EventType: "invoice.sent", Status: webhooks.DeliveryPending,
			NextAttemptAt: now, Created: now, Body: []byte(`{"id":"` + ev + `"}`)}
	}
	// 35 events to 2 endpoints; the 11th delivery repeats the 10th (in
	// the first statement), the 69th the 2nd (a later one).
	var ds []*webhooks.Delivery
	for _, ev := range events {
		for _, ep := range endpoints {
			ds = append(ds, delivery(ev, ep))
		}
	}
	ds = slices.Insert(ds, 10, delivery(ds[9].EventID, ds[9].EndpointID))
	ds = slices.Insert(ds, 68, delivery(ds[1].EventID, ds[1].EndpointID))
	ds = ds[:70]
	leases := map[string]driver.Lease{}
	for _, d := range ds[:40] {
		leases[d.ID] = driver.Lease{Token: "token", Until: now.Add(time.Minute)}
	}
	var inserted map[string]bool
	err := s.inTx(ctx, func(tx *txn) (err error) {
		inserted, err = insertDeliveryRows(ctx, tx, ds, leases)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i, d := range ds {
		if i != 10 && i != 68 {
			want = append(want, d.ID)
		}
		if inserted[d.ID] != (i != 10 && i != 68) {
			t.Errorf("delivery %d: inserted %v", i, inserted[d.ID])
		}
	}
	rows, err := s.read.QueryContext(ctx, `SELECT id, lease_expires IS NOT NULL, body_n FROM deliveries ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id string
		var leased bool
		var bodyN int
		if err := rows.Scan((*dbID)(&id), &leased, &bodyN); err != nil {
			t.Fatal(err)
		}
		got = append(got, id)
		if _, ok := leases[id]; leased != ok || bodyN != 1 {
			t.Errorf("delivery %s: leased %v, body %d; want leased %v, body 1", id, leased, bodyN, ok)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("stored, in order: %d deliveries\n%v\nwant %d\n%v", len(got), got, len(want), want)
	}
}
