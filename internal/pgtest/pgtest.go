// Package pgtest gives tests a PostgreSQL schema, or a database copied from
// a prepared template, of their own. Tests that
// use it fail, never skip, when PostgreSQL is missing: a backend that was
// not tested must not look like one that passed.
package pgtest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"sync"
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
	name := randomName("webhooks_test_")
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

// Template is a database that a function prepares once (the store's
// migrations, say) and that tests copy: CREATE DATABASE … TEMPLATE copies
// its files, which costs PostgreSQL a fraction of running the migrations
// again in a new schema for each test.
type Template struct {
	prepare func(ctx context.Context, url string) error

	once sync.Once
	name string
	err  error
}

// NewTemplate returns a template that prepare makes, when the first copy
// is asked for, in a new database of its own whose URL it is given.
// prepare must leave no connection open: PostgreSQL copies no database
// that a session is connected to. Drop removes the template.
func NewTemplate(prepare func(ctx context.Context, url string) error) *Template {
	return &Template{prepare: prepare}
}

// URL creates a database for the test, a copy of the template, dropped when
// the test ends, and returns its URL.
func (tp *Template) URL(tb testing.TB) string {
	tb.Helper()
	tp.once.Do(func() {
		tp.name = randomName("webhooks_template_")
		tp.err = tp.make()
	})
	if tp.err != nil {
		tb.Fatalf("the template database: %v", tp.err)
	}
	name := randomName("webhooks_test_")
	conn := Connect(tb)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `CREATE DATABASE `+name+` TEMPLATE `+tp.name); err != nil {
		tb.Fatalf("create database from the template: %v", err)
	}
	tb.Cleanup(func() {
		if err := dropDatabase(name); err != nil {
			tb.Errorf("drop database: %v", err)
		}
	})
	u, err := urlOf(name)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// make creates the template's database and prepares it.
func (tp *Template) make() error {
	if err := exec(`CREATE DATABASE ` + tp.name); err != nil {
		return err
	}
	u, err := urlOf(tp.name)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return tp.prepare(ctx, u)
}

// Drop drops the template, if a copy made it; call it once the tests that
// copy it are done.
func (tp *Template) Drop() error {
	tp.once.Do(func() { tp.err = errors.New("dropped before its first copy") })
	if tp.name == "" {
		return nil
	}
	return dropDatabase(tp.name)
}

// dropDatabase drops a database the tests made, and the sessions still on
// it.
func dropDatabase(name string) error {
	return exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
}

// exec runs one statement on a connection of its own (CREATE and DROP
// DATABASE run outside any transaction, and outside a test's cleanup
// order).
func exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, URL())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// urlOf is URL with another database.
func urlOf(name string) (string, error) {
	u, err := url.Parse(URL())
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func randomName(prefix string) string {
	var b [8]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
