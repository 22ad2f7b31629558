package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/storetest"
)

// TestMigrate_HotRecords upgrades a database of the schema before 0018
// (the status in three indexes of deliveries) with an endpoint's
// deliveries in every state (pending: due, and retrying; delivered;
// failed: one of them ended during an attempt whose claim still holds
// its queue row; failed_permanently) and an ordered endpoint's chain of
// two pending deliveries: afterwards the lists by each state hold the same
// deliveries in the same order, with their cursors, the retrying one is
// counted, and the chain goes on: a new event of its key waits behind its
// tail, and the next claim takes the chain's head.
func TestMigrate_HotRecords(t *testing.T) {
	ctx := t.Context()
	schema := NewSchema(t)
	conn := connect(t)
	defer conn.Close(context.Background())
	migrateBefore(t, conn, schema, "migration/0018")
	now := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
	const (
		account   = "01900000-0000-7000-8000-000000000001"
		company   = "01900000-0000-7000-8000-000000000002"
		ep        = "01900000-0000-7000-8000-000000000003"
		ordered   = "01900000-0000-7000-8000-000000000004"
		delivered = "01900000-0000-7000-8000-000000000011"
		failed    = "01900000-0000-7000-8000-000000000012"
		permanent = "01900000-0000-7000-8000-000000000013"
		due       = "01900000-0000-7000-8000-000000000014"
		retrying  = "01900000-0000-7000-8000-000000000015"
		ended     = "01900000-0000-7000-8000-000000000016"
		head      = "01900000-0000-7000-8000-000000000021"
		next      = "01900000-0000-7000-8000-000000000022"
	)
	endpoint := func(id string, ordered bool) string {
		return fmt.Sprintf(`INSERT INTO endpoints (id, scope, company_id, url, enabled_events, relationships, api_version, livemode, description, status, secret, created, updated, ordered)
			VALUES ('%s', 'company', '%s', 'https://example.com/%s', '{*}', '{}', '%s', true, '', 'enabled', 'whsec_x', $1, $1, %t)`,
			id, company, id, webhooks.LatestAPIVersion, ordered)
	}
	// The i-th delivery: created i seconds after now, of an event of its
	// own (the event's id is the delivery's with 9 for its 8), with a
	// queue row if queued is set ("" for none).
	var qs []string
	delivery := func(i int, id, endpointID, status, reason string, attempts int, nextAt, key, waiting, queued string) {
		event := id[:19] + "9" + id[20:]
		at := fmt.Sprintf(`$1::timestamptz + interval '%d seconds'`, i)
		qs = append(qs,
			fmt.Sprintf(`INSERT INTO events (id, type, api_version, livemode, test, account_id, company_id, object, created, ordering_key)
				VALUES ('%s', 'invoice.sent', '%s', true, false, '%s', '%s', '{"total":"1.00"}', %s, %s)`,
				event, webhooks.LatestAPIVersion, account, company, at, sqlText(key)),
			fmt.Sprintf(`INSERT INTO bodies VALUES ('%s', 1, convert_to('{"id":"%s"}', 'UTF8'))`, event, event),
			fmt.Sprintf(`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, reason, attempt_count, next_attempt_at, manual, body_n,
					created, updated, ordering_key, waiting_for)
				VALUES ('%s', '%s', '%s', 'invoice.sent', '%s', %s, %d, %s, false, 1, %s, %s, %s, %s)`,
				id, endpointID, event, status, sqlText(reason), attempts, nextAt, at, at, sqlText(key), sqlText(waiting)))
		if queued != "" {
			qs = append(qs, fmt.Sprintf(`INSERT INTO queue (delivery_id, endpoint_id, due, since, lease_token, lease_expires, waiting) VALUES ('%s', '%s', %s)`,
				id, endpointID, queued))
		}
	}
	qs = append(qs,
		`INSERT INTO accounts (id, name, created) VALUES ('`+account+`', 'Acme', $1)`,
		`INSERT INTO companies (id, account_id, nif, name, created) VALUES ('`+company+`', '`+account+`', 'B12345674', 'Acme', $1)`,
		endpoint(ep, false), endpoint(ordered, true))
	const none = "NULL"
	delivery(1, delivered, ep, "delivered", "", 1, none, "", "", "")
	delivery(2, failed, ep, "failed", "endpoint_disabled", 0, none, "", "", "")
	delivery(3, permanent, ep, "failed_permanently", "non_retryable_status", 1, none, "", "", "")
	delivery(4, due, ep, "pending", "", 0, "$1", "", "", "$1, $1, NULL, NULL, false")
	delivery(5, retrying, ep, "pending", "", 1, "$1::timestamptz + interval '1 hour'", "", "",
		"$1::timestamptz + interval '1 hour', $1::timestamptz + interval '1 hour', NULL, NULL, false")
	delivery(6, ended, ep, "failed", "endpoint_disabled", 0, none, "", "", "NULL, NULL, 'token-ended', $1::timestamptz + interval '1 hour', false")
	delivery(7, head, ordered, "pending", "", 0, "$1", "inv_1", "", "$1, $1, NULL, NULL, false")
	delivery(8, next, ordered, "pending", "", 0, "$1", "inv_1", head, "$1, $1, NULL, NULL, true")
	for _, q := range qs {
		var args []any
		if strings.Contains(q, "$1") {
			args = append(args, now)
		}
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	s := MustOpen(t, schema) // applies 0018 and later
	st := stackOf(t, s)
	for _, c := range []struct {
		endpoint, status string
		want             []string
	}{
		{ep, "", []string{ended, retrying, due, permanent, failed, delivered}},
		{ep, webhooks.DeliveryPending, []string{retrying, due}},
		{ep, webhooks.DeliveryDelivered, []string{delivered}},
		{ep, webhooks.DeliveryFailed, []string{ended, failed}},
		{ep, webhooks.DeliveryFailedPermanently, []string{permanent}},
		{ordered, webhooks.DeliveryPending, []string{next, head}},
	} {
		var got []string
		for _, d := range storetest.MustListDeliveries(t, st, webhooks.DeliveryFilter{EndpointID: c.endpoint, Status: c.status}) {
			got = append(got, d.ID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("endpoint %s, status %q after the upgrade: got %v, want %v", c.endpoint, c.status, got, c.want)
		}
		// Page by page, one at a time, through the cursors.
		got, after := nil, ""
		for range len(c.want) + 1 {
			l, err := s.ListDeliveries(ctx, webhooks.DeliveryFilter{EndpointID: c.endpoint, Status: c.status}, webhooks.Page{Limit: 1, StartingAfter: after})
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Data) == 0 {
				break
			}
			after = l.Data[0].ID
			got = append(got, after)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("endpoint %s, status %q after the upgrade, a page at a time: got %v, want %v", c.endpoint, c.status, got, c.want)
		}
	}
	counts, err := s.CountDeliveries(ctx, []string{ep, ordered}, now, time.Hour, driver.CountRetrying)
	if err != nil || len(counts) != 1 || counts[0].EndpointID != ep || counts[0].N != 1 {
		t.Errorf("retrying after the upgrade: got %+v (%v), want the one retrying delivery", counts, err)
	}

	ev := storetest.NewEvent(t, "invoice.sent", company, now.Add(time.Minute))
	ev.OrderingKey = "inv_1"
	want := []string{due, head}
	for _, d := range storetest.MustRegisterEvent(t, st, ev) {
		if d.EndpointID == ep {
			want = append(want, d.ID)
		} else if d.WaitingFor != next {
			t.Errorf("a new event of the chain after the upgrade waits for %q, want the chain's tail, %s", d.WaitingFor, next)
		}
	}
	var claimed []string
	for _, c := range storetest.MustClaim(t, st, now.Add(time.Minute), 100) {
		claimed = append(claimed, c.Delivery.ID)
	}
	slices.Sort(claimed)
	slices.Sort(want)
	if !slices.Equal(claimed, want) {
		t.Errorf("claimed after the upgrade: got %v, want %v (the due one, the chain's head and the new event's unordered one)", claimed, want)
	}
}

// sqlText is s as an SQL literal, NULL when empty (s holds no quote).
func sqlText(s string) string {
	if s == "" {
		return "NULL"
	}
	return "'" + s + "'"
}
