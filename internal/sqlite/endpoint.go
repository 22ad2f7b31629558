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
	description, status, secret, previous_secret, previous_secret_expires, created, updated`

func scanEndpoint(r scanner) (*webhooks.Endpoint, error) {
	var e webhooks.Endpoint
	var companyID, accountID, prevSecret sql.NullString
	var events, rels string
	var livemode int
	var prevExpires, created, updated sql.NullInt64
	if err := r.Scan(&e.ID, &e.Scope, &companyID, &accountID, &e.URL, &events, &rels, &e.APIVersion, &livemode,
		&e.Description, &e.Status, &e.Secret, &prevSecret, &prevExpires, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &e.EnabledEvents); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(rels), &e.Relationships); err != nil {
		return nil, err
	}
	if e.Scope == webhooks.ScopeCompany {
		e.Relationships = nil
	}
	e.CompanyID, e.AccountID, e.Livemode = companyID.String, accountID.String, livemode == 1
	e.PreviousSecret, e.PreviousSecretExpires = prevSecret.String, fromMS(prevExpires)
	e.Created, e.Updated = fromMS(created), fromMS(updated)
	return &e, nil
}

func findEndpoint(ctx context.Context, q querier, id string) (*webhooks.Endpoint, error) {
	e, err := scanEndpoint(q.QueryRowContext(ctx, `SELECT `+endpointCols+` FROM endpoints WHERE id = ? AND deleted IS NULL`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("webhook endpoint")
	}
	return e, err
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

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// CreateEndpoint implements webhooks.Store.
func (s *Store) CreateEndpoint(ctx context.Context, e *webhooks.Endpoint, audit *webhooks.AuditEntry) error {
	return s.inTx(ctx, func(tx *txn) error {
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
		rels := e.Relationships
		if rels == nil {
			rels = []webhooks.Relationship{}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO endpoints (`+endpointCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, e.Scope, nullString(e.CompanyID), nullString(e.AccountID), e.URL, jsonText(e.EnabledEvents), jsonText(rels),
			e.APIVersion, boolInt(e.Livemode), e.Description, e.Status, e.Secret, nullString(e.PreviousSecret),
			ms(e.PreviousSecretExpires), ms(e.Created), ms(e.Updated))
		if err != nil {
			return err
		}
		return insertAudit(ctx, tx, audit, accountID, webhooks.AuditEndpointCreated, webhooks.TargetEndpoint, e.ID, e.Created)
	})
}

// FindEndpoint implements webhooks.Store.
func (s *Store) FindEndpoint(ctx context.Context, id string) (*webhooks.Endpoint, error) {
	return findEndpoint(ctx, s.read, id)
}

// ListEndpoints implements webhooks.Store.
func (s *Store) ListEndpoints(ctx context.Context, f webhooks.EndpointFilter, p webhooks.Page) (*webhooks.List[*webhooks.Endpoint], error) {
	q := listQuery{table: "endpoints", cols: endpointCols}
	if f.CompanyID != "" {
		q.where, q.args = append(q.where, "company_id = ?"), append(q.args, f.CompanyID)
	} else {
		q.where, q.args = append(q.where, "account_id = ?"), append(q.args, f.AccountID)
	}
	q.scoped()
	q.where = append(q.where, "deleted IS NULL")
	return list(ctx, s.read, q, p, scanEndpoint)
}

// ListAccountEndpoints implements webhooks.Store.
func (s *Store) ListAccountEndpoints(ctx context.Context, accountID string) ([]*webhooks.Endpoint, error) {
	return queryEndpoints(ctx, s.read, `(account_id = ?1 OR company_id IN (SELECT id FROM companies WHERE account_id = ?1))
		ORDER BY created, id`, accountID)
}

// UpdateEndpoint implements webhooks.Store.
func (s *Store) UpdateEndpoint(ctx context.Context, id string, u *webhooks.EndpointUpdate, now time.Time, audit *webhooks.AuditEntry) (*webhooks.Endpoint, error) {
	var out *webhooks.Endpoint
	err := s.inTx(ctx, func(tx *txn) error {
		old, err := findEndpoint(ctx, tx, id)
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
		rels := e.Relationships
		if rels == nil {
			rels = []webhooks.Relationship{}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE endpoints SET url = ?, enabled_events = ?, relationships = ?, api_version = ?,
			description = ?, status = ?, updated = ? WHERE id = ?`,
			e.URL, jsonText(e.EnabledEvents), jsonText(rels), e.APIVersion, e.Description, e.Status, ms(now), id); err != nil {
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

// endPending ends an endpoint's pending deliveries failed with reason. A
// claimed one's attempt still records when it ends (see RecordAttempts).
func endPending(ctx context.Context, tx *txn, endpointID, reason string, now time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = ?, reason = ?, next_attempt_at = NULL, manual = 0, parked = 0, updated = ?
		WHERE endpoint_id = ? AND status = ?`,
		webhooks.DeliveryFailed, reason, ms(now), endpointID, webhooks.DeliveryPending)
	return err
}

// DeleteEndpoint implements webhooks.Store.
func (s *Store) DeleteEndpoint(ctx context.Context, id string, now time.Time, audit *webhooks.AuditEntry) error {
	return s.inTx(ctx, func(tx *txn) error {
		e, err := findEndpoint(ctx, tx, id)
		if err != nil {
			return err
		}
		accountID, err := endpointAccount(ctx, tx, e)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE endpoints SET deleted = ?, updated = ?, secret = '', previous_secret = NULL WHERE id = ?`, ms(now), ms(now), id); err != nil {
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
	err := s.inTx(ctx, func(tx *txn) error {
		e, err := findEndpoint(ctx, tx, id)
		if err != nil {
			return err
		}
		e.PreviousSecret, e.PreviousSecretExpires = e.Secret, previousExpires
		if !previousExpires.After(now) {
			e.PreviousSecret, e.PreviousSecretExpires = "", time.Time{}
		}
		e.Secret, e.Updated = secret, now
		if _, err := tx.ExecContext(ctx, `UPDATE endpoints SET secret = ?, previous_secret = ?, previous_secret_expires = ?, updated = ? WHERE id = ?`,
			e.Secret, nullString(e.PreviousSecret), ms(e.PreviousSecretExpires), ms(now), id); err != nil {
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
