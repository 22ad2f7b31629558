// Package postgres implements driver.Store on PostgreSQL, with pgx.
//
// Unlike the SQLite store, any number of processes may share one database:
// migrations run under an advisory lock, claims take due deliveries with
// FOR UPDATE SKIP LOCKED and a lease fenced by its token, and the methods
// that create due work NOTIFY NotifyChannel, when this process's own
// workers have no room for it, so that the other processes' workers wake at
// once (see Listen and SetEngine).
//
// Each method is one transaction at READ COMMITTED, PostgreSQL's default.
// Where two transactions could otherwise act on the same stale read (two
// PATCHes of one endpoint, a resend racing a disable, two producers sending
// one Idempotency-Key), the method locks what it reads, so that the result is
// the one the SQLite store's serialized writes give.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/migrate"
)

//go:embed migration/*.sql
var migrations embed.FS

// NotifyChannel is the channel Notify notifies, when there is new due work
// that the notifying process's workers may not take: a registered event's
// deliveries, a retry, a replay, a recovery or a test event. Channels
// belong to the database, not a schema: the payload is the store's schema
// (its search_path, empty by default), and Listen ignores the
// notifications of stores on other schemas.
const NotifyChannel = "webhooks_deliveries"

// Advisory lock classes: the first key of pg_advisory_xact_lock(int, int),
// so that the store's locks do not collide with each other or, as far as
// a constant can promise, with other users of the database.
const (
	lockMigrate     int32 = 0x77686b01 // second key: hashtext(current_schema())
	lockIdempotency int32 = 0x77686b02 // second key: hashtext(key)
	lockClaim       int32 = 0x77686b03 // second key: hashtext(endpoint id)
	lockOwner       int32 = 0x77686b04 // second key: hashtext(company or account id)
	lockPurge       int32 = 0x77686b05 // second key: hashtext(current_schema())
	lockCatalog     int32 = 0x77686b06 // second key: hashtext(current_schema())
	lockChain       int32 = 0x77686b07 // second key: hashtext(endpoint id / ordering key)
	lockProcess     int32 = 0x77686b08 // second key: hashtext(current_schema()); held shared by each listening process
)

// DefaultMaxConns is the pool size unless the URL sets pool_max_conns.
const DefaultMaxConns = 16

// DefaultConnectTimeout bounds each attempt to connect, unless the URL
// sets connect_timeout.
const DefaultConnectTimeout = 5 * time.Second

// Store is the PostgreSQL backend.
var (
	_ driver.Driver  = (*Store)(nil)
	_ driver.Cluster = (*Store)(nil)
)

// Store is the PostgreSQL backend.
type Store struct {
	pool      *pgxpool.Pool
	log       *slog.Logger
	closed    context.Context // done when Close is called; stops Listen
	close     context.CancelFunc
	schema    string       // the search_path: NotifyChannel's payload
	processes atomic.Int32 // see CountProcesses
}

// Option configures Open.
type Option func(*options)

type options struct {
	searchPath string
	maxConns   int32
	log        *slog.Logger
}

// WithSearchPath sets the search_path of every connection, so that the
// store's tables live in (and are created in) that schema, which must
// exist. A URL may say the same with search_path=… (pgx sends parameters it
// does not know to the server); the option wins over it.
func WithSearchPath(schema string) Option {
	return func(o *options) { o.searchPath = schema }
}

// WithMaxConns caps the pool's connections (pgxpool's default is the larger
// of 4 and the number of CPUs; a URL may set pool_max_conns).
func WithMaxConns(n int32) Option {
	return func(o *options) { o.maxConns = n }
}

// WithLogger sets where Listen reports a lost connection. Defaults to
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// Migrate applies the migrations the database at url lacks and closes its
// connections: Open's migrations alone (tests copy a database migrated
// once: pgtest.Template).
func Migrate(ctx context.Context, url string) error {
	s, err := Open(ctx, url)
	if err != nil {
		return err
	}
	return s.Close()
}

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string) and applies the migrations it lacks. Several processes
// may open one database at once: migrations wait for each other.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := poolConfig(url, o)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Store{pool: pool, log: o.log, schema: cfg.ConnConfig.RuntimeParams["search_path"]}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.closed, s.close = context.WithCancel(context.Background())
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// poolConfig reads url, and applies the options and the service's
// defaults over pgx's.
func poolConfig(url string, o options) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if o.searchPath != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = o.searchPath
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// A database that does not answer (a host gone, a network
		// partition) fails a request in seconds with 503, instead of
		// holding it until the client gives up. connect_timeout in the
		// URL changes it.
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	switch {
	case o.maxConns > 0:
		cfg.MaxConns = o.maxConns
	case !strings.Contains(url, "pool_max_conns"):
		// pgx's default (the larger of 4 and the CPUs) makes API requests
		// queue for a connection under load: each holds one for a few
		// round trips while the network, not the CPU, is the wait.
		cfg.MaxConns = DefaultMaxConns
	}
	return cfg, nil
}

// Close stops Listen and closes the pool, waiting for connections in use to
// be released.
func (s *Store) Close() error {
	s.close()
	s.pool.Close()
	return nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	return s.pool.Ping(ctx)
}

// migrate applies the embedded migrations not yet applied, in order.
func (s *Store) migrate(ctx context.Context) error {
	if err := migrate.Run(ctx, migrations, s.migrateFile); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// migrateFile applies one migration in its own transaction with its record.
// The advisory lock makes processes that start together take turns: the
// first applies it, the others then find its record. It is keyed by schema
// so that databases shared by schema (tests) do not wait for each other.
func (s *Store) migrateFile(ctx context.Context, name string, body []byte) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))`, lockMigrate); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied timestamptz NOT NULL)`); err != nil {
			return err
		}
		var done bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE name = $1)`, name).Scan(&done); err != nil {
			return err
		}
		if done {
			return nil
		}
		defer migrate.LogSlow(s.log, "postgres", name)()
		// Without arguments pgx uses the simple protocol, which runs a
		// file of several statements.
		if _, err := tx.Exec(ctx, string(body)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (name, applied) VALUES ($1, now())`, name)
		return err
	})
}

// InTx implements driver.Store.
func (s *Store) InTx(ctx context.Context, fn func(tx driver.Tx) error) error {
	return s.inTx(ctx, func(t *txn) error { return fn(t) })
}

// InLazyTx implements driver.Store: the commit does not wait for the WAL
// to reach the disk (synchronous_commit off, as the engine's records).
func (s *Store) InLazyTx(ctx context.Context, fn func(tx driver.Tx) error) error {
	return s.inTx(ctx, func(t *txn) error {
		if err := lazyCommit(ctx, t); err != nil {
			return err
		}
		return fn(t)
	})
}

// inTx runs fn in a transaction. Errors other than the domain's are wrapped
// (and so reported as internal).
func (s *Store) inTx(ctx context.Context, fn func(t *txn) error) error {
	return txError(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(&txn{Tx: tx}) }))
}

// hotPathSettings, selected first in a transaction on the hot path
// (registering events, claiming and recording attempts), set the rest of
// it to use indexes only and to keep one plan per statement.
//
// Indexes only: its statements, and the foreign key checks they fire, are
// planned once per connection and the plan is kept until the table's
// statistics change: a plan made while a table was small, on a fresh
// database or an empty queue, reads all of it, and went on doing so as it
// grew. In 30 s of the benchmark, on a database whose autovacuum is off,
// the deliveries were read whole 6,680 times, 62 million rows. Every
// access those statements make has an index; with no sequential scan to
// choose, the plan made on a small table is the one that suits a large
// one.
//
// One plan: PostgreSQL keeps a prepared statement's generic plan only if
// it does not look dearer than the custom plans of its first five runs,
// and for the arrays of a few rows of a small group it did not, so the
// bodies' insert and the streaks' read were planned at every run: with
// three processes flat out, 3 s of PostgreSQL's CPU in 15
// (TestStore_HotPathPlansOnce). Their plans do not depend on the arrays'
// lengths.
const hotPathSettings = `set_config('enable_seqscan', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true)`

// pipelined runs fn on a connection of its own, for a transaction that fn
// sends in pipelined batches: the first batch opens it with BEGIN and the
// last ends with COMMIT, so that the transaction costs a round trip per
// batch instead of one per statement. A failed statement skips the rest of
// its batch, COMMIT included: a transaction fn leaves open or aborted is
// rolled back before the connection goes back to the pool.
func (s *Store) pipelined(ctx context.Context, fn func(conn *pgx.Conn) error) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	defer func() {
		if c.Conn().PgConn().TxStatus() != 'I' {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c.Exec(rctx, `ROLLBACK`)
		}
	}()
	return fn(c.Conn())
}

// txError is a transaction's error as the store reports it: the domain's
// errors as they are, the database's wrapped (and so reported as
// internal).
func txError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "22021" {
		// Text columns refuse NUL and invalid UTF-8, which SQLite stores
		// and Go's JSON validation lets through (in data.object's strings,
		// say): the request is at fault, not the service.
		return webhooks.Errorf(webhooks.EINVALID, "The request contains text that is not valid UTF-8 (or contains a NUL character).")
	}
	if err != nil && webhooks.ErrorCode(err) == webhooks.EINTERNAL {
		if unavailable(err) {
			return fmt.Errorf("%w: postgres: %w", webhooks.ErrUnavailable, err)
		}
		return fmt.Errorf("postgres: %w", err)
	}
	return err
}

// unavailable reports whether err says that the database does not answer,
// rather than that it refused the request: no connection could be made or
// kept, or the server is shutting down, starting, or out of connections.
func unavailable(err error) bool {
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr), pgconn.Timeout(err),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &pgErr):
		// Class 08, connection exceptions; 53300, too many connections;
		// 57P01-03, the server shut down, crashed, or is starting.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "53300" || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	return false
}

// read wraps a read's internal errors as inTx does.
func read[T any](v T, err error) (T, error) {
	return v, txError(err)
}

// querier is what a read needs: the pool, or a transaction when the read is
// part of a change.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// scanner is a pgx.Row or pgx.Rows.
type scanner interface {
	Scan(dest ...any) error
}

// txn is the transaction inTx hands out (driver.Tx's implementation).
type txn struct{ pgx.Tx }

// lockExclusive takes the transaction-level advisory lock of class on key.
func lockExclusive(ctx context.Context, tx pgx.Tx, class int32, key string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, class, key)
	return err
}

// uuids is ids as a uuid[] parameter; an empty string, or one that is not
// a UUID in its 36-character form, is NULL (which matches nothing). pgx
// sends a []string to a uuid[] parameter only as text, and only after
// trying binary, failing, and formatting the whole slice into the error it
// then drops: measured, 1.8 % of the in-process benchmark's CPU with 10
// endpoints per event, before PostgreSQL parsed the text back.
func uuids(ids []string) []pgtype.UUID {
	out := make([]pgtype.UUID, len(ids))
	for i, id := range ids {
		if len(id) != 36 {
			continue
		}
		if u, err := uuid.Parse(id); err == nil {
			out[i] = pgtype.UUID{Bytes: u, Valid: true}
		}
	}
	return out
}

// ts converts a time to what is stored: the zero time is NULL, others are
// cut to the millisecond (the precision the Store promises, as in SQLite).
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Truncate(time.Millisecond)
}

// fromTS converts a stored time back, in UTC; NULL is the zero time.
func fromTS(v pgtype.Timestamptz) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return v.Time.UTC()
}

// nullString stores an empty string as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// validIDs returns the ids that can name an object: anything else would not
// parse as a uuid, and names nothing anyway.
func validIDs(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if webhooks.ValidID(id) {
			out = append(out, id)
		}
	}
	return out
}

// notFound is the error for an object that does not exist.
func notFound(kind string) error {
	return webhooks.Errorf(webhooks.ENOTFOUND, "No such %s.", kind)
}

// isUniqueViolation reports whether err is a unique violation of the named
// constraint (or index).
func isUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == constraint
}
