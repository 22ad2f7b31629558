package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
)

// InsertAudit implements driver.Tx. An entry with no account is the
// platform's, stored with account_id NULL.
func (t *txn) InsertAudit(ctx context.Context, e *webhooks.AuditEntry) error {
	_, err := t.Exec(ctx, `INSERT INTO audit_log (id, account_id, actor_type, actor_id, action, target_type, target_id, outcome, error_code, created)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		e.ID, nullString(e.AccountID), e.Actor.Type, nullString(e.Actor.ID), e.Action, e.TargetType, e.TargetID, e.Outcome, nullString(e.ErrorCode), ts(e.Created))
	return err
}

// ListAudit implements driver.Store: accountID "" lists the platform's
// entries, those whose account_id is NULL.
func (s *Store) ListAudit(ctx context.Context, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.AuditEntry], error) {
	q := listQuery{
		table: "audit_log",
		cols:  "id, account_id, actor_type, actor_id, action, target_type, target_id, outcome, error_code, created",
	}
	if accountID == "" {
		q.conds = append(q.conds, "account_id IS NULL")
	} else {
		q.whereID("account_id", accountID)
	}
	return read(list(ctx, s.pool, q, p, func(r scanner) (*webhooks.AuditEntry, error) {
		var e webhooks.AuditEntry
		var account, actorID, code pgtype.Text
		var created pgtype.Timestamptz
		err := r.Scan(&e.ID, &account, &e.Actor.Type, &actorID, &e.Action, &e.TargetType, &e.TargetID, &e.Outcome, &code, &created)
		e.AccountID, e.Actor.ID, e.ErrorCode, e.Created = account.String, actorID.String, code.String, fromTS(created)
		return &e, err
	}))
}
