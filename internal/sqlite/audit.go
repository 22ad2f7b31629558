package sqlite

import (
	"context"
	"database/sql"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// insertAudit records a succeeded change described by base (its actor), in
// the transaction that makes the change. A nil base records nothing.
func insertAudit(ctx context.Context, tx *txn, base *webhooks.AuditEntry, accountID, action, targetType, targetID string, now time.Time) error {
	if base == nil {
		return nil
	}
	e := *base
	e.AccountID, e.Action, e.TargetType, e.TargetID = accountID, action, targetType, targetID
	if e.Outcome == "" {
		e.Outcome = webhooks.AuditSucceeded
	}
	if e.Created.IsZero() {
		e.Created = now
	}
	return writeAudit(ctx, tx, &e)
}

func writeAudit(ctx context.Context, q querier, e *webhooks.AuditEntry) error {
	if e.ID == "" {
		e.ID = webhooks.NewID()
	}
	_, err := q.ExecContext(ctx, `INSERT INTO audit_log (id, account_id, actor_type, actor_id, action, target_type, target_id, outcome, error_code, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.AccountID, e.Actor.Type, nullString(e.Actor.ID), e.Action, e.TargetType, e.TargetID, e.Outcome, nullString(e.ErrorCode), ms(e.Created))
	return err
}

// RecordAudit implements webhooks.Store.
func (s *Store) RecordAudit(ctx context.Context, e *webhooks.AuditEntry) error {
	return s.inTx(ctx, func(tx *txn) error { return writeAudit(ctx, tx, e) })
}

// ListAudit implements webhooks.Store.
func (s *Store) ListAudit(ctx context.Context, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.AuditEntry], error) {
	q := listQuery{
		table: "audit_log",
		cols:  "id, account_id, actor_type, actor_id, action, target_type, target_id, outcome, error_code, created",
		where: []string{"account_id = ?"},
		args:  []any{accountID},
	}
	return list(ctx, s.read, q, p, func(r scanner) (*webhooks.AuditEntry, error) {
		var e webhooks.AuditEntry
		var actorID, code sql.NullString
		var created sql.NullInt64
		err := r.Scan(&e.ID, &e.AccountID, &e.Actor.Type, &actorID, &e.Action, &e.TargetType, &e.TargetID, &e.Outcome, &code, &created)
		e.Actor.ID, e.ErrorCode, e.Created = actorID.String, code.String, fromMS(created)
		return &e, err
	})
}
