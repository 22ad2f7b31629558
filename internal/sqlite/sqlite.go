// Package sqlite is the storage backend on an embedded SQLite file
// (driver.Driver), with the pure-Go modernc.org/sqlite driver (no cgo).
//
// One process owns the file: Open takes an exclusive lock beside it, so a
// second `webhooks serve` on the same file fails at once instead of
// delivering twice. Writes go through one connection (SQLite has one writer
// anyway; queueing in database/sql is cheaper than SQLite's busy retries),
// reads through a pool that WAL lets run beside the writer.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	msqlite "modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/migrate"
)

//go:embed migration/*.sql
var migrations embed.FS

var _ driver.Driver = (*Store)(nil)

// Store is the SQLite backend.
type Store struct {
	write *sql.DB // one connection, transactions BEGIN IMMEDIATE
	read  *sql.DB
	lock  *os.File
	stmts *stmtCache // prepared write statements

	busy atomic.Int64 // nanoseconds the write connection spent in transactions

	// The write connection's synchronous setting, and which connection it
	// was set on (see runTx).
	syncConn any
	syncMode string
}

// uriPath escapes what a file: URI would read as anything but the path:
// a "#" would start a fragment and a "?" the parameters, so that another
// file than path opened (SQLite decodes the escapes).
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// Migrate creates the database file at path, or upgrades it, and closes
// it: Open's migrations alone (tests start from a copy of a file migrated
// once: storetest.FileTemplate).
func Migrate(ctx context.Context, path string) error {
	s, err := Open(ctx, path)
	if err != nil {
		return err
	}
	return s.Close()
}

// Open opens (creating it if needed) the database file at path, takes the
// file's lock, applies migrations and hands back claims a previous process
// left behind: holding the lock proves that process is gone.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("sqlite: a file path is required")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
	}
	lock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, err
	}
	s := &Store{lock: lock, stmts: newStmtCache()}
	// WAL lets readers run beside the writer. synchronous=FULL makes a
	// commit durable across power loss too, not only process crashes: an
	// accepted event is never lost. (The engine's own bookkeeping commits
	// with NORMAL: see inTx.) foreign_keys is off by default in SQLite for
	// historical reasons. busy_timeout covers the rare checkpoint.
	// secure_delete overwrites with zeros the content a deletion or an
	// update frees, so that erased and purged bytes leave the file once a
	// checkpoint (Scrub) has emptied the WAL (SPEC 19).
	pragmas := []string{"journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(1)", "busy_timeout(10000)", "secure_delete(1)"}
	dsn := func(extra ...string) string {
		q := url.Values{}
		for _, p := range pragmas {
			q.Add("_pragma", p)
		}
		for i := 0; i+1 < len(extra); i += 2 {
			q.Add(extra[i], extra[i+1])
		}
		return "file:" + uriPath(path) + "?" + q.Encode()
	}
	if s.write, err = sql.Open("sqlite", dsn("_txlock", "immediate")); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	s.write.SetMaxOpenConns(1)
	s.write.SetMaxIdleConns(1)
	s.write.SetConnMaxIdleTime(0)
	s.write.SetConnMaxLifetime(0)
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	pragmas = append(pragmas, "query_only(1)")
	if s.read, err = sql.Open("sqlite", dsn()); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	s.read.SetMaxOpenConns(n)
	s.read.SetMaxIdleConns(n)
	for _, q := range releaseAll {
		if _, err := s.write.ExecContext(ctx, q); err != nil {
			s.Close()
			return nil, fmt.Errorf("sqlite: release claims: %w", err)
		}
	}
	return s, nil
}

// GroupCommit implements driver.Registrar: one registrar, since the
// writer is one connection, and no window, since registration waits for
// the engine's records on that connection already (SharedWriter; a window
// delivered less).
func (s *Store) GroupCommit() driver.GroupCommit {
	return driver.GroupCommit{Registrars: 1, MaxGroup: 128, SharedWriter: true}
}

// releaseAll hands back every claim and empties the endpoints' queues, as
// a process starts: through the partial indexes of the leased and the
// parked deliveries, so that start-up does not read the whole history.
var releaseAll = []string{
	`UPDATE deliveries INDEXED BY deliveries_leased SET lease_token = NULL, lease_expires = NULL WHERE lease_expires IS NOT NULL`,
	`UPDATE deliveries INDEXED BY deliveries_parked SET parked = 0 WHERE status = 'p' AND parked = 1`,
}

// WriteBusy implements metrics.WritePath: the time the one write
// connection spent in transactions.
func (s *Store) WriteBusy() time.Duration { return time.Duration(s.busy.Load()) }

// Close closes the database and releases the file's lock.
func (s *Store) Close() error {
	var errs []error
	if s.read != nil {
		errs = append(errs, s.read.Close())
	}
	s.stmts.close()
	if s.write != nil {
		// A checkpoint at close keeps the WAL file from growing across runs.
		s.write.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		errs = append(errs, s.write.Close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	return errors.Join(errs...)
}

// Ping checks that both pools answer.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.write.PingContext(ctx); err != nil {
		return err
	}
	var one int
	return s.read.QueryRowContext(ctx, `SELECT 1`).Scan(&one)
}

// migrate applies the embedded migrations not yet applied, in name order,
// each in its own transaction with its record.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	if err := migrate.Run(ctx, migrations, s.migrateFile); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// migrateFile applies one migration unless its record says it was, in a
// transaction with its record.
//
// Foreign keys are off meanwhile, as SQLite's procedure for changing a
// table's definition requires (a new table, a copy, a rename: dropping the
// old one with them on would delete, or refuse for, every row that refers
// to it), and checked before the commit.
func (s *Store) migrateFile(ctx context.Context, name string, body []byte) error {
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	defer migrate.LogSlow(slog.Default(), "sqlite", name)()
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name, applied) VALUES (?, ?)`, name, time.Now().UnixMilli()); err != nil {
		return err
	}
	var bad int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_foreign_key_check`).Scan(&bad); err != nil {
		return err
	}
	if bad > 0 {
		return fmt.Errorf("migration %s leaves %d rows whose foreign key refers to nothing", name, bad)
	}
	return tx.Commit()
}

// Durability of a write transaction.
type durability int

const (
	// durable commits wait for the disk (synchronous=FULL): everything the
	// API accepts.
	durable durability = iota
	// lazy commits do not (synchronous=NORMAL): the engine's claims and
	// attempt records, which a power loss can only turn into a repeated
	// attempt, never into a lost event. The next durable commit makes them
	// durable too, since the WAL is synced up to its end.
	lazy
)

// InTx implements driver.Store: fn runs in a durable write transaction.
func (s *Store) InTx(ctx context.Context, fn func(tx driver.Tx) error) error {
	return s.inTx(ctx, func(tx *txn) error { return fn(tx) })
}

// InLazyTx implements driver.Store: fn runs in a lazy write transaction.
func (s *Store) InLazyTx(ctx context.Context, fn func(tx driver.Tx) error) error {
	return s.inTxWith(ctx, lazy, func(tx *txn) error { return fn(tx) })
}

// inTx runs fn in a durable write transaction.
func (s *Store) inTx(ctx context.Context, fn func(tx *txn) error) error {
	return s.inTxWith(ctx, durable, fn)
}

// inTxWith runs fn in a write transaction committed with durability d. The
// connection is pinned so that the synchronous setting and the
// transaction run on the same one.
func (s *Store) inTxWith(ctx context.Context, d durability, fn func(tx *txn) error) error {
	err := s.runTx(ctx, d, fn)
	s.stmts.prepareMissed(ctx, s.write)
	return dbError(err)
}

func (s *Store) runTx(ctx context.Context, d durability, fn func(tx *txn) error) error {
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	defer func(start time.Time) { s.busy.Add(int64(time.Since(start))) }(time.Now())
	if err := s.setSynchronous(ctx, conn, d); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(&txn{Tx: tx, cache: s.stmts}); err != nil {
		return err
	}
	return tx.Commit()
}

// setSynchronous sets the write connection's synchronous pragma for d,
// unless it is set so already: running it on every transaction cost as
// much as a small transaction's statements. A connection the pool opened
// anew starts from the DSN's setting, so the setting is kept with the
// driver connection it was made on.
func (s *Store) setSynchronous(ctx context.Context, conn *sql.Conn, d durability) error {
	mode := "FULL"
	if d == lazy {
		mode = "NORMAL"
	}
	var dc any
	if err := conn.Raw(func(c any) error { dc = c; return nil }); err != nil {
		return err
	}
	if dc == s.syncConn && mode == s.syncMode {
		return nil
	}
	s.syncConn, s.syncMode = nil, ""
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = "+mode); err != nil {
		return err
	}
	s.syncConn, s.syncMode = dc, mode
	return nil
}

// querier is what a read needs: the read pool, or a write transaction when
// the read is part of a change.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// ms converts a time to the stored unix milliseconds; the zero time is NULL.
func ms(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// fromMS converts stored unix milliseconds back; NULL is the zero time.
func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

// nullString stores an empty string as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// placeholders returns "?, ?, ?" for n arguments.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// dbError is an error as the store reports it: the domain's as they are,
// and the database's that mean it cannot serve now (locked past the busy
// timeout, a disk that fails or is full) as webhooks.ErrUnavailable.
func dbError(err error) error {
	var e *msqlite.Error
	if errors.As(err, &e) && webhooks.ErrorCode(err) == webhooks.EINTERNAL {
		switch e.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN:
			return fmt.Errorf("%w: sqlite: %w", webhooks.ErrUnavailable, err)
		}
	}
	return err
}

// read reports a read's error as dbError does.
func read[T any](v T, err error) (T, error) { return v, dbError(err) }

// notFound is the error for an object that does not exist.
func notFound(kind string) error {
	return webhooks.Errorf(webhooks.ENOTFOUND, "No such %s.", kind)
}

func isUniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
