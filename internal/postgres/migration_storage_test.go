package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/storetest"
)

// TestMigrate_Storage upgrades a database of the schema before 0017 (the
// body on every delivery), with an event delivered to two endpoints of
// one version (equal bodies), one of another (its own body) and a replay
// of that one, their attempts, and an erased event's delivery (no body):
// afterwards every delivery reads back its own bytes and attempts, equal
// bodies are stored once, the erased one has none, and a new replay of
// the event reuses its original's body.
func TestMigrate_Storage(t *testing.T) {
	ctx := t.Context()
	schema := NewSchema(t)
	conn := connect(t)
	defer conn.Close(context.Background())
	migrateBefore(t, conn, schema, "migration/0016")
	now := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
	const (
		account = "01900000-0000-7000-8000-000000000001"
		company = "01900000-0000-7000-8000-000000000002"
		ep1     = "01900000-0000-7000-8000-000000000003"
		ep2     = "01900000-0000-7000-8000-000000000004"
		ep3     = "01900000-0000-7000-8000-000000000005"
		event   = "01900000-0000-7000-8000-000000000006"
		erased  = "01900000-0000-7000-8000-000000000007"
		d1      = "01900000-0000-7000-8000-000000000011"
		d2      = "01900000-0000-7000-8000-000000000012"
		d3      = "01900000-0000-7000-8000-000000000013"
		replay  = "01900000-0000-7000-8000-000000000014"
		d5      = "01900000-0000-7000-8000-000000000015"
		latest  = `{"id":"` + event + `","type":"invoice.sent","api_version":"2026-09-23","data":{"type":"invoice.sent","object":{"total":"1.00"}}}`
		older   = `{"id":"` + event + `","type":"invoice.sent","api_version":"2025-06-01","data":{"object":{"total_cents":100}}}`
	)
	endpoint := func(id, version string) string {
		return `INSERT INTO endpoints (id, scope, company_id, url, enabled_events, relationships, api_version, livemode, description, status, secret, created, updated)
			VALUES ('` + id + `', 'company', '` + company + `', 'https://example.com/` + id + `', '{*}', '{}', '` + version + `', true, '', 'enabled', 'whsec_x', $1, $1)`
	}
	delivery := func(id, ep, ev, replayOf, status, body string) string {
		rep := "NULL"
		if replayOf != "" {
			rep = "'" + replayOf + "'"
		}
		return `INSERT INTO deliveries (id, endpoint_id, event_id, event_type, replay_of, status, attempt_count, last_response_status, manual, body, created, updated)
			VALUES ('` + id + `', '` + ep + `', '` + ev + `', 'invoice.sent', ` + rep + `, '` + status + `', 1, 204, false, convert_to('` + body + `', 'UTF8'), $1, $1)`
	}
	for _, q := range []string{
		`INSERT INTO accounts (id, name, created) VALUES ('` + account + `', 'Acme', $1)`,
		`INSERT INTO companies (id, account_id, nif, name, created) VALUES ('` + company + `', '` + account + `', 'B12345674', 'Acme', $1)`,
		endpoint(ep1, "2026-09-23"), endpoint(ep2, "2026-09-23"), endpoint(ep3, "2025-06-01"),
		`INSERT INTO events (id, type, api_version, livemode, test, account_id, company_id, object, created)
			VALUES ('` + event + `', 'invoice.sent', '2026-09-23', true, false, '` + account + `', '` + company + `', '{"total":"1.00"}', $1)`,
		`INSERT INTO events (id, type, api_version, livemode, test, account_id, company_id, object, created, erased)
			VALUES ('` + erased + `', 'invoice.sent', '2026-09-23', true, false, '` + account + `', '` + company + `', 'null', $1, $1)`,
		delivery(d1, ep1, event, "", "delivered", latest),
		delivery(d2, ep2, event, "", "delivered", latest),
		delivery(d3, ep3, event, "", "failed_permanently", older),
		delivery(replay, ep3, event, d3, "delivered", older),
		delivery(d5, ep1, erased, "", "delivered", ""),
		`INSERT INTO attempts VALUES ('` + d1 + `', 1, $1, 12, 204, 'thanks'::bytea, NULL, false)`,
		`INSERT INTO attempts VALUES ('` + d3 + `', 1, $1, 30, 410, 'gone'::bytea, NULL, false)`,
		`INSERT INTO attempts VALUES ('` + replay + `', 1, $1, 9, 204, ''::bytea, NULL, true)`,
		`INSERT INTO attempts VALUES ('` + d5 + `', 1, $1, 9, 204, ''::bytea, NULL, false)`,
	} {
		if _, err := conn.Exec(ctx, q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	s := MustOpen(t, schema) // applies 0016 and later
	storetest.CheckBodiesUpgrade(t, s, storetest.BodiesUpgrade{
		Ep3: ep3, Event: event, Erased: erased, D1: d1, D2: d2, D3: d3, Replay: replay, D5: d5,
		Latest: latest, Older: older, Object: `{"total":"1.00"}`, Now: now,
	}, func(eventID string) int {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM bodies WHERE event_id = $1`, eventID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	})
}
