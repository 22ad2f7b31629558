package sqlite

import (
	"context"
	"database/sql"

	webhooks "github.com/factuarea/webhooks"
)

// InsertAudit implements driver.Tx. An entry with no account is the
// platform's, stored with account_id NULL.
func (t *txn) InsertAudit(ctx context.Context, e *webhooks.AuditEntry) error {
	_, err := t.ExecContext(ctx, `INSERT INTO audit_log (id, account_id, actor_type, actor_id, action, target_type, target_id, outcome, error_code, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		dbID(e.ID), nullID(e.AccountID), e.Actor.Type, nullID(e.Actor.ID), e.Action, e.TargetType, dbID(e.TargetID), e.Outcome, nullString(e.ErrorCode), ms(e.Created))
	return err
}

// ListAudit implements driver.Store: accountID "" lists the platform's
// entries, those whose account_id is NULL.
func (s *Store) ListAudit(ctx context.Context, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.AuditEntry], error) {
	q := listQuery{
		table: "audit_log",
		cols:  "id, account_id, actor_type, actor_id, action, target_type, target_id, outcome, error_code, created",
		where: []string{"account_id = ?"},
		args:  []any{dbID(accountID)},
	}
	if accountID == "" {
		q.where, q.args = []string{"account_id IS NULL"}, nil
	}
	return read(list(ctx, s.read, q, p, func(r scanner) (*webhooks.AuditEntry, error) {
		var e webhooks.AuditEntry
		var code sql.NullString
		var created sql.NullInt64
		err := r.Scan((*dbID)(&e.ID), (*dbID)(&e.AccountID), &e.Actor.Type, (*dbID)(&e.Actor.ID), &e.Action, &e.TargetType, (*dbID)(&e.TargetID),
			&e.Outcome, &code, &created)
		e.ErrorCode, e.Created = code.String, fromMS(created)
		return &e, err
	}))
}
