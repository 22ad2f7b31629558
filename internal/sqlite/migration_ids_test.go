package sqlite

import (
	"crypto/sha256"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// TestMigrate_BinaryIDs upgrades a database of the schema before 0017
// (ids as text), with a row in every table that holds ids: afterwards no
// column holds an id as text, every object reads back through the store
// with its ids as they were, a value that is not an id (an audit entry's
// target named by its text) is kept as it was, and the database takes
// new writes that find the old rows.
func TestMigrate_BinaryIDs(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	applyUntil(t, db, "migration/0017")
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	const (
		account  = "01900000-0000-7000-8000-000000000001"
		managed  = "01900000-0000-7000-8000-000000000002"
		company  = "01900000-0000-7000-8000-000000000003"
		endpoint = "01900000-0000-7000-8000-000000000004"
		event    = "01900000-0000-7000-8000-000000000005"
		original = "01900000-0000-7000-8000-000000000006"
		replay   = "01900000-0000-7000-8000-000000000007"
		waiting  = "01900000-0000-7000-8000-000000000008"
		event2   = "01900000-0000-7000-8000-000000000009"
		apiKey   = "01900000-0000-7000-8000-00000000000a"
		entry    = "01900000-0000-7000-8000-00000000000b"
		outbox   = "01900000-0000-7000-8000-00000000000c"
		erasure  = "01900000-0000-7000-8000-00000000000d"
		request  = "01900000-0000-7000-8000-00000000000e"
		body     = `{"id":"` + event + `","type":"invoice.sent"}`
	)
	hash := sha256.Sum256([]byte("key"))
	for _, q := range []string{
		`INSERT INTO accounts (id, name, provisioned_by, created) VALUES ('` + account + `', 'Acme', NULL, ?1), ('` + managed + `', 'Client', '` + account + `', ?1)`,
		`INSERT INTO api_keys VALUES ('` + apiKey + `', '` + account + `', ?2, ?1)`,
		`INSERT INTO companies (id, account_id, nif, name, created) VALUES ('` + company + `', '` + account + `', 'B12345674', 'Acme', ?1)`,
		`INSERT INTO endpoints (id, scope, company_id, url, enabled_events, relationships, api_version, livemode, description, status, secret, created, updated, ordered)
			VALUES ('` + endpoint + `', 'company', '` + company + `', 'https://example.com/hook', '["*"]', '[]', '2026-09-23', 1, '', 'enabled', 'whsec_x', ?1, ?1, 1)`,
		`INSERT INTO events (id, type, api_version, livemode, test, account_id, company_id, object, created, ordering_key)
			VALUES ('` + event + `', 'invoice.sent', '2026-09-23', 1, 0, '` + account + `', '` + company + `', '{"total":"1.00"}', ?1, 'inv-1'),
			('` + event2 + `', 'invoice.sent', '2026-09-23', 1, 0, '` + account + `', '` + company + `', '{"total":"2.00"}', ?1 + 1, 'inv-1')`,
		`INSERT INTO idempotency_keys VALUES ('idem-1', ?2, '` + event + `', ?1)`,
		`INSERT INTO bodies VALUES ('` + event + `', 1, CAST('` + body + `' AS BLOB)), ('` + event2 + `', 1, CAST('` + body + `' AS BLOB))`,
		`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, attempt_count, last_response_status, manual, body_n, created, updated, ordering_key)
			VALUES ('` + original + `', '` + endpoint + `', '` + event + `', 'invoice.sent', 'failed', 1, 500, 0, 1, ?1, ?1, 'inv-1')`,
		`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, replay_of, status, attempt_count, manual, body_n, next_attempt_at, created, updated, ordering_key, due_since)
			VALUES ('` + replay + `', '` + endpoint + `', '` + event + `', 'invoice.sent', '` + original + `', 'pending', 0, 1, 1, ?1, ?1 + 2, ?1 + 2, 'inv-1', ?1)`,
		`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, attempt_count, manual, body_n, next_attempt_at, created, updated, ordering_key, waiting_for)
			VALUES ('` + waiting + `', '` + endpoint + `', '` + event2 + `', 'invoice.sent', 'pending', 0, 0, 1, ?1, ?1 + 3, ?1 + 3, 'inv-1', '` + replay + `')`,
		`INSERT INTO attempts VALUES ('` + original + `', 1, ?1, 12, 500, CAST('oops' AS BLOB), NULL, 0)`,
		`INSERT INTO audit_log VALUES ('` + entry + `', '` + account + `', 'api_key', '` + apiKey + `', 'event_type.created', 'event_type', 'invoice.sent', 'succeeded', NULL, ?1)`,
		`INSERT INTO outbox VALUES ('` + outbox + `', 'endpoint.disabled', '` + endpoint + `', '{"id":"` + outbox + `","kind":"endpoint.disabled","endpoint_id":"` + endpoint + `"}', ?1)`,
		`INSERT INTO erasures (id, account_id, after_created, after_id, created) VALUES ('` + erasure + `', '` + managed + `', ?1, '` + event + `', ?1)`,
		`INSERT INTO relay_sessions VALUES ('` + endpoint + `', 'session-1', ?1 + 60000)`,
		`INSERT INTO relay_requests (id, endpoint_id, delivery_id, header, body, created) VALUES ('` + request + `', '` + endpoint + `', '` + original + `', '{}', X'', ?1)`,
	} {
		if _, err := db.ExecContext(ctx, q, now.UnixMilli(), hash[:]); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err := Open(ctx, path) // applies 0017
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	CheckBinaryIDs(t, s)

	if a, err := s.FindAccount(ctx, managed); err != nil || a.ProvisionedBy != account {
		t.Errorf("the managed account: %+v, %v", a, err)
	}
	if k, err := s.FindAPIKey(ctx, hash[:]); err != nil || k.ID != apiKey || k.AccountID != account {
		t.Errorf("the API key: %+v, %v", k, err)
	}
	if l, err := s.ListCompanies(ctx, account, webhooks.Page{Limit: 10}); err != nil || len(l.Data) != 1 || l.Data[0].ID != company {
		t.Errorf("the account's companies: %v, %v", l, err)
	}
	if e, err := s.FindEndpoint(ctx, endpoint); err != nil || e.CompanyID != company {
		t.Errorf("the endpoint: %+v, %v", e, err)
	}
	if e, err := s.FindEvent(ctx, event); err != nil || e.CompanyID != company || e.AccountID != account {
		t.Errorf("the event: %+v, %v", e, err)
	}
	if l, err := s.ListEvents(ctx, webhooks.EventFilter{CompanyID: company, Type: "invoice.sent"}, webhooks.Page{Limit: 1}); err != nil || len(l.Data) != 1 || l.Data[0].ID != event2 {
		t.Errorf("the company's events of a type, newest first: %v, %v", l, err)
	} else if l, err := s.ListEvents(ctx, webhooks.EventFilter{CompanyID: company}, webhooks.Page{Limit: 1, StartingAfter: event2}); err != nil || len(l.Data) != 1 || l.Data[0].ID != event {
		t.Errorf("the next page: %v, %v", l, err)
	}
	d, err := s.FindDelivery(ctx, original)
	if err != nil || d.EndpointID != endpoint || d.EventID != event || string(d.Body) != body || len(d.Attempts) != 1 || d.Attempts[0].ResponseBody != "oops" {
		t.Errorf("the original delivery: %+v, %v", d, err)
	}
	if d, err := s.FindDelivery(ctx, waiting); err != nil || d.WaitingFor != replay {
		t.Errorf("the waiting delivery: %+v, %v", d, err)
	}
	l, err := s.ListDeliveries(ctx, webhooks.DeliveryFilter{EndpointID: endpoint, EventID: event}, webhooks.Page{Limit: 10})
	if err != nil || len(l.Data) != 2 || l.Data[0].ID != replay || l.Data[0].ReplayOf != original || l.Data[1].ID != original {
		t.Errorf("the event's deliveries: %v, %v", l, err)
	}
	if l, err := s.ListAudit(ctx, account, webhooks.Page{Limit: 10}); err != nil || len(l.Data) != 1 || l.Data[0].Actor.ID != apiKey || l.Data[0].TargetID != "invoice.sent" {
		t.Errorf("the audit log: %v, %v", l, err)
	}
	if session, err := s.RelaySession(ctx, endpoint, now); err != nil || session != "session-1" {
		t.Errorf("the relay session: %q, %v", session, err)
	}
	err = s.InTx(ctx, func(tx driver.Tx) error {
		entries, err := tx.Outbox(ctx, 10)
		if err != nil || len(entries) != 1 || entries[0].ID != outbox {
			t.Errorf("the outbox: %v, %v", entries, err)
		}
		e, err := tx.NextErasure(ctx)
		if err != nil || e == nil || e.ID != erasure || e.AccountID != managed {
			t.Errorf("the erasure: %+v, %v", e, err)
		}
		// A new delivery of the event finds its body and its original.
		_, err = tx.InsertDeliveries(ctx, []*webhooks.Delivery{{ID: webhooks.NewID(), EndpointID: endpoint, EventID: event, EventType: "invoice.sent",
			ReplayOf: original, Status: webhooks.DeliveryPending, Body: []byte(body), NextAttemptAt: now, Created: now}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var bodies int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM bodies WHERE event_id = ?`, dbID(event)).Scan(&bodies); err != nil || bodies != 1 {
		t.Errorf("the event's bodies after a new replay: %d (%v), want still 1", bodies, err)
	}
	CheckBinaryIDs(t, s)
}
