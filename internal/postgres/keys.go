package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/factuarea/webhooks/internal/driver"
)

// InitClusterKeys implements driver.Store. Processes that start together
// race on the insert; the row's key settles it, and each reads the
// winner's keys.
func (s *Store) InitClusterKeys(ctx context.Context, k *driver.ClusterKeys) (*driver.ClusterKeys, error) {
	var stored *driver.ClusterKeys
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

// FindClusterKeys implements driver.Store.
func (s *Store) FindClusterKeys(ctx context.Context) (*driver.ClusterKeys, error) {
	return read(findClusterKeys(ctx, s.pool, ""))
}

// LockClusterKeys implements driver.Tx.
func (t *txn) LockClusterKeys(ctx context.Context) (*driver.ClusterKeys, error) {
	return findClusterKeys(ctx, t, " FOR UPDATE")
}

// UpdateClusterKeys implements driver.Tx.
func (t *txn) UpdateClusterKeys(ctx context.Context, k *driver.ClusterKeys) error {
	_, err := t.Exec(ctx, `UPDATE cluster_keys SET admin_key_hash = $1, portal_key = $2, updated = $3 WHERE id = 1`,
		k.AdminKeyHash, k.PortalKey, ts(k.Updated))
	return err
}

func findClusterKeys(ctx context.Context, q querier, lock string) (*driver.ClusterKeys, error) {
	var k driver.ClusterKeys
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
