// Package pgtest gives tests a PostgreSQL schema of their own. Tests that
// use it fail, never skip, when PostgreSQL is missing: a backend that was
// not tested must not look like one that passed.
package pgtest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultURL is where tests find PostgreSQL unless TEST_DATABASE_URL says
// otherwise.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// URL returns the test database's URL.
func URL() string { return cmp.Or(os.Getenv("TEST_DATABASE_URL"), DefaultURL) }

// Connect opens a plain connection for a test's own SQL.
func Connect(tb testing.TB) *pgx.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, URL())
	if err != nil {
		tb.Fatalf("PostgreSQL is not reachable at %s (set TEST_DATABASE_URL, or start it with `pg_ctlcluster 15 main start`): %v", URL(), err)
	}
	return conn
}

// Schema creates a schema for the test, dropped with everything in it when
// the test ends, and returns its name.
func Schema(tb testing.TB) string {
	tb.Helper()
	var b [8]byte
	rand.Read(b[:])
	name := "webhooks_test_" + hex.EncodeToString(b[:])
	conn := Connect(tb)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `CREATE SCHEMA `+name); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		conn := Connect(tb)
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `DROP SCHEMA `+name+` CASCADE`); err != nil {
			tb.Errorf("drop schema: %v", err)
		}
	})
	return name
}

// SchemaURL creates a schema as Schema does and returns a URL whose
// connections use it.
func SchemaURL(tb testing.TB) string {
	tb.Helper()
	name := Schema(tb)
	u, err := url.Parse(URL())
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name) // pgx passes parameters it does not know to the server
	u.RawQuery = q.Encode()
	return u.String()
}
