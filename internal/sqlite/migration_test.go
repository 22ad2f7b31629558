package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// TestMigrate_RehearsalAndPlatformAudit upgrades a database from before
// the stored rehearsal flag (0010) and the platform's audit log (0011),
// with a rehearsal's delivery in it (its schedule factor over 1), a plain
// one, and an account's audit entry: after the upgrade the rehearsal's
// delivery says it is one and the other does not, the entry is still the
// account's (the table was rebuilt), and a platform entry is stored and
// listed apart.
func TestMigrate_RehearsalAndPlatformAudit(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	applyUntil(t, db, "migration/0010")
	now := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC).UnixMilli()
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
		`INSERT INTO accounts VALUES ('` + account + `', 'Acme', NULL, ?)`,
		`INSERT INTO endpoints (id, scope, account_id, url, enabled_events, relationships, api_version, livemode, description, status, secret, created, updated)
			VALUES ('` + endpoint + `', 'account', '` + account + `', 'https://example.com/hook', '["*"]', '[]', '2026-09-23', 1, '', 'enabled', 'whsec_x', ?1, ?1)`,
		`INSERT INTO events (id, type, api_version, livemode, test, account_id, object, created)
			VALUES ('` + event + `', 'ping', '2026-09-23', 1, 1, '` + account + `', '{}', ?)`,
		`INSERT INTO events (id, type, api_version, livemode, test, account_id, object, created)
			VALUES ('` + event2 + `', 'ping', '2026-09-23', 1, 1, '` + account + `', '{}', ?)`,
		`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, reason, attempt_count, manual, body, created, updated, schedule_factor)
			VALUES ('` + rehearsal + `', '` + endpoint + `', '` + event + `', 'ping', 'failed_permanently', 'schedule_exhausted', 8, 0, '{}', ?1, ?1, 727)`,
		`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, attempt_count, manual, body, created, updated)
			VALUES ('` + plain + `', '` + endpoint + `', '` + event2 + `', 'ping', 'delivered', 1, 0, '{}', ?1, ?1)`,
		`INSERT INTO audit_log VALUES ('` + entry + `', '` + account + `', 'admin', NULL, 'webhook_endpoint.created', 'webhook_endpoint', '` + endpoint + `', 'succeeded', NULL, ?)`,
	} {
		if _, err := db.ExecContext(ctx, q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err := Open(ctx, path) // applies 0010 and later
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
		TargetType: webhooks.TargetEndpoint, TargetID: webhooks.NewID(), Outcome: webhooks.AuditSucceeded, Created: time.UnixMilli(now)}
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
