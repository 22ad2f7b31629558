package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
)

// The data lifecycle's steps (SPEC 19): renames, deletions, erasures and
// the scrub that vacuums what they leave behind.

// oneRow turns an UPDATE of one row that changed none into ENOTFOUND.
func oneRow(tag pgconn.CommandTag, err error, kind string) error {
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return notFound(kind)
	}
	return nil
}

// UpdateAccount implements driver.Tx.
func (t *txn) UpdateAccount(ctx context.Context, a *webhooks.Account) error {
	if !webhooks.ValidID(a.ID) {
		return notFound("account")
	}
	tag, err := t.Exec(ctx, `UPDATE accounts SET name = $2 WHERE id = $1 AND deleted IS NULL`, a.ID, a.Name)
	return oneRow(tag, err, "account")
}

// UpdateCompany implements driver.Tx.
func (t *txn) UpdateCompany(ctx context.Context, c *webhooks.Company) error {
	if !webhooks.ValidID(c.ID) {
		return notFound("company")
	}
	tag, err := t.Exec(ctx, `UPDATE companies SET name = $2 WHERE id = $1 AND deleted IS NULL`, c.ID, c.Name)
	return oneRow(tag, err, "company")
}

// LockAccount implements driver.Tx: FOR NO KEY UPDATE, which creations
// and deletions take in turn, and which the foreign-key checks of
// inserts that refer to the account (KEY SHARE: an endpoint's, under its
// routes' lock) do not wait for, so that no two of them deadlock.
func (t *txn) LockAccount(ctx context.Context, id string) (*webhooks.Account, error) {
	if !webhooks.ValidID(id) {
		return nil, notFound("account")
	}
	a, err := scanAccount(t.QueryRow(ctx, `SELECT `+accountCols+` FROM accounts WHERE id = $1 AND deleted IS NULL FOR NO KEY UPDATE`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("account")
	}
	return a, err
}

// AccountCompanies implements driver.Tx.
func (t *txn) AccountCompanies(ctx context.Context, accountID string) ([]*webhooks.Company, error) {
	if !webhooks.ValidID(accountID) {
		return nil, nil
	}
	return queryAll(ctx, t, scanCompany, `SELECT `+companyCols+` FROM companies WHERE account_id = $1 AND deleted IS NULL ORDER BY created, id`, accountID)
}

// HasManagedAccounts implements driver.Tx.
func (t *txn) HasManagedAccounts(ctx context.Context, accountID string) (bool, error) {
	var yes bool
	err := t.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM accounts WHERE provisioned_by = $1 AND deleted IS NULL)`, accountID).Scan(&yes)
	return yes, err
}

// DeleteCompany implements driver.Tx. The NIF is replaced by the
// company's id, which no NIF can equal, so that the unique constraint
// frees the NIF and still holds.
func (t *txn) DeleteCompany(ctx context.Context, id string, now time.Time) error {
	if !webhooks.ValidID(id) {
		return notFound("company")
	}
	tag, err := t.Exec(ctx, `UPDATE companies SET deleted = $2, name = '', nif = id::text WHERE id = $1 AND deleted IS NULL`, id, ts(now))
	return oneRow(tag, err, "company")
}

// DeleteAccount implements driver.Tx.
func (t *txn) DeleteAccount(ctx context.Context, id string, now time.Time) error {
	if !webhooks.ValidID(id) {
		return notFound("account")
	}
	tag, err := t.Exec(ctx, `UPDATE accounts SET deleted = $2, name = '' WHERE id = $1 AND deleted IS NULL`, id, ts(now))
	if err := oneRow(tag, err, "account"); err != nil {
		return err
	}
	_, err = t.Exec(ctx, `DELETE FROM api_keys WHERE account_id = $1`, id)
	return err
}

// FindDeletedAccount implements driver.Store.
func (s *Store) FindDeletedAccount(ctx context.Context, id string) (*webhooks.Account, error) {
	if !webhooks.ValidID(id) {
		return nil, notFound("account")
	}
	var a webhooks.Account
	var prov pgtype.Text
	var created, deleted pgtype.Timestamptz
	err := s.pool.QueryRow(ctx, `SELECT id, name, provisioned_by, created, deleted FROM accounts WHERE id = $1 AND deleted IS NOT NULL`, id).
		Scan(&a.ID, &a.Name, &prov, &created, &deleted)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("account")
	} else if err != nil {
		return nil, txError(err)
	}
	a.ProvisionedBy, a.Created, a.Deleted = prov.String, fromTS(created), fromTS(deleted)
	return &a, nil
}

// queueUnqueue queues in b the statements that take the deliveries that
// ended (no longer pending) out of the work queue, as EndPending does: a
// claimed one keeps its row (its attempt still records), not due.
// rows selects the queue rows to consider (alias q2).
func queueUnqueue(b *pgx.Batch, now time.Time, rows string, args ...any) {
	n := len(args)
	b.Queue(fmt.Sprintf(`DELETE FROM queue q USING (
			SELECT q2.delivery_id FROM queue q2 WHERE %s ORDER BY q2.delivery_id FOR UPDATE) l
		WHERE q.delivery_id = l.delivery_id AND (q.lease_expires IS NULL OR q.lease_expires <= $%d)`, rows, n+1), append(args, ts(now))...)
	b.Queue(`UPDATE queue q2 SET due = NULL, parked = false WHERE `+rows, args...)
	// A delivery of another event that waited behind one of them in its
	// chain (SPEC 18) is released, due now: an erasure must not hold back
	// the key's later events.
	b.Queue(`WITH released AS (
			UPDATE deliveries d SET waiting_for = NULL FROM deliveries w
			WHERE d.waiting_for = w.id AND d.status = 'pending' AND w.status <> 'pending'
			RETURNING d.id)
		UPDATE queue q SET waiting = false, since = $1 FROM released WHERE q.delivery_id = released.id`, ts(now))
}

// EraseEvents implements driver.Tx. The deliveries are locked in id
// order, as every statement that changes several deliveries does.
func (t *txn) EraseEvents(ctx context.Context, ids []string, at time.Time) error {
	ids = validIDs(ids)
	if len(ids) == 0 {
		return nil
	}
	events := uuids(ids)
	var b pgx.Batch
	b.Queue(`WITH l AS (SELECT id, status FROM deliveries WHERE event_id = ANY ($1::uuid[]) ORDER BY id FOR UPDATE),
		u AS (
			UPDATE deliveries d SET body_n = NULL,
				status = CASE WHEN l.status = 'pending' THEN 'failed' ELSE d.status END,
				reason = CASE WHEN l.status = 'pending' THEN $2 ELSE d.reason END,
				next_attempt_at = CASE WHEN l.status = 'pending' THEN NULL ELSE d.next_attempt_at END,
				manual = CASE WHEN l.status = 'pending' THEN false ELSE d.manual END,
				waiting_for = CASE WHEN l.status = 'pending' THEN NULL ELSE d.waiting_for END
			FROM l WHERE d.id = l.id RETURNING d.id)
		UPDATE attempts a SET response_body = ''::bytea FROM u WHERE a.delivery_id = u.id AND length(a.response_body) > 0`,
		events, webhooks.ReasonEventErased)
	b.Queue(`DELETE FROM bodies WHERE event_id = ANY ($1::uuid[])`, events)
	queueUnqueue(&b, at, `q2.delivery_id IN (SELECT id FROM deliveries WHERE event_id = ANY ($1::uuid[]))`, events)
	b.Queue(`UPDATE events SET object = 'null'::json, traceparent = NULL, erased = coalesce(erased, $2) WHERE id = ANY ($1::uuid[])`, events, ts(at))
	return t.SendBatch(ctx, &b).Close()
}

// erasureEvents is the condition on events (alias e) that selects an
// erasure's: $2 its company, or $3 its account.
const erasureEvents = `NOT e.test AND (($2::uuid IS NOT NULL AND e.company_id = $2::uuid) OR ($3::uuid IS NOT NULL AND e.account_id = $3::uuid AND NOT e.operational))`

// EndPendingOf implements driver.Tx: through the endpoint's pending
// deliveries (its queue rows: see qPendingDeliveries), each event read by
// its key.
func (t *txn) EndPendingOf(ctx context.Context, endpointID string, e *webhooks.Erasure, now time.Time) error {
	if !webhooks.ValidID(endpointID) {
		return nil
	}
	company, account := optionalID(e.CompanyID), optionalID(e.AccountID)
	var b pgx.Batch
	b.Queue(`WITH l AS (
			SELECT d.id FROM queue q JOIN deliveries d ON d.id = q.delivery_id WHERE q.endpoint_id = $1 AND d.status = 'pending'
				AND EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id AND `+erasureEvents+`)
			ORDER BY d.id FOR UPDATE OF d)
		UPDATE deliveries d SET status = 'failed', reason = $4, next_attempt_at = NULL, manual = false, waiting_for = NULL
		FROM l WHERE d.id = l.id AND d.status = 'pending'`,
		endpointID, company, account, webhooks.ReasonEventErased)
	queueUnqueue(&b, now, `q2.endpoint_id = $1 AND EXISTS (SELECT 1 FROM deliveries d WHERE d.id = q2.delivery_id AND d.status <> 'pending')`, endpointID)
	return t.SendBatch(ctx, &b).Close()
}

// InsertErasure implements driver.Tx.
func (t *txn) InsertErasure(ctx context.Context, e *webhooks.Erasure) error {
	_, err := t.Exec(ctx, `INSERT INTO erasures (id, company_id, account_id, created) VALUES ($1, $2, $3, $4)`,
		e.ID, optionalID(e.CompanyID), optionalID(e.AccountID), ts(e.Created))
	return err
}

// NextErasure implements driver.Tx.
func (t *txn) NextErasure(ctx context.Context) (*webhooks.Erasure, error) {
	var e webhooks.Erasure
	var company, account pgtype.Text
	var created pgtype.Timestamptz
	err := t.QueryRow(ctx, `SELECT id, company_id, account_id, created FROM erasures ORDER BY created, id LIMIT 1 FOR UPDATE SKIP LOCKED`).
		Scan(&e.ID, &company, &account, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	e.CompanyID, e.AccountID, e.Created = company.String, account.String, fromTS(created)
	return &e, nil
}

// EraseChunk implements driver.Tx: the events_company and events_account
// indexes, in (created, id) order, give the next chunk after the job's
// cursor without reading what earlier chunks erased.
func (t *txn) EraseChunk(ctx context.Context, e *webhooks.Erasure, limit int) (int, error) {
	owner, ownerID := "company_id = $1::uuid", e.CompanyID
	if e.CompanyID == "" {
		owner, ownerID = "account_id = $1::uuid AND NOT operational", e.AccountID
	}
	rows, err := t.Query(ctx, `SELECT id::text, created FROM events
		WHERE `+owner+` AND NOT test
		AND (created, id) > (SELECT coalesce(after_created, '-infinity'), coalesce(after_id, '00000000-0000-0000-0000-000000000000') FROM erasures WHERE id = $2)
		ORDER BY created, id LIMIT $3`,
		ownerID, e.ID, limit)
	if err != nil {
		return 0, err
	}
	var ids []string
	var last pgtype.Timestamptz
	for rows.Next() {
		var id string
		if err := rows.Scan(&id, &last); err != nil {
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
	_, err = t.Exec(ctx, `UPDATE erasures SET after_created = $2, after_id = $3 WHERE id = $1`, e.ID, last, ids[len(ids)-1])
	return len(ids), err
}

// DeleteErasure implements driver.Tx.
func (t *txn) DeleteErasure(ctx context.Context, id string) error {
	_, err := t.Exec(ctx, `DELETE FROM erasures WHERE id = $1`, id)
	return err
}

// scrubbed are the tables whose rows erasures and purges update or
// delete: a vacuum makes the space of their dead row versions free for
// reuse, the old bytes with it. relay_requests held, for seconds, the
// bodies of relay endpoints' attempts: an event erased after it was
// relayed leaves its dead versions there.
const scrubbed = `events, deliveries, attempts, idempotency_keys, companies, accounts, api_keys, relay_requests`

// Scrub implements driver.Maintenance: a vacuum of the tables erasures
// and purges change (SPEC 19: the rows are updated or deleted at once;
// the bytes leave the disk with the vacuum). SKIP_LOCKED lets a vacuum
// another process or autovacuum runs now finish alone.
func (s *Store) Scrub(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, `VACUUM (SKIP_LOCKED) `+scrubbed); err != nil {
		return fmt.Errorf("postgres: scrub: %w", txError(err))
	}
	return nil
}
