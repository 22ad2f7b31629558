package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/factuarea/webhooks/internal/driver"
)

// InitClusterKeys implements driver.Store.
func (s *Store) InitClusterKeys(ctx context.Context, k *driver.ClusterKeys) (*driver.ClusterKeys, error) {
	var stored *driver.ClusterKeys
	err := s.inTx(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO cluster_keys (id, admin_key_hash, portal_key, updated) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			k.AdminKeyHash, k.PortalKey, ms(k.Updated)); err != nil {
			return err
		}
		var err error
		stored, err = findClusterKeys(ctx, tx)
		return err
	})
	return stored, err
}

// FindClusterKeys implements driver.Store.
func (s *Store) FindClusterKeys(ctx context.Context) (*driver.ClusterKeys, error) {
	return read(findClusterKeys(ctx, s.read))
}

// LockClusterKeys implements driver.Tx: SQLite's write transaction holds the
// database, so the read is locked as it is.
func (t *txn) LockClusterKeys(ctx context.Context) (*driver.ClusterKeys, error) {
	return findClusterKeys(ctx, t)
}

// UpdateClusterKeys implements driver.Tx.
func (t *txn) UpdateClusterKeys(ctx context.Context, k *driver.ClusterKeys) error {
	_, err := t.ExecContext(ctx, `UPDATE cluster_keys SET admin_key_hash = ?, portal_key = ?, updated = ? WHERE id = 1`,
		k.AdminKeyHash, k.PortalKey, ms(k.Updated))
	return err
}

func findClusterKeys(ctx context.Context, q querier) (*driver.ClusterKeys, error) {
	var k driver.ClusterKeys
	var updated sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT admin_key_hash, portal_key, updated FROM cluster_keys WHERE id = 1`).
		Scan(&k.AdminKeyHash, &k.PortalKey, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("cluster keys")
	} else if err != nil {
		return nil, err
	}
	k.Updated = fromMS(updated)
	return &k, nil
}
