package receiver_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
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
	{name: "mariadb", dialect: receiver.MySQL, open: openMySQL},
	{name: "mariadb-options", dialect: receiver.MySQL, open: openMySQLWithOptions},
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

// mysqlDefaultDSN is where the tests find MariaDB (or MySQL) unless
// TEST_MYSQL_DSN says otherwise: the server these machines run, as root
// without a password.
const mysqlDefaultDSN = "root@tcp(127.0.0.1:3306)/"

// mysqlStart is the command that starts the machines' MariaDB.
const mysqlStart = "start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd"

func init() {
	// TestHandler_CommitFails kills a connection on purpose; the driver
	// would log each read from it on stderr. Failures still come back as
	// errors.
	mysql.SetLogger(log.New(io.Discard, "", 0))
}

// openMySQL opens a database of its own on the test server, with the
// driver's defaults, dropped when the test ends.
func openMySQL(tb testing.TB) *sql.DB {
	tb.Helper()
	return openMySQLDatabase(tb, func(*mysql.Config) {})
}

// openMySQLWithOptions is openMySQL with the DSN options a customer may have
// set for other reasons, none of which the kit may depend on:
// CLIENT_FOUND_ROWS (with it, an INSERT … ON DUPLICATE KEY UPDATE that
// changes nothing reports 1 row, as an insert does), a session time zone
// and a driver location that are not UTC and differ from each other, and
// parameters interpolated by the driver instead of sent apart.
func openMySQLWithOptions(tb testing.TB) *sql.DB {
	tb.Helper()
	return openMySQLDatabase(tb, func(c *mysql.Config) {
		c.ClientFoundRows = true
		c.InterpolateParams = true
		c.Loc = time.FixedZone("UTC+9", 9*60*60)
		c.Params = map[string]string{"time_zone": "'-05:00'"}
	})
}

// openMySQLDatabase creates a database with a random name, dropped when the
// test ends, and opens it with the test DSN changed by adjust. It fails the
// test when the server is unreachable.
func openMySQLDatabase(tb testing.TB, adjust func(*mysql.Config)) *sql.DB {
	tb.Helper()
	dsn := cmp.Or(os.Getenv("TEST_MYSQL_DSN"), mysqlDefaultDSN)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		tb.Fatalf("TEST_MYSQL_DSN %q: %v", dsn, err)
	}
	admin, err := openMySQLConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		tb.Fatalf("MariaDB is not reachable at %s (set TEST_MYSQL_DSN, or start it with `%s`): %v", cfg.Addr, mysqlStart, err)
	}
	var b [8]byte
	rand.Read(b[:])
	name := "receiver_test_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	tb.Cleanup(func() {
		admin, err := openMySQLConfig(cfg)
		if err != nil {
			tb.Error(err)
			return
		}
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE " + name); err != nil {
			tb.Errorf("drop database: %v", err)
		}
	})
	c := cfg.Clone()
	c.DBName = name
	adjust(c)
	db, err := openMySQLConfig(c)
	if err != nil {
		tb.Fatal(err)
	}
	// As for PostgreSQL: other tests share the server.
	db.SetMaxOpenConns(10)
	tb.Cleanup(func() { db.Close() })
	return db
}

// openMySQLConfig opens cfg through a connector, which keeps a location
// that has no name in the zone database.
func openMySQLConfig(cfg *mysql.Config) (*sql.DB, error) {
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
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

// deliverHeaders posts body with the given headers.
func deliverHeaders(h http.Handler, body []byte, headers map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/factuarea/webhook", strings.NewReader(string(body)))
	r.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// bodyOf returns the answer's body, trimmed.
func bodyOf(w *httptest.ResponseRecorder) string {
	b, _ := io.ReadAll(w.Result().Body)
	return strings.TrimSpace(string(b))
}
