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
	// MySQL and MariaDB: "?" placeholders and INSERT IGNORE. Not exercised
	// by the kit's own tests.
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

// The table, exactly as the specification gives it, in each dialect. MySQL
// cannot say CREATE INDEX IF NOT EXISTS, so its index is declared in the
// table.
const (
	createTable = `CREATE TABLE IF NOT EXISTS processed_webhook_events (
  event_id    CHAR(36)  NOT NULL PRIMARY KEY,
  received_at TIMESTAMP NOT NULL
)`
	createIndex = `CREATE INDEX IF NOT EXISTS processed_webhook_events_received_at ON processed_webhook_events (received_at)`

	createTableMySQL = `CREATE TABLE IF NOT EXISTS processed_webhook_events (
  event_id    CHAR(36)  NOT NULL PRIMARY KEY,
  received_at TIMESTAMP NOT NULL,
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

// insertSQL records an event id, doing nothing when it is already there, so
// that the affected row count tells a new event (1) from a repeat (0).
func (d Dialect) insertSQL() string {
	switch d {
	case Postgres:
		return `INSERT INTO processed_webhook_events (event_id, received_at) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING`
	case MySQL:
		return `INSERT IGNORE INTO processed_webhook_events (event_id, received_at) VALUES (?, ?)`
	}
	return `INSERT INTO processed_webhook_events (event_id, received_at) VALUES (?, ?) ON CONFLICT (event_id) DO NOTHING`
}

// purgeSQL deletes the ids received before a moment.
func (d Dialect) purgeSQL() string {
	if d == Postgres {
		return `DELETE FROM processed_webhook_events WHERE received_at < $1`
	}
	return `DELETE FROM processed_webhook_events WHERE received_at < ?`
}

// sqliteTimeLayout writes received_at on SQLite: fixed width, UTC, no zone,
// so that comparing two values as text (which is what SQLite does with a
// TIMESTAMP column holding text) orders them in time. It is also a format
// SQLite's date functions read.
const sqliteTimeLayout = "2006-01-02 15:04:05.000000"

// timeArg returns t, in UTC and truncated to microseconds (PostgreSQL's
// precision), as the argument that stores or compares received_at.
//
// PostgreSQL and MySQL get a time.Time in UTC: their drivers write its wall
// clock, which a TIMESTAMP (without time zone) column keeps as it is. SQLite
// has no time type, and drivers disagree on how they write a time.Time
// (trimmed fractions, zone suffixes), so it gets text in one fixed layout.
func (d Dialect) timeArg(t time.Time) any {
	t = t.UTC().Truncate(time.Microsecond)
	if d == SQLite {
		return t.Format(sqliteTimeLayout)
	}
	return t
}
