package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"testing"
)

// TestTxn_EndsWithItsContext: a write transaction's statements do not
// watch their context (see txn), but the transaction does: one whose
// context ends before its commit commits nothing and says why.
func TestTxn_EndsWithItsContext(t *testing.T) {
	s := openTemp(t)
	if _, err := s.write.Exec(`CREATE TABLE scratch (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	err := s.inTx(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO scratch (k) VALUES ('before')`); err != nil {
			return err
		}
		cancel()
		tx.ExecContext(ctx, `INSERT INTO scratch (k) VALUES ('after')`)
		return nil
	})
	// database/sql may roll it back before the commit is asked for.
	if !errors.Is(err, context.Canceled) && !errors.Is(err, sql.ErrTxDone) {
		t.Errorf("got %v, want context.Canceled or sql.ErrTxDone", err)
	}
	var n int
	if err := s.write.QueryRow(`SELECT count(*) FROM scratch`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows committed (%v), want none", n, err)
	}
	// The connection serves the next transaction.
	if err := s.inTx(t.Context(), func(tx *txn) error {
		_, err := tx.ExecContext(t.Context(), `INSERT INTO scratch (k) VALUES ('next')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
