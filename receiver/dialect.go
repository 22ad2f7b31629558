package receiver

import (
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Dialect is the SQL dialect of the database that holds
// processed_webhook_events. The zero value means "detect it from the
// driver" (see DetectDialect).
type Dialect int

// The supported dialects.
const (
	// Postgres: "$1" placeholders and INSERT … ON CONFLICT DO NOTHING.
	Postgres Dialect = iota + 1
	// SQLite (3.24 or later): "?" placeholders and INSERT … ON CONFLICT DO
	// NOTHING. See the package documentation for the DSN it needs.
	SQLite
	// MySQL and MariaDB: "?" placeholders, a plain INSERT whose failure is a
	// repeat only when the id is found recorded, and received_at as
	// DATETIME(6). The kit's tests run it on MariaDB.
	MySQL
)

// String returns the dialect's name.
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case SQLite:
		return "sqlite"
	case MySQL:
		return "mysql"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// DetectDialect tells the dialect from the Go package of db's driver:
// github.com/jackc/pgx and github.com/lib/pq are Postgres; modernc.org/sqlite,
// github.com/mattn/go-sqlite3 and github.com/ncruces/go-sqlite3 are SQLite;
// github.com/go-sql-driver/mysql is MySQL. Any other driver, including a
// wrapper around one of these, gives ErrUnknownDialect.
func DetectDialect(db *sql.DB) (Dialect, error) {
	t := reflect.TypeOf(db.Driver())
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pkg := t.PkgPath()
	switch {
	case strings.Contains(pkg, "jackc/pgx"), strings.Contains(pkg, "lib/pq"):
		return Postgres, nil
	case strings.Contains(pkg, "sqlite"):
		return SQLite, nil
	case strings.Contains(pkg, "go-sql-driver/mysql"):
		return MySQL, nil
	}
	return 0, fmt.Errorf("%w: driver %s.%s; set Config.Dialect", ErrUnknownDialect, pkg, t.Name())
}

// resolve returns d, or the dialect detected from db when d is zero.
func (d Dialect) resolve(db *sql.DB) (Dialect, error) {
	switch d {
	case 0:
		return DetectDialect(db)
	case Postgres, SQLite, MySQL:
		return d, nil
	}
	return 0, fmt.Errorf("%w: %v", ErrUnknownDialect, d)
}

// The table, as the specification gives it, in each dialect.
//
// MySQL's TIMESTAMP is not the standard's: it converts from and to the
// session's time zone (so the kit's UTC wall clock would be shifted by a
// session in another zone), keeps whole seconds unless declared
// TIMESTAMP(6), and ends in January 2038. DATETIME(6) keeps the wall clock
// as written, to the microsecond, as PostgreSQL's TIMESTAMP does. MySQL
// cannot say CREATE INDEX IF NOT EXISTS, so its index is declared in the
// table.
const (
	createTable = `CREATE TABLE IF NOT EXISTS processed_webhook_events (
  event_id    CHAR(36)  NOT NULL PRIMARY KEY,
  received_at TIMESTAMP NOT NULL
)`
	createIndex = `CREATE INDEX IF NOT EXISTS processed_webhook_events_received_at ON processed_webhook_events (received_at)`

	createTableMySQL = `CREATE TABLE IF NOT EXISTS processed_webhook_events (
  event_id    CHAR(36)    NOT NULL PRIMARY KEY,
  received_at DATETIME(6) NOT NULL,
  INDEX processed_webhook_events_received_at (received_at)
)`
)

// createStatements returns the statements of CreateTable.
func (d Dialect) createStatements() []string {
	if d == MySQL {
		return []string{createTableMySQL}
	}
	return []string{createTable, createIndex}
}

// insertSQL records an event id. On PostgreSQL and SQLite it does nothing
// when the id is already there, so that the affected row count tells a new
// event (1) from a repeat (0).
//
// MySQL has no insert that ignores only a duplicate key. INSERT IGNORE
// turns every error it can into a warning: a value out of range is stored
// as a zero date, which the next purge deletes, and a row it drops reads as
// a repeat, so the event would be acknowledged and never handled. INSERT …
// ON DUPLICATE KEY UPDATE event_id = event_id reports 1 row for a repeat,
// as for an insert, when the connection sets CLIENT_FOUND_ROWS
// (clientFoundRows=true in go-sql-driver/mysql), which would run the
// handler twice. So MySQL gets a plain INSERT, and record tells a repeat by
// finding the id.
func (d Dialect) insertSQL() string {
	switch d {
	case Postgres:
		return `INSERT INTO processed_webhook_events (event_id, received_at) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING`
	case MySQL:
		return `INSERT INTO processed_webhook_events (event_id, received_at) VALUES (?, ?)`
	}
	return `INSERT INTO processed_webhook_events (event_id, received_at) VALUES (?, ?) ON CONFLICT (event_id) DO NOTHING`
}

// recordedSQL tells whether an event id is recorded (MySQL only).
const recordedSQL = `SELECT COUNT(*) FROM processed_webhook_events WHERE event_id = ?`

// purgeSQL deletes the ids received before a moment.
func (d Dialect) purgeSQL() string {
	if d == Postgres {
		return `DELETE FROM processed_webhook_events WHERE received_at < $1`
	}
	return `DELETE FROM processed_webhook_events WHERE received_at < ?`
}

// sqliteTimeLayout writes received_at on SQLite and MySQL: fixed width,
// UTC, no zone, so that comparing two values as text (which is what SQLite
// does with a TIMESTAMP column holding text) orders them in time. It is
// also a format SQLite's date functions and MySQL's DATETIME read.
const sqliteTimeLayout = "2006-01-02 15:04:05.000000"

// timeArg returns t, in UTC and truncated to microseconds (PostgreSQL's
// precision), as the argument that stores or compares received_at.
//
// PostgreSQL gets a time.Time in UTC: pgx and lib/pq write its wall clock,
// which a TIMESTAMP (without time zone) column keeps as it is. SQLite has
// no time type, and drivers disagree on how they write a time.Time (trimmed
// fractions, zone suffixes), so it gets text in one fixed layout. So does
// MySQL: go-sql-driver/mysql writes a time.Time's wall clock in the DSN's
// loc, which a customer may have set to their own zone; text is written as
// it is, into DATETIME(6) exactly.
func (d Dialect) timeArg(t time.Time) any {
	t = t.UTC().Truncate(time.Microsecond)
	if d == Postgres {
		return t
	}
	return t.Format(sqliteTimeLayout)
}
