package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// RegisterGroup implements driver.Registrar. The writes are one statement
// each: SQLite runs in the process, so a statement costs no round trip.
func (s *Store) RegisterGroup(ctx context.Context, fn func(tx driver.RegisterTx) (*driver.GroupWrites, error)) (*driver.GroupWritten, error) {
	var out *driver.GroupWritten
	err := s.inTx(ctx, func(tx *txn) error {
		w, err := fn(tx)
		if err != nil {
			return err
		}
		out, err = tx.writeGroup(ctx, w)
		return err
	})
	return out, err
}

// qVersions reads the versions of routing and of the catalog.
const qVersions = `SELECT (SELECT version FROM routing_version), (SELECT version FROM catalog_version)`

// Begin implements driver.RegisterTx. The write transaction holds the
// database's one write lock: the routes locks are its already.
func (t *txn) Begin(ctx context.Context, r driver.GroupReads) (*driver.GroupFacts, error) {
	f := &driver.GroupFacts{Keys: map[string]*driver.StoredKey{}}
	if err := t.QueryRowContext(ctx, qVersions).Scan(&f.RoutingVersion, &f.CatalogVersion); err != nil {
		return nil, err
	}
	for _, key := range r.Keys {
		k := &driver.StoredKey{IdempotencyKey: webhooks.IdempotencyKey{Key: key}}
		var created int64
		err := t.QueryRowContext(ctx, `SELECT request_hash, event_id, created FROM idempotency_keys WHERE key = ?`, key).
			Scan(&k.RequestHash, (*dbID)(&k.EventID), &created)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		} else if err != nil {
			return nil, err
		}
		k.Created = time.UnixMilli(created)
		f.Keys[key] = k
	}
	var err error
	f.Owners, err = t.ReadOwners(ctx, r.Owners)
	return f, err
}

// Owners' endpoints, by the column that names the owner.
const (
	qOwnerAccount      = `SELECT c.account_id FROM companies c WHERE c.id = ? AND c.deleted IS NULL`
	qAccountManager    = `SELECT provisioned_by FROM accounts WHERE id = ? AND deleted IS NULL`
	qCompanyEndpoints  = selectLiveEndpoints + `company_id = ? ORDER BY created, id`
	qAccountEndpoints  = selectLiveEndpoints + `account_id IN (?, ?) ORDER BY created, id`
	qPlatformEndpoints = selectLiveEndpoints + `scope = 'platform' ORDER BY created, id`
)

// ReadOwners implements driver.RegisterTx and driver.Tx.
func (t *txn) ReadOwners(ctx context.Context, keys []webhooks.OwnersKey) ([]*webhooks.Owners, error) {
	out := make([]*webhooks.Owners, len(keys))
	for i, k := range keys {
		o := &webhooks.Owners{}
		account := k.Account
		if k.Company != "" {
			err := t.QueryRowContext(ctx, qOwnerAccount, dbID(k.Company)).Scan((*dbID)(&o.CompanyAccount))
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, err
			}
			if o.CompanyAccount != "" {
				account = o.CompanyAccount
			}
		}
		var manager dbID
		err := t.QueryRowContext(ctx, qAccountManager, dbID(account)).Scan(&manager)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			out[i] = o // no such account: no endpoints either
			continue
		case err != nil:
			return nil, err
		}
		o.Account, o.Manager = account, string(manager)
		var eps []*webhooks.Endpoint
		if k.Operational {
			eps, err = queryAll(ctx, t, scanEndpoint, qPlatformEndpoints)
		} else {
			if owner := k.RoutesOwner(); owner != "" && o.CompanyAccount != "" {
				if eps, err = queryAll(ctx, t, scanEndpoint, qCompanyEndpoints, dbID(owner)); err != nil {
					return nil, err
				}
			}
			var more []*webhooks.Endpoint
			more, err = queryAll(ctx, t, scanEndpoint, qAccountEndpoints, dbID(o.Account), nullID(o.Manager))
			eps = append(eps, more...)
		}
		if err != nil {
			return nil, err
		}
		o.Endpoints = eps
		out[i] = o
	}
	return out, nil
}

// writeGroup writes a registration group's events, keys and deliveries.
func (t *txn) writeGroup(ctx context.Context, w *driver.GroupWrites) (*driver.GroupWritten, error) {
	out := &driver.GroupWritten{Inserted: map[string]bool{}, Firsts: map[string]*webhooks.Event{}}
	for _, id := range w.Firsts {
		e, err := findEvent(ctx, t, id)
		if err != nil {
			return nil, err
		}
		out.Firsts[id] = e
	}
	for i, ev := range w.Events {
		if err := insertEvent(ctx, t, ev); err != nil {
			return nil, err
		}
		if k := w.Keys[i]; k != nil {
			// An expired key is forgotten: the new event takes it over.
			if _, err := t.ExecContext(ctx, `INSERT INTO idempotency_keys (key, request_hash, event_id, created) VALUES (?, ?, ?, ?)
				ON CONFLICT (key) DO UPDATE SET request_hash = excluded.request_hash, event_id = excluded.event_id, created = excluded.created`,
				k.Key, k.RequestHash, dbID(ev.ID), ms(k.Created)); err != nil {
				return nil, err
			}
		}
	}
	inserted, err := insertDeliveryRows(ctx, t, w.Deliveries, w.Leases)
	if err != nil {
		return nil, err
	}
	out.Inserted = inserted
	return out, nil
}
