package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// The data lifecycle's steps (SPEC 19): renames, deletions, erasures and
// the scrub that makes erased bytes leave the files.

// UpdateAccount implements driver.Tx.
func (t *txn) UpdateAccount(ctx context.Context, a *webhooks.Account) error {
	return t.updated(t.ExecContext(ctx, `UPDATE accounts SET name = ? WHERE id = ? AND deleted IS NULL`, a.Name, dbID(a.ID)))("account")
}

// UpdateCompany implements driver.Tx.
func (t *txn) UpdateCompany(ctx context.Context, c *webhooks.Company) error {
	return t.updated(t.ExecContext(ctx, `UPDATE companies SET name = ? WHERE id = ? AND deleted IS NULL`, c.Name, dbID(c.ID)))("company")
}

// updated turns an UPDATE of one row that changed none into ENOTFOUND.
func (t *txn) updated(res sql.Result, err error) func(kind string) error {
	return func(kind string) error {
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound(kind)
		}
		return nil
	}
}

// LockAccount implements driver.Tx: the write transaction holds the
// database already.
func (t *txn) LockAccount(ctx context.Context, id string) (*webhooks.Account, error) {
	return findAccount(ctx, t, id)
}

// AccountCompanies implements driver.Tx.
func (t *txn) AccountCompanies(ctx context.Context, accountID string) ([]*webhooks.Company, error) {
	return queryAll(ctx, t, scanCompany, `SELECT `+companyCols+` FROM companies WHERE account_id = ? AND deleted IS NULL ORDER BY created, id`, dbID(accountID))
}

// HasManagedAccounts implements driver.Tx.
func (t *txn) HasManagedAccounts(ctx context.Context, accountID string) (bool, error) {
	var n int
	err := t.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM accounts WHERE provisioned_by = ? AND deleted IS NULL LIMIT 1)`, dbID(accountID)).Scan(&n)
	return n > 0, err
}

// DeleteCompany implements driver.Tx. The NIF is replaced by the
// company's id (its text), which no NIF can equal, so that the unique
// index frees the NIF and still holds.
func (t *txn) DeleteCompany(ctx context.Context, id string, now time.Time) error {
	return t.updated(t.ExecContext(ctx, `UPDATE companies SET deleted = ?, name = '', nif = ? WHERE id = ? AND deleted IS NULL`, ms(now), id, dbID(id)))("company")
}

// DeleteAccount implements driver.Tx.
func (t *txn) DeleteAccount(ctx context.Context, id string, now time.Time) error {
	if err := t.updated(t.ExecContext(ctx, `UPDATE accounts SET deleted = ?, name = '' WHERE id = ? AND deleted IS NULL`, ms(now), dbID(id)))("account"); err != nil {
		return err
	}
	_, err := t.ExecContext(ctx, `DELETE FROM api_keys WHERE account_id = ?`, dbID(id))
	return err
}

// FindDeletedAccount implements driver.Store.
func (s *Store) FindDeletedAccount(ctx context.Context, id string) (*webhooks.Account, error) {
	var deleted sql.NullInt64
	var a webhooks.Account
	var created sql.NullInt64
	err := s.read.QueryRowContext(ctx, `SELECT id, name, provisioned_by, created, deleted FROM accounts WHERE id = ? AND deleted IS NOT NULL`, dbID(id)).
		Scan((*dbID)(&a.ID), &a.Name, (*dbID)(&a.ProvisionedBy), &created, &deleted)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("account")
	} else if err != nil {
		return nil, dbError(err)
	}
	a.Created, a.Deleted = fromMS(created), fromMS(deleted)
	return &a, nil
}

// endPending ends failed with ReasonEventErased the pending deliveries
// that set (a condition on the deliveries table, whose arguments are
// numbered from ?3) selects, as EndPending does: a claimed one keeps its
// claim, so that its attempt still records. A delivery of another event
// that waited behind one of them in its chain (SPEC 18) is released, due
// now: an erasure must not hold back the key's later events.
func (t *txn) endPendingSet(ctx context.Context, now time.Time, set string, args ...any) error {
	_, err := t.ExecContext(ctx, `UPDATE deliveries SET status = ?1, reason = ?2, next_attempt_at = NULL, due_since = NULL, manual = 0, parked = 0,
		waiting_for = NULL
		WHERE status = 'p' AND `+set,
		append([]any{dbStatus(webhooks.DeliveryFailed), webhooks.ReasonEventErased}, args...)...)
	if err != nil {
		return err
	}
	_, err = t.ExecContext(ctx, `UPDATE deliveries SET waiting_for = NULL, due_since = ?1
		WHERE waiting_for IS NOT NULL AND status = 'p' AND (SELECT w.status FROM deliveries w WHERE w.id = deliveries.waiting_for) <> 'p'`, ms(now))
	return err
}

// EraseEvents implements driver.Tx.
func (t *txn) EraseEvents(ctx context.Context, eventIDs []string, at time.Time) error {
	if len(eventIDs) == 0 {
		return nil
	}
	args := idArgs(eventIDs)
	in := `(` + placeholders(len(eventIDs)) + `)`
	if err := t.endPendingSet(ctx, at, `event_id IN (`+numbered(3, len(eventIDs))+`)`, args...); err != nil {
		return err
	}
	for _, q := range []string{
		`UPDATE attempts SET response_body = X'' WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id IN ` + in + `) AND length(response_body) > 0`,
		`UPDATE deliveries SET body_n = NULL WHERE event_id IN ` + in + ` AND body_n IS NOT NULL`,
		`DELETE FROM bodies WHERE event_id IN ` + in,
	} {
		if _, err := t.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	_, err := t.ExecContext(ctx, `UPDATE events SET object = '', traceparent = NULL, erased = coalesce(erased, ?) WHERE id IN `+in,
		append([]any{ms(at)}, args...)...)
	return err
}

// erasureEvents is the condition on events (alias e) that selects an
// erasure's: ?4 its company, or ?5 its account.
const erasureEvents = `e.test = 0 AND ((?4 IS NOT NULL AND e.company_id = ?4) OR (?5 IS NOT NULL AND e.account_id = ?5 AND e.operational = 0))`

// EndPendingOf implements driver.Tx: through the endpoint's pending
// deliveries (an index holds them), each event read by its key.
func (t *txn) EndPendingOf(ctx context.Context, endpointID string, e *webhooks.Erasure, now time.Time) error {
	return t.endPendingSet(ctx, now, `endpoint_id = ?3 AND EXISTS (SELECT 1 FROM events e WHERE e.id = deliveries.event_id AND `+erasureEvents+`)`,
		dbID(endpointID), nullID(e.CompanyID), nullID(e.AccountID))
}

// InsertErasure implements driver.Tx.
func (t *txn) InsertErasure(ctx context.Context, e *webhooks.Erasure) error {
	_, err := t.ExecContext(ctx, `INSERT INTO erasures (id, company_id, account_id, created) VALUES (?, ?, ?, ?)`,
		dbID(e.ID), nullID(e.CompanyID), nullID(e.AccountID), ms(e.Created))
	return err
}

// NextErasure implements driver.Tx. The write transaction holds the
// database: no other can take the job meanwhile.
func (t *txn) NextErasure(ctx context.Context) (*webhooks.Erasure, error) {
	var e webhooks.Erasure
	var created sql.NullInt64
	err := t.QueryRowContext(ctx, `SELECT id, company_id, account_id, created FROM erasures ORDER BY created, id LIMIT 1`).
		Scan((*dbID)(&e.ID), (*dbID)(&e.CompanyID), (*dbID)(&e.AccountID), &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	e.Created = fromMS(created)
	return &e, nil
}

// EraseChunk implements driver.Tx: the events_company and events_account
// indexes, in (created, rowid) order, give the next chunk after the job's
// cursor without reading what earlier chunks erased.
func (t *txn) EraseChunk(ctx context.Context, e *webhooks.Erasure, limit int) (int, error) {
	var afterCreated sql.NullInt64
	var afterID dbID
	if err := t.QueryRowContext(ctx, `SELECT after_created, after_id FROM erasures WHERE id = ?`, dbID(e.ID)).Scan(&afterCreated, &afterID); err != nil {
		return 0, fmt.Errorf("erasure %s: %w", e.ID, err)
	}
	rows, err := t.QueryContext(ctx, qEraseChunk(e.CompanyID != ""), nullID(e.CompanyID), nullID(e.AccountID), afterCreated.Int64, afterID, limit)
	if err != nil {
		return 0, err
	}
	var ids []string
	var last int64
	for rows.Next() {
		var id string
		if err := rows.Scan((*dbID)(&id), &last); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	if err := t.EraseEvents(ctx, ids, e.Created); err != nil {
		return 0, err
	}
	_, err = t.ExecContext(ctx, `UPDATE erasures SET after_created = ?, after_id = ? WHERE id = ?`, last, dbID(ids[len(ids)-1]), dbID(e.ID))
	return len(ids), err
}

// qEraseChunk selects the next events of a company's erasure (or an
// account's), after the cursor: ?1 the company, ?2 the account, ?3 and ?4
// the created and id of the last event erased, ?5 how many. The cursor's
// rowid orders it among the events of its millisecond (0 before the first
// chunk, or if it is gone: an event erased twice is erased once).
func qEraseChunk(company bool) string {
	index, owner := "events_company", "company_id = ?1"
	if !company {
		index, owner = "events_account", "account_id = ?2 AND operational = 0"
	}
	return `SELECT id, created FROM events INDEXED BY ` + index + ` WHERE ` + owner + ` AND test = 0
		AND (created, rowid) > (?3, coalesce((SELECT rowid FROM events WHERE id = ?4), 0)) ORDER BY created, rowid LIMIT ?5`
}

// DeleteErasure implements driver.Tx.
func (t *txn) DeleteErasure(ctx context.Context, id string) error {
	_, err := t.ExecContext(ctx, `DELETE FROM erasures WHERE id = ?`, dbID(id))
	return err
}

// Scrub implements driver.Maintenance. Every connection deletes with
// secure_delete on (see Open), so a deletion or an update overwrites the
// content it frees in the database's pages; the WAL still holds the
// pages' earlier images until a checkpoint copies the latest into the
// database and TRUNCATE empties the file. The checkpoint waits (the busy
// timeout) for the readers of an older snapshot; if one still holds it,
// the WAL stays and Scrub says so.
func (s *Store) Scrub(ctx context.Context) error {
	var busy, logFrames, checkpointed int
	err := s.write.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &checkpointed)
	if err != nil {
		return dbError(err)
	}
	if busy != 0 {
		return fmt.Errorf("sqlite: scrub: the checkpoint could not finish (readers of an older snapshot): %d of %d frames copied", checkpointed, logFrames)
	}
	return nil
}

// numbered returns "?from, ?from+1, ..." for n arguments.
func numbered(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "?%d", from+i)
	}
	return b.String()
}
