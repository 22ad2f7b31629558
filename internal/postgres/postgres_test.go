package postgres

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/storetest"
)

// defaultTestURL is where the tests find PostgreSQL unless TEST_DATABASE_URL
// says otherwise.
const defaultTestURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

func testURL() string { return cmp.Or(os.Getenv("TEST_DATABASE_URL"), defaultTestURL) }

// connect opens a plain connection for the tests' own SQL. The tests fail,
// never skip, without a database: a backend that was not tested must not
// look like one that passed.
func connect(tb testing.TB) *pgx.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, testURL())
	if err != nil {
		tb.Fatalf("PostgreSQL is not reachable at %s (set TEST_DATABASE_URL, or start it with `pg_ctlcluster 15 main start`): %v", testURL(), err)
	}
	return conn
}

// NewSchema creates a schema of its own for a test and drops it, with
// everything in it, when the test ends.
func NewSchema(tb testing.TB) string {
	tb.Helper()
	var b [8]byte
	rand.Read(b[:])
	name := "webhooks_test_" + hex.EncodeToString(b[:])
	conn := connect(tb)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `CREATE SCHEMA `+name); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		conn := connect(tb)
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `DROP SCHEMA `+name+` CASCADE`); err != nil {
			tb.Errorf("drop schema: %v", err)
		}
	})
	return name
}

// MustOpen opens a store on schema, closed when the test ends (before the
// schema is dropped: cleanups run last first).
func MustOpen(tb testing.TB, schema string, opts ...Option) *Store {
	tb.Helper()
	s, err := Open(context.Background(), testURL(), append([]Option{WithSearchPath(schema)}, opts...)...)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// MustOpenFresh opens a store on a new, empty schema.
func MustOpenFresh(tb testing.TB) *Store {
	tb.Helper()
	return MustOpen(tb, NewSchema(tb))
}

// TestStore runs the suite every backend passes, each leaf test on a
// schema of its own.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) webhooks.Store { return MustOpenFresh(t) })
}

func TestOpen_SearchPathInURL(t *testing.T) {
	schema := NewSchema(t)
	s, err := Open(t.Context(), testURL()+"&search_path="+schema)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	conn := connect(t)
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename = 'deliveries'`, schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("deliveries tables in %s: got %d, want 1", schema, n)
	}
}
