package postgres

import "context"

// StoreBytes returns the bytes of the store's tables in its schema, with
// their indexes and TOAST: what pg_total_relation_size counts, dead rows
// until a vacuum makes their room reusable included.
func (s *Store) StoreBytes(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
		WHERE ns.nspname = current_schema() AND c.relkind = 'r'`).Scan(&n)
	return read(n, err)
}
