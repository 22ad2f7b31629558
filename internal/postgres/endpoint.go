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
	description, status, secret, previous_secret, previous_secret_expires, created, updated`

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
}

func (s *endpointScan) dest() []any {
	e := &s.e
	return []any{&e.ID, &e.Scope, &s.companyID, &s.accountID, &e.URL, &e.EnabledEvents, &s.rels, &e.APIVersion, &e.Livemode,
		&e.Description, &e.Status, &e.Secret, &s.prevSecret, &s.prevExpires, &s.created, &s.updated}
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

// endpointOwner returns the company or account an endpoint belongs to: the
// key of the lock that orders its changes against event routing.
func endpointOwner(e *webhooks.Endpoint) string {
	if e.Scope == webhooks.ScopeCompany {
		return e.CompanyID
	}
	return e.AccountID
}

// lockEndpointForChange finds an endpoint that tx is about to change, after
// taking the exclusive lock on its owner that RegisterEvent takes shared:
// an event is routed either before the change (and a delivery it creates
// pending is ended by it) or after it (and sees it), never on a stale read.
func lockEndpointForChange(ctx context.Context, tx pgx.Tx, id string) (*webhooks.Endpoint, error) {
	e, err := findEndpoint(ctx, tx, id, noLock)
	if err != nil {
		return nil, err
	}
	if err := lockExclusive(ctx, tx, lockOwner, endpointOwner(e)); err != nil {
		return nil, err
	}
	return findEndpoint(ctx, tx, id, forUpdate)
}

// endpointAccount returns the account an endpoint's changes are audited
// under: its own, or its company's.
func endpointAccount(ctx context.Context, q querier, e *webhooks.Endpoint) (string, error) {
	if e.Scope == webhooks.ScopeAccount {
		return e.AccountID, nil
	}
	c, err := findCompany(ctx, q, e.CompanyID)
	if err != nil {
		return "", err
	}
	return c.AccountID, nil
}

// CreateEndpoint implements webhooks.Store.
func (s *Store) CreateEndpoint(ctx context.Context, e *webhooks.Endpoint, audit *webhooks.AuditEntry) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var accountID string
		if e.Scope == webhooks.ScopeCompany {
			c, err := findCompany(ctx, tx, e.CompanyID)
			if err != nil {
				return err
			}
			accountID = c.AccountID
		} else {
			if _, err := findAccount(ctx, tx, e.AccountID); err != nil {
				return err
			}
			accountID = e.AccountID
		}
		_, err := tx.Exec(ctx, `INSERT INTO endpoints (`+endpointCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
			e.ID, e.Scope, nullString(e.CompanyID), nullString(e.AccountID), e.URL, e.EnabledEvents, relationshipsText(e.Relationships),
			e.APIVersion, e.Livemode, e.Description, e.Status, e.Secret, nullString(e.PreviousSecret),
			ts(e.PreviousSecretExpires), ts(e.Created), ts(e.Updated))
		if err != nil {
			return err
		}
		return insertAudit(ctx, tx, audit, accountID, webhooks.AuditEndpointCreated, webhooks.TargetEndpoint, e.ID, e.Created)
	})
}

// FindEndpoint implements webhooks.Store.
func (s *Store) FindEndpoint(ctx context.Context, id string) (*webhooks.Endpoint, error) {
	return read(findEndpoint(ctx, s.pool, id, noLock))
}

// ListEndpoints implements webhooks.Store.
func (s *Store) ListEndpoints(ctx context.Context, f webhooks.EndpointFilter, p webhooks.Page) (*webhooks.List[*webhooks.Endpoint], error) {
	q := listQuery{table: "endpoints", cols: endpointCols}
	if f.CompanyID != "" {
		q.whereID("company_id", f.CompanyID)
	} else {
		q.whereID("account_id", f.AccountID)
	}
	q.scoped()
	q.conds = append(q.conds, "deleted IS NULL")
	return read(list(ctx, s.pool, q, p, scanEndpoint))
}

// ListAccountEndpoints implements webhooks.Store.
func (s *Store) ListAccountEndpoints(ctx context.Context, accountID string) ([]*webhooks.Endpoint, error) {
	if !webhooks.ValidID(accountID) {
		return nil, nil
	}
	return read(queryAll(ctx, s.pool, scanEndpoint, `SELECT `+endpointCols+` FROM endpoints
		WHERE deleted IS NULL AND (account_id = $1 OR company_id IN (SELECT id FROM companies WHERE account_id = $1))
		ORDER BY created, id`, accountID))
}

// UpdateEndpoint implements webhooks.Store.
func (s *Store) UpdateEndpoint(ctx context.Context, id string, u *webhooks.EndpointUpdate, now time.Time, audit *webhooks.AuditEntry) (*webhooks.Endpoint, error) {
	var out *webhooks.Endpoint
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		old, err := lockEndpointForChange(ctx, tx, id)
		if err != nil {
			return err
		}
		e := *old
		e.EnabledEvents = append([]string(nil), old.EnabledEvents...)
		e.Relationships = append([]webhooks.Relationship(nil), old.Relationships...)
		if err := u.Apply(&e); err != nil {
			return err
		}
		e.Updated = now
		if _, err := tx.Exec(ctx, `UPDATE endpoints SET url = $1, enabled_events = $2, relationships = $3, api_version = $4,
			description = $5, status = $6, updated = $7 WHERE id = $8`,
			e.URL, e.EnabledEvents, relationshipsText(e.Relationships), e.APIVersion, e.Description, e.Status, ts(now), id); err != nil {
			return err
		}
		accountID, err := endpointAccount(ctx, tx, &e)
		if err != nil {
			return err
		}
		for _, action := range webhooks.EndpointChangeActions(old, &e) {
			if err := insertAudit(ctx, tx, audit, accountID, action, webhooks.TargetEndpoint, id, now); err != nil {
				return err
			}
		}
		if old.Enabled() && !e.Enabled() {
			if err := endPending(ctx, tx, id, webhooks.ReasonEndpointDisabled, now); err != nil {
				return err
			}
		}
		out = &e
		return nil
	})
	return out, err
}

// endPending ends an endpoint's pending deliveries failed with reason, and
// takes them out of the work queue; a claimed one keeps its claim, without
// a due time, so that its attempt still records when it ends (see
// RecordAttempts). The rows are locked in id order, deliveries first, as
// every statement that changes several deliveries locks them, so that two
// such statements cannot deadlock.
func endPending(ctx context.Context, tx pgx.Tx, endpointID, reason string, now time.Time) error {
	var b pgx.Batch
	b.Queue(`UPDATE deliveries d SET status = $1, reason = $2, next_attempt_at = NULL, manual = false, updated = $3
		FROM (SELECT id FROM deliveries WHERE endpoint_id = $4 AND status = 'pending' ORDER BY id FOR UPDATE) l
		WHERE d.id = l.id AND d.status = 'pending'`,
		webhooks.DeliveryFailed, reason, ts(now), endpointID)
	// A claim committed while these wait for its row is seen by the next
	// statement (each statement reads what committed before it).
	b.Queue(`DELETE FROM queue q USING (
			SELECT delivery_id FROM queue WHERE endpoint_id = $1 ORDER BY delivery_id FOR UPDATE) l
		WHERE q.delivery_id = l.delivery_id AND (q.lease_expires IS NULL OR q.lease_expires <= $2)`, endpointID, ts(now))
	b.Queue(`UPDATE queue SET due = NULL, parked = false WHERE endpoint_id = $1`, endpointID)
	return tx.SendBatch(ctx, &b).Close()
}

// DeleteEndpoint implements webhooks.Store.
func (s *Store) DeleteEndpoint(ctx context.Context, id string, now time.Time, audit *webhooks.AuditEntry) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		e, err := lockEndpointForChange(ctx, tx, id)
		if err != nil {
			return err
		}
		accountID, err := endpointAccount(ctx, tx, e)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE endpoints SET deleted = $1, updated = $1, secret = '', previous_secret = NULL WHERE id = $2`, ts(now), id); err != nil {
			return err
		}
		if err := endPending(ctx, tx, id, webhooks.ReasonEndpointDeleted, now); err != nil {
			return err
		}
		return insertAudit(ctx, tx, audit, accountID, webhooks.AuditEndpointDeleted, webhooks.TargetEndpoint, id, now)
	})
}

// RotateSecret implements webhooks.Store.
func (s *Store) RotateSecret(ctx context.Context, id, secret string, previousExpires, now time.Time, audit *webhooks.AuditEntry) (*webhooks.Endpoint, error) {
	var out *webhooks.Endpoint
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// FOR UPDATE: two rotations at once must chain (the second keeps
		// the first's new secret as its previous one), not both keep the
		// same old one and lose a secret that was handed out.
		e, err := findEndpoint(ctx, tx, id, forUpdate)
		if err != nil {
			return err
		}
		e.PreviousSecret, e.PreviousSecretExpires = e.Secret, previousExpires
		if !previousExpires.After(now) {
			e.PreviousSecret, e.PreviousSecretExpires = "", time.Time{}
		}
		e.Secret, e.Updated = secret, now
		if _, err := tx.Exec(ctx, `UPDATE endpoints SET secret = $1, previous_secret = $2, previous_secret_expires = $3, updated = $4 WHERE id = $5`,
			e.Secret, nullString(e.PreviousSecret), ts(e.PreviousSecretExpires), ts(now), id); err != nil {
			return err
		}
		accountID, err := endpointAccount(ctx, tx, e)
		if err != nil {
			return err
		}
		out = e
		return insertAudit(ctx, tx, audit, accountID, webhooks.AuditEndpointSecretRotated, webhooks.TargetEndpoint, id, now)
	})
	return out, err
}
