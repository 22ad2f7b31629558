package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
)

const endpointCols = `id, scope, company_id, account_id, url, enabled_events, relationships, api_version, livemode,
	description, status, secret, previous_secret, previous_secret_expires, created, updated,
	standard_webhooks, rate_limit, failure_streak, failing_since, disabled_at, disabled_reason, ordered, auto_recover,
	backlogged_since, probed_at, relay`

// Row locks a read may take, for a change that depends on what it read.
const (
	noLock    = ""
	forShare  = " FOR SHARE"  // the endpoint must not change (be disabled) until commit
	forUpdate = " FOR UPDATE" // this transaction changes it
)

// endpointScan holds an endpoint's columns as scanned, for rows that carry
// other columns too.
type endpointScan struct {
	e                                webhooks.Endpoint
	companyID, accountID, prevSecret pgtype.Text
	rels                             []string
	prevExpires, created, updated    pgtype.Timestamptz
	rateLimit                        pgtype.Int4
	failingSince, disabledAt         pgtype.Timestamptz
	disabledReason                   pgtype.Text
	backlogged, probed               pgtype.Timestamptz
}

func (s *endpointScan) dest() []any {
	e := &s.e
	return []any{&e.ID, &e.Scope, &s.companyID, &s.accountID, &e.URL, &e.EnabledEvents, &s.rels, &e.APIVersion, &e.Livemode,
		&e.Description, &e.Status, &e.Secret, &s.prevSecret, &s.prevExpires, &s.created, &s.updated,
		&e.StandardWebhooks, &s.rateLimit, &e.FailureStreak, &s.failingSince, &s.disabledAt, &s.disabledReason, &e.Ordered, &e.AutoRecover,
		&s.backlogged, &s.probed, &e.Relay}
}

func (s *endpointScan) endpoint() *webhooks.Endpoint {
	e := s.e
	if e.Scope == webhooks.ScopeAccount {
		e.Relationships = make([]webhooks.Relationship, len(s.rels))
		for i, r := range s.rels {
			e.Relationships[i] = webhooks.Relationship(r)
		}
	}
	e.CompanyID, e.AccountID = s.companyID.String, s.accountID.String
	e.PreviousSecret, e.PreviousSecretExpires = s.prevSecret.String, fromTS(s.prevExpires)
	e.Created, e.Updated = fromTS(s.created), fromTS(s.updated)
	e.RateLimit = int(s.rateLimit.Int32)
	e.FailingSince, e.DisabledAt, e.DisabledReason = fromTS(s.failingSince), fromTS(s.disabledAt), s.disabledReason.String
	e.BackloggedSince, e.ProbedAt = fromTS(s.backlogged), fromTS(s.probed)
	return &e
}

func scanEndpoint(r scanner) (*webhooks.Endpoint, error) {
	var s endpointScan
	if err := r.Scan(s.dest()...); err != nil {
		return nil, err
	}
	return s.endpoint(), nil
}

// relationshipsText is what the relationships column holds: never NULL.
func relationshipsText(rels []webhooks.Relationship) []string {
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = string(r)
	}
	return out
}

func findEndpoint(ctx context.Context, q querier, id, lock string) (*webhooks.Endpoint, error) {
	if !webhooks.ValidID(id) {
		return nil, notFound("webhook endpoint")
	}
	e, err := scanEndpoint(q.QueryRow(ctx, `SELECT `+endpointCols+` FROM endpoints WHERE id = $1 AND deleted IS NULL`+lock, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("webhook endpoint")
	}
	return e, err
}

// InsertEndpoint implements driver.Tx.
func (t *txn) InsertEndpoint(ctx context.Context, e *webhooks.Endpoint) error {
	_, err := t.Exec(ctx, `INSERT INTO endpoints (`+endpointCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
		$17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27)`,
		e.ID, e.Scope, nullString(e.CompanyID), nullString(e.AccountID), e.URL, e.EnabledEvents, relationshipsText(e.Relationships),
		e.APIVersion, e.Livemode, e.Description, e.Status, e.Secret, nullString(e.PreviousSecret),
		ts(e.PreviousSecretExpires), ts(e.Created), ts(e.Updated),
		e.StandardWebhooks, int4Ptr(e.RateLimit), e.FailureStreak, ts(e.FailingSince), ts(e.DisabledAt), nullString(e.DisabledReason),
		e.Ordered, e.AutoRecover, ts(e.BackloggedSince), ts(e.ProbedAt), e.Relay)
	return err
}

// LockRoutes implements driver.Tx: the exclusive side of the owner's advisory
// lock, which RegisterEvent takes shared before it reads the endpoints.
// Advisory locks live in memory: the hot path writes nothing for them,
// unlike FOR SHARE on the endpoint rows.
func (t *txn) LockRoutes(ctx context.Context, ownerID string) error {
	return lockExclusive(ctx, t, lockOwner, ownerID)
}

// LockEndpoint implements driver.Tx: FOR UPDATE.
func (t *txn) LockEndpoint(ctx context.Context, id string) (*webhooks.Endpoint, error) {
	return findEndpoint(ctx, t, id, forUpdate)
}

// ShareEndpoint implements driver.Tx: FOR SHARE.
func (t *txn) ShareEndpoint(ctx context.Context, id string) (*webhooks.Endpoint, error) {
	return findEndpoint(ctx, t, id, forShare)
}

// UpdateEndpoint implements driver.Tx.
func (t *txn) UpdateEndpoint(ctx context.Context, e *webhooks.Endpoint) error {
	_, err := t.Exec(ctx, `UPDATE endpoints SET url = $1, enabled_events = $2, relationships = $3, api_version = $4,
		description = $5, status = $6, secret = $7, previous_secret = $8, previous_secret_expires = $9, updated = $10,
		standard_webhooks = $12, rate_limit = $13, failure_streak = $14, failing_since = $15, disabled_at = $16, disabled_reason = $17,
		ordered = $18, auto_recover = $19, backlogged_since = $20, probed_at = $21
		WHERE id = $11`,
		e.URL, e.EnabledEvents, relationshipsText(e.Relationships), e.APIVersion, e.Description, e.Status,
		e.Secret, nullString(e.PreviousSecret), ts(e.PreviousSecretExpires), ts(e.Updated), e.ID,
		e.StandardWebhooks, int4Ptr(e.RateLimit), e.FailureStreak, ts(e.FailingSince), ts(e.DisabledAt), nullString(e.DisabledReason),
		e.Ordered, e.AutoRecover, ts(e.BackloggedSince), ts(e.ProbedAt))
	return err
}

// DeleteEndpoint implements driver.Tx.
func (t *txn) DeleteEndpoint(ctx context.Context, id string, now time.Time) error {
	_, err := t.Exec(ctx, `UPDATE endpoints SET deleted = $1, updated = $1, secret = '', previous_secret = NULL WHERE id = $2`, ts(now), id)
	return err
}

// EndPending implements driver.Tx: the endpoint's pending deliveries end, and
// leave the work queue; a claimed one keeps its claim, without a due time,
// so that its attempt still records when it ends (see RecordAttempts). The
// rows are locked in id order, deliveries first, as every statement that
// changes several deliveries locks them, so that two such statements
// cannot deadlock. The pending ones are found through the queue, which
// holds a row for each (see qPendingDeliveries); only the deliveries are
// locked by the first statement.
func (t *txn) EndPending(ctx context.Context, endpointID, reason string, now time.Time) error {
	var b pgx.Batch
	b.Queue(`UPDATE deliveries d SET status = $1::text::delivery_status, reason = $2, next_attempt_at = NULL, manual = false, waiting_for = NULL
		FROM (SELECT p.id FROM queue q JOIN deliveries p ON p.id = q.delivery_id
			WHERE q.endpoint_id = $3 AND p.status = 'pending' ORDER BY p.id FOR UPDATE OF p) l
		WHERE d.id = l.id AND d.status = 'pending'`,
		webhooks.DeliveryFailed, reason, endpointID)
	// A claim committed while these wait for its row is seen by the next
	// statement (each statement reads what committed before it).
	b.Queue(`DELETE FROM queue q USING (
			SELECT delivery_id FROM queue WHERE endpoint_id = $1 ORDER BY delivery_id FOR UPDATE) l
		WHERE q.delivery_id = l.delivery_id AND (q.lease_expires IS NULL OR q.lease_expires <= $2)`, endpointID, ts(now))
	b.Queue(`UPDATE queue SET due = NULL, parked = false WHERE endpoint_id = $1`, endpointID)
	return t.SendBatch(ctx, &b).Close()
}

// FindEndpoint implements driver.Store.
func (s *Store) FindEndpoint(ctx context.Context, id string) (*webhooks.Endpoint, error) {
	return read(findEndpoint(ctx, s.pool, id, noLock))
}

// ListEndpoints implements driver.Store.
func (s *Store) ListEndpoints(ctx context.Context, f webhooks.EndpointFilter, p webhooks.Page) (*webhooks.List[*webhooks.Endpoint], error) {
	q := listQuery{table: "endpoints", cols: endpointCols}
	switch {
	case f.Platform:
		q.conds = append(q.conds, "scope = 'platform'")
	case f.CompanyID != "":
		q.whereID("company_id", f.CompanyID)
	default:
		q.whereID("account_id", f.AccountID)
	}
	q.scoped()
	q.conds = append(q.conds, "deleted IS NULL")
	return read(list(ctx, s.pool, q, p, scanEndpoint))
}

// ListAccountEndpoints implements driver.Store.
func (s *Store) ListAccountEndpoints(ctx context.Context, accountID string) ([]*webhooks.Endpoint, error) {
	if !webhooks.ValidID(accountID) {
		return nil, nil
	}
	return read(queryAll(ctx, s.pool, scanEndpoint, `SELECT `+endpointCols+` FROM endpoints
		WHERE deleted IS NULL AND (account_id = $1 OR company_id IN (SELECT id FROM companies WHERE account_id = $1))
		ORDER BY created, id`, accountID))
}
