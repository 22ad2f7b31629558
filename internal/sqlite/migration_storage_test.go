package sqlite

import (
	"database/sql"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/migrate"
	"github.com/factuarea/webhooks/internal/storetest"
)

// TestMigrate_Storage upgrades a database of the schema before 0016 (the
// body on every delivery), with an event delivered to two endpoints of
// one version (equal bodies), one of another (its own body) and a replay
// of that one, their attempts, and an erased event's delivery (no body):
// afterwards every delivery reads back its own bytes and attempts, equal
// bodies are stored once, the erased one has none, and a new replay of
// the event reuses its original's body.
func TestMigrate_Storage(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	applyUntil(t, db, "migration/0015")
	now := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC).UnixMilli()
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
			VALUES ('` + id + `', 'company', '` + company + `', 'https://example.com/` + id + `', '["*"]', '[]', '` + version + `', 1, '', 'enabled', 'whsec_x', ?1, ?1)`
	}
	delivery := func(id, ep, ev, replayOf, status, body string) string {
		rep := "NULL"
		if replayOf != "" {
			rep = "'" + replayOf + "'"
		}
		return `INSERT INTO deliveries (id, endpoint_id, event_id, event_type, replay_of, status, attempt_count, last_response_status, manual, body, created, updated)
			VALUES ('` + id + `', '` + ep + `', '` + ev + `', 'invoice.sent', ` + rep + `, '` + status + `', 1, 204, 0, CAST('` + body + `' AS BLOB), ?1, ?1)`
	}
	for _, q := range []string{
		`INSERT INTO accounts (id, name, created) VALUES ('` + account + `', 'Acme', ?1)`,
		`INSERT INTO companies (id, account_id, nif, name, created) VALUES ('` + company + `', '` + account + `', 'B12345674', 'Acme', ?1)`,
		endpoint(ep1, "2026-09-23"), endpoint(ep2, "2026-09-23"), endpoint(ep3, "2025-06-01"),
		`INSERT INTO events (id, type, api_version, livemode, test, account_id, company_id, object, created)
			VALUES ('` + event + `', 'invoice.sent', '2026-09-23', 1, 0, '` + account + `', '` + company + `', '{"total":"1.00"}', ?1)`,
		`INSERT INTO events (id, type, api_version, livemode, test, account_id, company_id, object, created, erased)
			VALUES ('` + erased + `', 'invoice.sent', '2026-09-23', 1, 0, '` + account + `', '` + company + `', '', ?1, ?1)`,
		delivery(d1, ep1, event, "", "delivered", latest),
		delivery(d2, ep2, event, "", "delivered", latest),
		delivery(d3, ep3, event, "", "failed_permanently", older),
		delivery(replay, ep3, event, d3, "delivered", older),
		delivery(d5, ep1, erased, "", "delivered", ""),
		`INSERT INTO attempts VALUES ('` + d1 + `', 1, ?1, 12, 204, CAST('thanks' AS BLOB), NULL, 0)`,
		`INSERT INTO attempts VALUES ('` + d3 + `', 1, ?1, 30, 410, CAST('gone' AS BLOB), NULL, 0)`,
		`INSERT INTO attempts VALUES ('` + replay + `', 1, ?1, 9, 204, CAST('' AS BLOB), NULL, 1)`,
		`INSERT INTO attempts VALUES ('` + d5 + `', 1, ?1, 9, 204, CAST('' AS BLOB), NULL, 0)`,
	} {
		if _, err := db.ExecContext(ctx, q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err := Open(ctx, path) // applies 0016
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	count := func(q string, args ...any) int {
		var n int
		if err := s.read.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	storetest.CheckBodiesUpgrade(t, s, storetest.BodiesUpgrade{
		Ep3: ep3, Event: event, Erased: erased, D1: d1, D2: d2, D3: d3, Replay: replay, D5: d5,
		Latest: latest, Older: older, Object: `{"total":"1.00"}`, Now: time.UnixMilli(now),
	}, func(eventID string) int {
		return count(`SELECT count(*) FROM bodies WHERE event_id = ?`, dbID(eventID))
	})
	if n := count(`SELECT count(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Errorf("%d rows whose foreign key refers to nothing", n)
	}
}

// applyUntil applies the migrations before the one named first, as the
// build that had only those did.
func applyUntil(t *testing.T, db *sql.DB, first string) {
	t.Helper()
	ctx := t.Context()
	if _, err := db.ExecContext(ctx, `CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	names, err := migrate.Files(migrations)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if name >= first {
			break
		}
		body, err := fs.ReadFile(migrations, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, 0)`, name); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigrate_RowidOrder upgrades a database of the schema before 0018
// (lists ordered by (created, id)) holding 25 events of one millisecond,
// each delivered to one endpoint: afterwards both lists, walked page by
// page, give every item once, the last inserted first.
func TestMigrate_RowidOrder(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	applyUntil(t, db, "migration/0018")
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	account, company, endpoint := webhooks.NewID(), webhooks.NewID(), webhooks.NewID()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO accounts (id, name, created) VALUES (?, 'Acme', ?)`, dbID(account), now.UnixMilli())
	exec(`INSERT INTO companies (id, account_id, nif, name, created) VALUES (?, ?, 'B12345674', 'Acme', ?)`, dbID(company), dbID(account), now.UnixMilli())
	exec(`INSERT INTO endpoints (id, scope, company_id, url, enabled_events, relationships, api_version, livemode, description, status, secret, created, updated)
		VALUES (?, 'company', ?, 'https://example.com/', '["*"]', '[]', '2026-09-23', 1, '', 'enabled', 'whsec_x', ?3, ?3)`, dbID(endpoint), dbID(company), now.UnixMilli())
	// The ids of a millisecond, inserted from the greatest down: the lists
	// give the last inserted first, whatever its id.
	var evIDs, dIDs []string
	for range 25 {
		evIDs, dIDs = append([]string{webhooks.NewID()}, evIDs...), append([]string{webhooks.NewID()}, dIDs...)
	}
	var events, deliveries []string
	for i := range 25 {
		ev, d := evIDs[i], dIDs[i]
		exec(`INSERT INTO events (id, type, api_version, livemode, test, account_id, company_id, object, created)
			VALUES (?, 'invoice.sent', '2026-09-23', 1, 0, ?, ?, '{}', ?)`, dbID(ev), dbID(account), dbID(company), now.UnixMilli())
		exec(`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, attempt_count, manual, created, updated)
			VALUES (?, ?, ?, 'invoice.sent', 'delivered', 1, 0, ?4, ?4)`, dbID(d), dbID(endpoint), dbID(ev), now.UnixMilli())
		events, deliveries = append([]string{ev}, events...), append([]string{d}, deliveries...)
	}
	db.Close()

	s, err := Open(ctx, path) // applies 0018
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	walk := func(name string, want []string, page func(webhooks.Page) ([]string, bool, error)) {
		t.Helper()
		var got []string
		p := webhooks.Page{Limit: 10}
		for {
			ids, more, err := page(p)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got = append(got, ids...)
			if !more || len(ids) == 0 {
				break
			}
			p.StartingAfter = ids[len(ids)-1]
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: listed %v\nwant %v", name, got, want)
		}
	}
	walk("events", events, func(p webhooks.Page) ([]string, bool, error) {
		l, err := s.ListEvents(ctx, webhooks.EventFilter{CompanyID: company}, p)
		if err != nil {
			return nil, false, err
		}
		var ids []string
		for _, e := range l.Data {
			ids = append(ids, e.ID)
		}
		return ids, l.HasMore, nil
	})
	walk("deliveries", deliveries, func(p webhooks.Page) ([]string, bool, error) {
		l, err := s.ListDeliveries(ctx, webhooks.DeliveryFilter{EndpointID: endpoint}, p)
		if err != nil {
			return nil, false, err
		}
		var ids []string
		for _, d := range l.Data {
			if d.Status != webhooks.DeliveryDelivered {
				t.Errorf("delivery %s: %q, want delivered", d.ID, d.Status)
			}
			ids = append(ids, d.ID)
		}
		return ids, l.HasMore, nil
	})
}
