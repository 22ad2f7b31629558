package sqlite

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

// TestDBError: SQLite's answer that the database cannot serve now (here,
// locked by another writer past the busy timeout) is ErrUnavailable, a 503
// with Retry-After; a refusal of the statement itself stays internal.
func TestDBError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	holder, other := open(), open()
	if _, err := holder.Exec(`BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Exec(`ROLLBACK`) })
	_, busy := other.Exec(`BEGIN IMMEDIATE`)
	if busy == nil {
		t.Fatal("BEGIN IMMEDIATE beside another writer: got no error")
	}
	if err := dbError(busy); !errors.Is(err, webhooks.ErrUnavailable) || webhooks.ErrorCode(err) != webhooks.EUNAVAILABLE {
		t.Errorf("dbError(%v): got %v (%s), want ErrUnavailable", busy, err, webhooks.ErrorCode(err))
	}
	_, syntax := other.Exec(`SELEC 1`)
	if err := dbError(syntax); syntax == nil || errors.Is(err, webhooks.ErrUnavailable) || webhooks.ErrorCode(err) != webhooks.EINTERNAL {
		t.Errorf("dbError(%v): got %v (%s), want it internal", syntax, err, webhooks.ErrorCode(err))
	}
}
