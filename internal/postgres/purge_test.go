package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPurge_LockPerSchema: a purge running on one schema does not stop
// the purge of another schema of the same database, and does stop a
// second purge of its own. The lock used to be one per database: parallel
// tests (and deployments sharing a database) skipped each other's purges,
// and a store test failed when two happened at once.
func TestPurge_LockPerSchema(t *testing.T) {
	ctx := context.Background()
	busy, other := NewSchema(t), NewSchema(t)
	conn, err := pgx.Connect(ctx, testURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true)`, pgx.Identifier{busy}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	var mine bool
	if err := tx.QueryRow(ctx, qPurgeLock, lockPurge).Scan(&mine); err != nil || !mine {
		t.Fatalf("taking %s's purge lock: %v %v", busy, mine, err)
	}

	purge := func(schema string) int {
		t.Helper()
		s := stackOf(t, MustOpen(t, schema))
		c := mustCompany(t, s, mustAccount(t, s).ID)
		mustRegister(t, s, newEvent(c.ID, time.Now().Add(-time.Hour)))
		n, err := s.Purge(ctx, time.Now(), time.Now(), 10)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := purge(other); n == 0 {
		t.Errorf("another schema's purge purged nothing while %s's ran", busy)
	}
	if n := purge(busy); n != 0 {
		t.Errorf("a second purge of %s purged %d events while the first ran", busy, n)
	}
}
