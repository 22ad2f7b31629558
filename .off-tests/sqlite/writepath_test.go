package sqlite

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/storetest"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newEvent(companyID string) *webhooks.Event {
	return &webhooks.Event{ID: webhooks.NewID(), Type: "invoice.sent", APIVersion: webhooks.LatestAPIVersion, Created: time.Now(),
		Livemode: true, CompanyID: companyID, Object: json.RawMessage(`{"object":"invoice"}`)}
}

// plan returns SQLite's query plan of q, its lines joined.
func plan(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.write.Query(`EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	return strings.Join(lines, "; ")
}

// TestOpen_ReleaseThroughIndexes: the claims a dead process left are
// handed back through the partial indexes of the leased and the parked
// deliveries. One UPDATE over "leased OR parked" scanned the whole table:
// start-up grew with the history, 0.85 s at 2 million deliveries.
func TestOpen_ReleaseThroughIndexes(t *testing.T) {
	s := openTemp(t)
	for _, q := range releaseAll {
		if p := plan(t, s, q); !strings.Contains(p, "USING INDEX deliveries_") {
			t.Errorf("%s\nplan: %s; want a search of a partial index", q, p)
		}
	}
}

// TestQueue_Indexes: the queue's reads go through the partial indexes
// (the due index holds the unleased deliveries only), whatever the size
// of the history.
func TestQueue_Indexes(t *testing.T) {
	s := openTemp(t)
	for q, index := range map[string]string{
		qDue:           "deliveries_due",
		qDueAfter:      "deliveries_due",
		qLapsed:        "deliveries_leased",
		qParkedOf:      "deliveries_parked",
		qQueued:        "deliveries_parked",
		qHeld:          "deliveries_leased",
		qNextScheduled: "deliveries_due",
		`DELETE FROM deliveries WHERE replay_of = ?`: "deliveries_replay_of",
	} {
		args := make([]any, strings.Count(q, "?")+4)
		if p := plan(t, s, q, args...); !strings.Contains(p, "INDEX "+index) {
			t.Errorf("%s\nplan: %s; want %s", q, p, index)
		}
	}
}

// TestCommitGroup_RefusedWithoutSavepoints: a group runs without a
// savepoint per registration; one refused registration rolls it back and
// it runs again with them, so that the others commit and the refused one
// leaves nothing.
func TestCommitGroup_RefusedWithoutSavepoints(t *testing.T) {
	s := openTemp(t)
	a := storetest.MustCreateAccount(t, s, "")
	c := storetest.MustCreateCompany(t, s, a.ID)
	ep := storetest.MustCreateEndpoint(t, s, storetest.NewCompanyEndpoint(c.ID, "*"))
	ok1, bad, ok2 := newEvent(c.ID), newEvent(webhooks.NewID()), newEvent(c.ID)
	group := []*registration{{ctx: context.Background(), ev: ok1}, {ctx: context.Background(), ev: bad}, {ctx: context.Background(), ev: ok2}}
	s.commitGroup(group)
	if group[0].err != nil || group[2].err != nil {
		t.Fatalf("the accepted registrations: %v, %v", group[0].err, group[2].err)
	}
	if webhooks.ErrorCode(group[1].err) != webhooks.EUNKNOWNCOMPANY {
		t.Fatalf("the refused registration: %v, want %s", group[1].err, webhooks.EUNKNOWNCOMPANY)
	}
	for _, ev := range []*webhooks.Event{ok1, ok2} {
		if ds := storetest.MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: ep.ID, EventID: ev.ID}); len(ds) != 1 {
			t.Errorf("event %s: %d deliveries, want 1", ev.ID, len(ds))
		}
	}
	if _, err := s.FindEvent(context.Background(), bad.ID); webhooks.ErrorCode(err) != webhooks.ENOTFOUND {
		t.Errorf("the refused event: %v, want not found", err)
	}
}

// TestRegister_JoinsEndpointQueue: a delivery to an endpoint with a queue
// of parked deliveries joins the queue instead of overtaking it, though
// the registrar looks for a queue only at endpoints a claim parked
// deliveries of.
func TestRegister_JoinsEndpointQueue(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	a := storetest.MustCreateAccount(t, s, "")
	c := storetest.MustCreateCompany(t, s, a.ID)
	storetest.MustCreateEndpoint(t, s, storetest.NewCompanyEndpoint(c.ID, "*"))
	register := func() *webhooks.Delivery {
		t.Helper()
		_, ds, _, err := s.RegisterEvent(ctx, newEvent(c.ID), nil)
		if err != nil || len(ds) != 1 {
			t.Fatalf("RegisterEvent: %v, %d deliveries", err, len(ds))
		}
		return ds[0]
	}
	parked := func(d *webhooks.Delivery) bool {
		t.Helper()
		var p bool
		if err := s.read.QueryRow(`SELECT parked FROM deliveries WHERE id = ?`, d.ID).Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first, second := register(), register()
	claim := func() []*webhooks.Claim {
		t.Helper()
		cs, err := s.ClaimDeliveries(ctx, webhooks.ClaimRequest{Now: time.Now().Add(time.Second), Limit: 10, Token: webhooks.NewID(),
			LeaseUntil: time.Now().Add(time.Minute), PerEndpoint: 1})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	if cs := claim(); len(cs) != 1 || cs[0].Delivery.ID != first.ID || !parked(second) {
		t.Fatalf("the first claim: %d claims, second parked %v; want the first claimed and the second parked", len(cs), parked(second))
	}
	third := register()
	if !parked(third) {
		t.Fatal("a new delivery to an endpoint with a queue was not queued behind it")
	}
	if _, err := s.write.Exec(`UPDATE deliveries SET lease_token = NULL, lease_expires = NULL WHERE id = ?`, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.write.Exec(`UPDATE deliveries SET status = 'delivered' WHERE id = ?`, first.ID); err != nil {
		t.Fatal(err)
	}
	if cs := claim(); len(cs) != 1 || cs[0].Delivery.ID != second.ID {
		t.Fatalf("after the first ended: want the second claimed, oldest of the queue")
	}
}
