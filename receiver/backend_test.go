package receiver_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/factuarea/webhooks/internal/pgtest"
	"github.com/factuarea/webhooks/receiver"
	"github.com/factuarea/webhooks/signature"
)

// testSecret signs the deliveries of the tests.
const testSecret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

// backend is one database the suite runs on.
type backend struct {
	name    string
	dialect receiver.Dialect
	open    func(tb testing.TB) *sql.DB
}

// ph returns the n-th (1-based) placeholder of the backend.
func (b backend) ph(n int) string {
	if b.dialect == receiver.Postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

var backends = []backend{
	{name: "sqlite", dialect: receiver.SQLite, open: openSQLite},
	{name: "postgres", dialect: receiver.Postgres, open: openPostgres},
}

// forEachBackend runs test as a parallel subtest per backend.
func forEachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b)
		})
	}
}

// sqliteDSN is the DSN the package documentation asks for: an immediate
// transaction lock and a busy timeout, so that concurrent deliveries wait for
// the single writer instead of failing. Foreign keys are on for
// TestHandler_CommitFails.
func sqliteDSN(path string) string {
	return "file:" + path + "?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
}

// openSQLite opens a new SQLite database in a temporary directory.
func openSQLite(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", sqliteDSN(filepath.Join(tb.TempDir(), "receiver.db")))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// openPostgres opens the test database (TEST_DATABASE_URL) with a schema
// of its own, dropped when the test ends. It fails the test when
// PostgreSQL is unreachable: a receiver suite that silently skips its main
// database proves nothing.
func openPostgres(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("pgx", pgtest.SchemaURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	// Other packages' tests share this server: stay well under its
	// max_connections even with 50 concurrent deliveries.
	db.SetMaxOpenConns(10)
	tb.Cleanup(func() { db.Close() })
	return db
}

// clock is a settable clock for Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *clock { return &clock{t: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixture is a Handler on a fresh database of one backend, with a table of
// effects that the test handlers write through the transaction.
type fixture struct {
	b     backend
	db    *sql.DB
	clock *clock
	h     *receiver.Handler
}

// setup opens the backend, creates the tables (CreateTable twice, to show it
// is idempotent) and returns a Handler that runs handle.
func setup(t *testing.T, b backend, handle receiver.HandleFunc) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{b: b, db: b.open(t), clock: newClock(time.Now())}
	for range 2 {
		if err := receiver.CreateTable(ctx, f.db); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.db.ExecContext(ctx, `CREATE TABLE effects (event_id CHAR(36) NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	h, err := receiver.New(receiver.Config{
		DB:      f.db,
		Secrets: []string{testSecret},
		Handle:  handle,
		Now:     f.clock.Now,
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Dialect(); got != b.dialect {
		t.Fatalf("Dialect: got %v, want %v", got, b.dialect)
	}
	f.h = h
	return f
}

// recordEffect is the body of the test handlers: one row in effects per run.
func (f *fixture) recordEffect(ctx context.Context, tx *sql.Tx, ev *receiver.Event) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO effects (event_id) VALUES (`+f.b.ph(1)+`)`, ev.ID)
	return err
}

// count returns the number of rows of table for eventID.
func (f *fixture) count(t *testing.T, table, eventID string) int {
	t.Helper()
	var n int
	err := f.db.QueryRow(`SELECT COUNT(*) FROM `+table+` WHERE event_id = `+f.b.ph(1), eventID).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// newID returns a fresh UUIDv7, as the sender assigns.
func newID(t testing.TB) string {
	t.Helper()
	id, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}

// eventBody returns a compact company envelope for id, as the sender writes
// it.
func eventBody(id string) []byte {
	return []byte(`{"id":"` + id + `","type":"invoice.sent","api_version":"2026-09-23","created":1790590561,` +
		`"livemode":true,"test":false,"correlation_id":"01a0e783-aa84-7b48-8c63-1a5e9d2f4b70",` +
		`"data":{"type":"invoice.sent","object":{"object":"invoice","id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42","total":"1210.00"}}}`)
}

// deliver sends body to the handler as the sender does, signed at the
// fixture's clock, and returns the answer.
func (f *fixture) deliver(t testing.TB, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	return deliverSigned(f.h, body, signature.Sign(f.clock.Now().Unix(), body, testSecret))
}

// deliverSigned posts body with the given signature header.
func deliverSigned(h http.Handler, body []byte, sig string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/factuarea/webhook", strings.NewReader(string(body)))
	r.Header.Set("Content-Type", "application/json")
	if sig != "" {
		r.Header.Set(signature.HeaderName, sig)
	}
	r.Header.Set(receiver.HeaderDeliveryID, fmt.Sprintf("delivery-%p", r))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// bodyOf returns the answer's body, trimmed.
func bodyOf(w *httptest.ResponseRecorder) string {
	b, _ := io.ReadAll(w.Result().Body)
	return strings.TrimSpace(string(b))
}
