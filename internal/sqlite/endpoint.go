package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

const endpointCols = `id, scope, company_id, account_id, url, enabled_events, relationships, api_version, livemode,
	description, status, secret, previous_secret, previous_secret_expires, created, updated,
	standard_webhooks, rate_limit, failure_streak, failing_since, disabled_at, disabled_reason, ordered, auto_recover,
	backlogged_since, probed_at, relay`

func scanEndpoint(r scanner) (*webhooks.Endpoint, error) {
	var e webhooks.Endpoint
	var prevSecret sql.NullString
	var events, rels string
	var livemode, standard, ordered, autoRecover, relay int
	var prevExpires, created, updated, rateLimit, failingSince, disabledAt, backlogged, probed sql.NullInt64
	var disabledReason sql.NullString
	if err := r.Scan((*dbID)(&e.ID), &e.Scope, (*dbID)(&e.CompanyID), (*dbID)(&e.AccountID), &e.URL, &events, &rels, &e.APIVersion, &livemode,
		&e.Description, &e.Status, &e.Secret, &prevSecret, &prevExpires, &created, &updated,
		&standard, &rateLimit, &e.FailureStreak, &failingSince, &disabledAt, &disabledReason, &ordered, &autoRecover,
		&backlogged, &probed, &relay); err != nil {
		return nil, err
	}
	e.StandardWebhooks, e.RateLimit = standard == 1, int(rateLimit.Int64)
	e.Ordered, e.AutoRecover, e.Relay = ordered == 1, autoRecover == 1, relay == 1
	e.BackloggedSince, e.ProbedAt = fromMS(backlogged), fromMS(probed)
	e.FailingSince, e.DisabledAt, e.DisabledReason = fromMS(failingSince), fromMS(disabledAt), disabledReason.String
	if err := json.Unmarshal([]byte(events), &e.EnabledEvents); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(rels), &e.Relationships); err != nil {
		return nil, err
	}
	if e.Scope != webhooks.ScopeAccount {
		e.Relationships = nil
	}
	e.Livemode = livemode == 1
	e.PreviousSecret, e.PreviousSecretExpires = prevSecret.String, fromMS(prevExpires)
	e.Created, e.Updated = fromMS(created), fromMS(updated)
	return &e, nil
}

func findEndpoint(ctx context.Context, q querier, id string) (*webhooks.Endpoint, error) {
	e, err := scanEndpoint(q.QueryRowContext(ctx, `SELECT `+endpointCols+` FROM endpoints WHERE id = ? AND deleted IS NULL`, dbID(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("webhook endpoint")
	}
	return e, err
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// relationshipsText is what the relationships column holds: never NULL.
func relationshipsText(rels []webhooks.Relationship) string {
	if rels == nil {
		rels = []webhooks.Relationship{}
	}
	return jsonText(rels)
}

// InsertEndpoint implements driver.Tx.
func (t *txn) InsertEndpoint(ctx context.Context, e *webhooks.Endpoint) error {
	_, err := t.ExecContext(ctx, `INSERT INTO endpoints (`+endpointCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		dbID(e.ID), e.Scope, nullID(e.CompanyID), nullID(e.AccountID), e.URL, jsonText(e.EnabledEvents), relationshipsText(e.Relationships),
		e.APIVersion, boolInt(e.Livemode), e.Description, e.Status, e.Secret, nullString(e.PreviousSecret),
		ms(e.PreviousSecretExpires), ms(e.Created), ms(e.Updated),
		boolInt(e.StandardWebhooks), nullInt(e.RateLimit), e.FailureStreak, ms(e.FailingSince), ms(e.DisabledAt), nullString(e.DisabledReason),
		boolInt(e.Ordered), boolInt(e.AutoRecover), ms(e.BackloggedSince), ms(e.ProbedAt), boolInt(e.Relay))
	return err
}

// LockRoutes implements driver.Tx. The one write connection serializes every
// write transaction, registrations included: there is nothing to lock.
func (t *txn) LockRoutes(context.Context, string) error { return nil }

// LockEndpoint implements driver.Tx (see LockRoutes).
func (t *txn) LockEndpoint(ctx context.Context, id string) (*webhooks.Endpoint, error) {
	return findEndpoint(ctx, t, id)
}

// ShareEndpoint implements driver.Tx (see LockRoutes).
func (t *txn) ShareEndpoint(ctx context.Context, id string) (*webhooks.Endpoint, error) {
	return findEndpoint(ctx, t, id)
}

// UpdateEndpoint implements driver.Tx.
func (t *txn) UpdateEndpoint(ctx context.Context, e *webhooks.Endpoint) error {
	_, err := t.ExecContext(ctx, `UPDATE endpoints SET url = ?, enabled_events = ?, relationships = ?, api_version = ?,
		description = ?, status = ?, secret = ?, previous_secret = ?, previous_secret_expires = ?, updated = ?,
		standard_webhooks = ?, rate_limit = ?, failure_streak = ?, failing_since = ?, disabled_at = ?, disabled_reason = ?,
		ordered = ?, auto_recover = ?, backlogged_since = ?, probed_at = ?
		WHERE id = ?`,
		e.URL, jsonText(e.EnabledEvents), relationshipsText(e.Relationships), e.APIVersion, e.Description, e.Status,
		e.Secret, nullString(e.PreviousSecret), ms(e.PreviousSecretExpires), ms(e.Updated),
		boolInt(e.StandardWebhooks), nullInt(e.RateLimit), e.FailureStreak, ms(e.FailingSince), ms(e.DisabledAt), nullString(e.DisabledReason),
		boolInt(e.Ordered), boolInt(e.AutoRecover), ms(e.BackloggedSince), ms(e.ProbedAt), dbID(e.ID))
	return err
}

// DeleteEndpoint implements driver.Tx.
func (t *txn) DeleteEndpoint(ctx context.Context, id string, now time.Time) error {
	_, err := t.ExecContext(ctx, `UPDATE endpoints SET deleted = ?, updated = ?, secret = '', previous_secret = NULL WHERE id = ?`, ms(now), ms(now), dbID(id))
	return err
}

// EndPending implements driver.Tx. A claimed delivery's attempt still records
// when it ends (see recordAttempts).
func (t *txn) EndPending(ctx context.Context, endpointID, reason string, now time.Time) error {
	_, err := t.ExecContext(ctx, `UPDATE deliveries SET status = ?, reason = ?, next_attempt_at = NULL, due_since = NULL, manual = 0, parked = 0, waiting_for = NULL
		WHERE endpoint_id = ? AND status = ? AND `+qNotDelivered,
		dbStatus(webhooks.DeliveryFailed), reason, dbID(endpointID), dbStatus(webhooks.DeliveryPending))
	return err
}

// FindEndpoint implements driver.Store.
func (s *Store) FindEndpoint(ctx context.Context, id string) (*webhooks.Endpoint, error) {
	return read(findEndpoint(ctx, s.read, id))
}

// ListEndpoints implements driver.Store.
func (s *Store) ListEndpoints(ctx context.Context, f webhooks.EndpointFilter, p webhooks.Page) (*webhooks.List[*webhooks.Endpoint], error) {
	q := listQuery{table: "endpoints", cols: endpointCols}
	switch {
	case f.Platform:
		q.where = append(q.where, "scope = 'platform'")
	case f.CompanyID != "":
		q.where, q.args = append(q.where, "company_id = ?"), append(q.args, dbID(f.CompanyID))
	default:
		q.where, q.args = append(q.where, "account_id = ?"), append(q.args, dbID(f.AccountID))
	}
	q.scoped()
	q.where = append(q.where, "deleted IS NULL")
	return read(list(ctx, s.read, q, p, scanEndpoint))
}

// ListAccountEndpoints implements driver.Store.
func (s *Store) ListAccountEndpoints(ctx context.Context, accountID string) ([]*webhooks.Endpoint, error) {
	return read(queryEndpoints(ctx, s.read, `(account_id = ?1 OR company_id IN (SELECT id FROM companies WHERE account_id = ?1))
		ORDER BY created, id`, dbID(accountID)))
}
