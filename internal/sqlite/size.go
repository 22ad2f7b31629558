package sqlite

import "context"

// StoreBytes returns the bytes the database's pages hold: its pages less
// the free ones, which SQLite reuses before it grows the file. The WAL is
// not counted: a checkpoint folds it into those pages.
func (s *Store) StoreBytes(ctx context.Context) (int64, error) {
	var n int64
	err := s.read.QueryRowContext(ctx, `SELECT (page_count - freelist_count) * page_size
		FROM pragma_page_count, pragma_freelist_count, pragma_page_size`).Scan(&n)
	return n, dbError(err)
}
