package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// TestMigrate_NarrowRows upgrades a database of the schema before 0021
// (deliveries and attempts in the column order of their migrations) with
// deliveries that fill every column (a replay, one waiting in a chain, a
// rehearsal, a reason, a relationship, a queued and leased one) and their
// attempts: afterwards every row reads back with the same values, the
// tables keep their indexes and constraints (a second original of an
// event for one endpoint is refused, deleting a delivery takes its
// attempts and queue row), and the store reads them.
func TestMigrate_NarrowRows(t *testing.T) {
	ctx := t.Context()
	schema := NewSchema(t)
	conn := connect(t)
	defer conn.Close(context.Background())
	migrateBefore(t, conn, schema, "migration/0021")
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	const (
		account  = "01900000-0000-7000-8000-000000000001"
		company  = "01900000-0000-7000-8000-000000000002"
		ep       = "01900000-0000-7000-8000-000000000003"
		original = "01900000-0000-7000-8000-000000000011"
		replay   = "01900000-0000-7000-8000-000000000012"
		head     = "01900000-0000-7000-8000-000000000013"
		waiting  = "01900000-0000-7000-8000-000000000014"
		failed   = "01900000-0000-7000-8000-000000000015"
	)
	qs := []string{
		`INSERT INTO accounts (id, name, created) VALUES ('` + account + `', 'Acme', $1)`,
		`INSERT INTO companies (id, account_id, nif, name, created) VALUES ('` + company + `', '` + account + `', 'B12345674', 'Acme', $1)`,
		fmt.Sprintf(`INSERT INTO endpoints (id, scope, company_id, url, enabled_events, relationships, api_version, livemode, description, status, secret, created, updated, ordered)
			VALUES ('%s', 'company', '%s', 'https://example.com/hook', '{*}', '{}', '%s', true, '', 'enabled', 'whsec_x', $1, $1, true)`,
			ep, company, webhooks.LatestAPIVersion),
	}
	// Each delivery's event has the delivery's id with 9 for its 8, but
	// the replay's, which is its original's.
	eventOf := func(id string) string {
		if id == replay {
			id = original
		}
		return id[:19] + "9" + id[20:]
	}
	for _, id := range []string{original, head, waiting, failed} {
		qs = append(qs,
			fmt.Sprintf(`INSERT INTO events (id, type, api_version, livemode, test, account_id, company_id, object, created, ordering_key)
				VALUES ('%s', 'invoice.sent', '%s', true, false, '%s', '%s', '{"total":"1.00"}', $1, 'inv_1')`,
				eventOf(id), webhooks.LatestAPIVersion, account, company),
			`INSERT INTO bodies VALUES ('`+eventOf(id)+`', 1, convert_to('{"id":"`+eventOf(id)+`"}', 'UTF8'))`)
	}
	cols := `id, endpoint_id, event_id, event_type, relationship, replay_of, status, reason, attempt_count, next_attempt_at,
		last_response_status, manual, body_n, created, updated, schedule_factor, rehearsal, ordering_key, waiting_for`
	row := func(id, relationship, replayOf, status, reason string, attempts int, next, lastStatus string, manual bool,
		bodyN, offset string, factor int, rehearsal bool, key, waitingFor string) string {
		at := "$1::timestamptz + interval '" + offset + "'"
		return fmt.Sprintf(`INSERT INTO deliveries (%s) VALUES ('%s', '%s', '%s', 'invoice.sent', %s, %s, '%s', %s, %d, %s, %s, %t, %s, %s, %s, %d, %t, %s, %s)`,
			cols, id, ep, eventOf(id), sqlText(relationship), sqlText(replayOf), status, sqlText(reason), attempts, next, lastStatus, manual,
			bodyN, at, at+" + interval '250 milliseconds'", factor, rehearsal, sqlText(key), sqlText(waitingFor))
	}
	qs = append(qs,
		row(original, "own", "", "delivered", "", 2, "NULL", "204", false, "1", "1 second", 1, false, "", ""),
		row(replay, "own", original, "failed_permanently", "non_retryable_status", 1, "NULL", "410", true, "1", "2 seconds", 1, false, "", ""),
		row(head, "", "", "pending", "", 3, "$1::timestamptz + interval '1 hour'", "503", false, "1", "3 seconds", 60, true, "inv_1", ""),
		row(waiting, "", "", "pending", "", 0, "$1", "NULL", false, "NULL", "4 seconds", 1, false, "inv_1", head),
		row(failed, "provisioner", "", "failed", "endpoint_disabled", 0, "NULL", "NULL", false, "1", "5 seconds", 1, false, "", ""),
		`INSERT INTO attempts VALUES ('`+original+`', 1, $1, 30001, 500, 'oops'::bytea, NULL, false)`,
		`INSERT INTO attempts VALUES ('`+original+`', 2, $1::timestamptz + interval '1 minute', 12, 204, ''::bytea, NULL, false)`,
		`INSERT INTO attempts VALUES ('`+replay+`', 1, $1, 9, 410, '\xff00'::bytea, NULL, true)`,
		`INSERT INTO attempts VALUES ('`+head+`', 3, $1, 10000, NULL, ''::bytea, 'dial tcp: connection refused', false)`,
		`INSERT INTO queue (delivery_id, endpoint_id, due, since, lease_token, lease_expires, waiting, created, ordering_key)
			VALUES ('`+head+`', '`+ep+`', $1::timestamptz + interval '1 hour', $1, 'token-1', $1::timestamptz + interval '1 minute', false, $1, 'inv_1')`,
		`INSERT INTO queue (delivery_id, endpoint_id, due, since, waiting, created, ordering_key)
			VALUES ('`+waiting+`', '`+ep+`', $1, $1, true, $1, 'inv_1')`,
	)
	for _, q := range qs {
		var args []any
		if strings.Contains(q, "$1") {
			args = append(args, now)
		}
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Every row as JSON (by column name; the state is a string in both),
	// without the column 0023 drops.
	rows := func(table, order string) string {
		t.Helper()
		var out string
		if err := conn.QueryRow(ctx, `SELECT jsonb_agg(to_jsonb(x) - 'updated' ORDER BY `+order+`)::text FROM `+table+` x`).Scan(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	beforeDeliveries, beforeAttempts := rows("deliveries", "id"), rows("attempts", "delivery_id, number")

	s := MustOpen(t, schema) // applies 0021 and later
	if got := rows("deliveries", "id"); got != beforeDeliveries {
		t.Errorf("deliveries after the upgrade:\n%s\nbefore:\n%s", got, beforeDeliveries)
	}
	if got := rows("attempts", "delivery_id, number"); got != beforeAttempts {
		t.Errorf("attempts after the upgrade:\n%s\nbefore:\n%s", got, beforeAttempts)
	}
	var indexes []string
	if err := conn.QueryRow(ctx, `SELECT array_agg(indexname::text ORDER BY indexname) FROM pg_indexes
		WHERE schemaname = $1 AND tablename IN ('deliveries', 'attempts')`, schema).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	want := []string{"attempts_pkey", "deliveries_endpoint", "deliveries_event", "deliveries_failed", "deliveries_pkey", "deliveries_replay_of", "deliveries_waiting"}
	if !slices.Equal(indexes, want) {
		t.Errorf("indexes after the upgrade: %v, want %v", indexes, want)
	}

	d, err := s.FindDelivery(ctx, original)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != webhooks.DeliveryDelivered || d.AttemptCount != 2 || len(d.Attempts) != 2 || d.Attempts[0].Duration != 30001*time.Millisecond ||
		d.Attempts[0].ResponseStatus != 500 || d.Attempts[0].ResponseBody != "oops" || d.LastResponseStatus != 204 {
		t.Errorf("the delivered delivery after the upgrade: %+v, attempts %+v", d, d.Attempts)
	}
	l, err := s.ListDeliveries(ctx, webhooks.DeliveryFilter{EndpointID: ep, Status: webhooks.DeliveryFailedPermanently}, webhooks.Page{Limit: 10})
	if err != nil || len(l.Data) != 1 || l.Data[0].ID != replay || l.Data[0].ReplayOf != original {
		t.Errorf("the failed_permanently list after the upgrade: %+v, %v", l, err)
	}

	// The constraints: one original per event and endpoint; a delivery's
	// attempts and queue row go with it.
	if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, attempt_count, manual, created, updated)
		VALUES ('01900000-0000-7000-8000-000000000019', '%s', '%s', 'invoice.sent', 'pending', 0, false, $1, $1)`, ep, eventOf(failed)), now); err == nil {
		t.Error("a second original of the event for the endpoint was stored after the upgrade")
	}
	if _, err := conn.Exec(ctx, `DELETE FROM deliveries WHERE id = $1`, head); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM queue WHERE delivery_id = $1) + (SELECT count(*) FROM attempts WHERE delivery_id = $1)`,
		head).Scan(&left); err != nil || left != 0 {
		t.Errorf("the deleted delivery's queue row and attempts: %d left (%v)", left, err)
	}
	if _, err := conn.Exec(ctx, `DELETE FROM deliveries WHERE id = $1`, original); err == nil {
		t.Error("a delivery that a replay names was deleted after the upgrade")
	}
}
