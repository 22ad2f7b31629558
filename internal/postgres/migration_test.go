package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/migrate"
)

// TestMigrate_QueueKeepsWork upgrades a database from before the work
// queue had its own table (migration 0003) with work in it: a due
// delivery, a claimed one, and one whose endpoint was disabled during its
// attempt. Nothing is lost: the due one is claimed, the claimed one is
// held until its claim's attempt records, and the attempt in flight still
// records.
func TestMigrate_QueueKeepsWork(t *testing.T) {
	ctx := t.Context()
	schema := NewSchema(t)
	conn := connect(t)
	defer conn.Close(context.Background())
	migrateBefore(t, conn, schema, "migration/0003")
	now := time.Now().UTC().Truncate(time.Millisecond)
	const (
		account  = "01900000-0000-7000-8000-000000000001"
		company  = "01900000-0000-7000-8000-000000000002"
		endpoint = "01900000-0000-7000-8000-000000000003"
		event    = "01900000-0000-7000-8000-000000000004"
		due      = "01900000-0000-7000-8000-000000000011"
		claimed  = "01900000-0000-7000-8000-000000000012"
		ended    = "01900000-0000-7000-8000-000000000013"
	)
	for _, q := range []string{
		`INSERT INTO accounts VALUES ('` + account + `', 'Acme', NULL, $1)`,
		`INSERT INTO companies VALUES ('` + company + `', '` + account + `', 'B12345674', 'Acme', $1)`,
		`INSERT INTO endpoints (id, scope, company_id, url, enabled_events, relationships, api_version, livemode, description, status, secret, created, updated)
			VALUES ('` + endpoint + `', 'company', '` + company + `', 'https://example.com/hook', '{*}', '{}', '2026-09-23', true, '', 'enabled', 'whsec_x', $1, $1)`,
		`INSERT INTO events (id, type, api_version, livemode, test, account_id, company_id, object, created)
			VALUES ('` + event + `', 'invoice.sent', '2026-09-23', true, false, '` + account + `', '` + company + `', '{}', $1)`,
		`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, attempt_count, next_attempt_at, manual, body, created, updated)
			VALUES ('` + due + `', '` + endpoint + `', '` + event + `', 'invoice.sent', 'pending', 0, $1, false, '{}', $1, $1)`,
		`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, replay_of, status, attempt_count, next_attempt_at, manual, body, lease_token, lease_expires, created, updated)
			VALUES ('` + claimed + `', '` + endpoint + `', '` + event + `', 'invoice.sent', '` + due + `', 'pending', 0, $1, false, '{}', 'token-claimed', $1::timestamptz + interval '1 hour', $1, $1)`,
		`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, replay_of, status, reason, attempt_count, manual, body, lease_token, lease_expires, created, updated)
			VALUES ('` + ended + `', '` + endpoint + `', '` + event + `', 'invoice.sent', '` + due + `', 'failed', 'endpoint_disabled', 0, false, '{}', 'token-ended', $1::timestamptz + interval '1 hour', $1, $1)`,
	} {
		if _, err := conn.Exec(ctx, q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	s := stackOf(t, MustOpen(t, schema)) // applies 0003 and later
	claims, err := s.ClaimDeliveries(ctx, webhooks.ClaimRequest{Now: now, Limit: 10, Token: "token-new", LeaseUntil: now.Add(time.Minute), PerEndpoint: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != 1 || claims[0].Delivery.ID != due {
		t.Fatalf("claimed after the upgrade: got %d claims, want exactly the due delivery", len(claims))
	}
	if st, err := s.QueueStats(ctx, now); err != nil || st.InFlight != 3 {
		t.Errorf("in flight after the upgrade: got %d (%v), want 3 (the two old claims and the new one)", st.InFlight, err)
	}
	delivered := func(id, token string) *webhooks.AttemptRecord {
		return &webhooks.AttemptRecord{Token: token,
			Attempt:    &webhooks.Attempt{DeliveryID: id, Number: 1, StartedAt: now, Duration: time.Millisecond, ResponseStatus: 200},
			Transition: webhooks.Transition{Status: webhooks.DeliveryDelivered}}
	}
	if err := s.RecordAttempts(ctx, []*webhooks.AttemptRecord{delivered(claimed, "token-claimed"), delivered(ended, "token-ended")}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{claimed, ended} {
		d, err := s.FindDelivery(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != webhooks.DeliveryDelivered || len(d.Attempts) != 1 {
			t.Errorf("delivery %s after its old claim's attempt recorded: %s with %d attempts, want delivered with 1", id, d.Status, len(d.Attempts))
		}
	}
	if st, err := s.QueueStats(ctx, now); err != nil || st.InFlight != 1 || st.Due != 0 {
		t.Errorf("queue after the records: %+v (%v), want the new claim alone", st, err)
	}
}

// TestMigrate_RehearsalAndPlatformAudit upgrades a database from before
// the stored rehearsal flag (0011) and the platform's audit log (0012),
// with a rehearsal's delivery in it (its schedule factor over 1), a plain
// one, and an account's audit entry: after the upgrade the rehearsal's
// delivery says it is one and the other does not, the entry is still the
// account's, and a platform entry is stored and listed apart.
func TestMigrate_RehearsalAndPlatformAudit(t *testing.T) {
	ctx := t.Context()
	schema := NewSchema(t)
	conn := connect(t)
	defer conn.Close(context.Background())
	migrateBefore(t, conn, schema, "migration/0011")
	now := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
	const (
		account   = "01900000-0000-7000-8000-000000000001"
		endpoint  = "01900000-0000-7000-8000-000000000003"
		event     = "01900000-0000-7000-8000-000000000004"
		event2    = "01900000-0000-7000-8000-000000000005"
		rehearsal = "01900000-0000-7000-8000-000000000011"
		plain     = "01900000-0000-7000-8000-000000000012"
		entry     = "01900000-0000-7000-8000-000000000021"
	)
	for _, q := range []string{
		`INSERT INTO accounts VALUES ('` + account + `', 'Acme', NULL, $1)`,
		`INSERT INTO endpoints (id, scope, account_id, url, enabled_events, relationships, api_version, livemode, description, status, secret, created, updated)
			VALUES ('` + endpoint + `', 'account', '` + account + `', 'https://example.com/hook', '{*}', '{}', '2026-09-23', true, '', 'enabled', 'whsec_x', $1, $1)`,
		`INSERT INTO events (id, type, api_version, livemode, test, account_id, object, created)
			VALUES ('` + event + `', 'ping', '2026-09-23', true, true, '` + account + `', '{}', $1)`,
		`INSERT INTO events (id, type, api_version, livemode, test, account_id, object, created)
			VALUES ('` + event2 + `', 'ping', '2026-09-23', true, true, '` + account + `', '{}', $1)`,
		`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, reason, attempt_count, manual, body, created, updated, schedule_factor)
			VALUES ('` + rehearsal + `', '` + endpoint + `', '` + event + `', 'ping', 'failed_permanently', 'schedule_exhausted', 8, false, '{}', $1, $1, 727)`,
		`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, attempt_count, manual, body, created, updated)
			VALUES ('` + plain + `', '` + endpoint + `', '` + event2 + `', 'ping', 'delivered', 1, false, '{}', $1, $1)`,
		`INSERT INTO audit_log VALUES ('` + entry + `', '` + account + `', 'admin', NULL, 'webhook_endpoint.created', 'webhook_endpoint', '` + endpoint + `', 'succeeded', NULL, $1)`,
	} {
		if _, err := conn.Exec(ctx, q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	s := MustOpen(t, schema) // applies 0011 and later
	for id, want := range map[string]bool{rehearsal: true, plain: false} {
		d, err := s.FindDelivery(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Rehearsal != want {
			t.Errorf("delivery %s after the upgrade: rehearsal %v, want %v", id, d.Rehearsal, want)
		}
	}
	l, err := s.ListAudit(ctx, account, webhooks.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Data) != 1 || l.Data[0].ID != entry || l.Data[0].AccountID != account || l.Data[0].TargetID != endpoint {
		t.Errorf("the account's audit log after the upgrade: got %+v, want its entry %s", l.Data, entry)
	}
	platform := &webhooks.AuditEntry{ID: webhooks.NewID(), Actor: webhooks.Actor{Type: webhooks.ActorAdmin}, Action: webhooks.AuditEndpointCreated,
		TargetType: webhooks.TargetEndpoint, TargetID: webhooks.NewID(), Outcome: webhooks.AuditSucceeded, Created: now}
	if err := s.InTx(ctx, func(tx driver.Tx) error { return tx.InsertAudit(ctx, platform) }); err != nil {
		t.Fatalf("a platform entry after the upgrade: %v", err)
	}
	if l, err := s.ListAudit(ctx, "", webhooks.Page{Limit: 10}); err != nil || len(l.Data) != 1 || l.Data[0].ID != platform.ID {
		t.Errorf("the platform's audit log: got %v (%v), want [%s]", l, err, platform.ID)
	}
	if l, err := s.ListAudit(ctx, account, webhooks.Page{Limit: 10}); err != nil || len(l.Data) != 1 {
		t.Errorf("the account's audit log after a platform entry: got %v (%v), want its one entry", l, err)
	}
}

// migrateBefore applies, on conn, the migrations before the one named
// first (such as "migration/0018") to schema, as a build before it did.
func migrateBefore(t *testing.T, conn *pgx.Conn, schema, first string) {
	t.Helper()
	ctx := t.Context()
	if _, err := conn.Exec(ctx, `SET search_path TO `+schema); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (name text PRIMARY KEY, applied timestamptz NOT NULL)`); err != nil {
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
		body, err := migrations.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations VALUES ($1, now())`, name); err != nil {
			t.Fatal(err)
		}
	}
}
