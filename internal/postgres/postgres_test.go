package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/pgtest"
	"github.com/factuarea/webhooks/internal/storetest"
)

func testURL() string { return pgtest.URL() }

// connect opens a plain connection for the tests' own SQL; it fails, never
// skips, without a database.
func connect(tb testing.TB) *pgx.Conn { return pgtest.Connect(tb) }

// NewSchema creates a schema of its own for a test and drops it, with
// everything in it, when the test ends.
func NewSchema(tb testing.TB) string { return pgtest.Schema(tb) }

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
// database of its own: a copy of one that Open migrated once for the suite
// (migrating a new schema per leaf took most of the suite's time, most of
// it PostgreSQL's). Open then finds every migration applied, as on a
// restart; the copies use the default search_path, as the service does.
func TestStore(t *testing.T) {
	template := pgtest.NewTemplate(Migrate)
	t.Cleanup(func() {
		if err := template.Drop(); err != nil {
			t.Errorf("drop the template database: %v", err)
		}
	})
	storetest.Run(t, func(t *testing.T) driver.Driver {
		s, err := Open(t.Context(), template.URL(t))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
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

// TestUUIDs: ids go as binary uuid[] parameters, and what is not an id is
// NULL, as an id that names nothing.
func TestUUIDs(t *testing.T) {
	id := webhooks.NewID()
	got := uuids([]string{id, "", "not-an-id", "{" + id + "}", strings.ReplaceAll(id, "-", "")})
	if !got[0].Valid {
		t.Fatalf("uuids(%q) is NULL", id)
	}
	if v, err := got[0].Value(); err != nil || v != id {
		t.Errorf("uuids(%q) = %v (%v)", id, v, err)
	}
	for i, u := range got[1:] {
		if u.Valid {
			t.Errorf("uuids: input %d is not an id but was kept", i+1)
		}
	}
	// Binary, without the failed attempt and text fallback a []string takes.
	if _, err := pgtype.NewMap().Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, got, nil); err != nil {
		t.Errorf("uuids is not encodable as a binary uuid[]: %v", err)
	}
}
