package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/factuarea/webhooks/internal/app"
)

// InitClusterKeys implements app.Store. Processes that start together
// race on the insert; the row's key settles it, and each reads the
// winner's keys.
func (s *Store) InitClusterKeys(ctx context.Context, k *app.ClusterKeys) (*app.ClusterKeys, error) {
	var stored *app.ClusterKeys
	err := s.inTx(ctx, func(t *txn) error {
		if _, err := t.Exec(ctx, `INSERT INTO cluster_keys (id, admin_key_hash, portal_key, updated) VALUES (1, $1, $2, $3) ON CONFLICT (id) DO NOTHING`,
			k.AdminKeyHash, k.PortalKey, ts(k.Updated)); err != nil {
			return err
		}
		var err error
		stored, err = findClusterKeys(ctx, t, "")
		return err
	})
	return stored, err
}

// FindClusterKeys implements app.Store.
func (s *Store) FindClusterKeys(ctx context.Context) (*app.ClusterKeys, error) {
	return read(findClusterKeys(ctx, s.pool, ""))
}

// LockClusterKeys implements app.Tx.
func (t *txn) LockClusterKeys(ctx context.Context) (*app.ClusterKeys, error) {
	return findClusterKeys(ctx, t, " FOR UPDATE")
}

// UpdateClusterKeys implements app.Tx.
func (t *txn) UpdateClusterKeys(ctx context.Context, k *app.ClusterKeys) error {
	_, err := t.Exec(ctx, `UPDATE cluster_keys SET admin_key_hash = $1, portal_key = $2, updated = $3 WHERE id = 1`,
		k.AdminKeyHash, k.PortalKey, ts(k.Updated))
	return err
}

func findClusterKeys(ctx context.Context, q querier, lock string) (*app.ClusterKeys, error) {
	var k app.ClusterKeys
	var updated pgtype.Timestamptz
	err := q.QueryRow(ctx, `SELECT admin_key_hash, portal_key, updated FROM cluster_keys WHERE id = 1`+lock).
		Scan(&k.AdminKeyHash, &k.PortalKey, &updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("cluster keys")
	} else if err != nil {
		return nil, err
	}
	k.Updated = fromTS(updated)
	return &k, nil
}
