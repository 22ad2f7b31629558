package e2e

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/pgtest"
	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// mysqlAddr is where the kits find MariaDB (kits/README.md).
const mysqlAddr = "127.0.0.1:3306"

const startMariaDB = "start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd"

// database is a receiver's database, made for one test and dropped after it.
type database struct {
	kind string
	// url is the receiver's DATABASE_URL.
	url string
	// driver and dsn open it for the test's own reads.
	driver, dsn string
}

// newDatabase creates an empty database of kind (sqlite, postgres or
// mysql). PostgreSQL and MariaDB get a database with a random name, so that
// parallel runs do not meet.
func newDatabase(t *testing.T, kind string) database {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	name := "kits_e2e_" + hex.EncodeToString(b[:])
	switch kind {
	case "sqlite":
		path := filepath.Join(t.TempDir(), "receiver.db")
		return database{kind: kind, url: "sqlite:" + path, driver: "sqlite", dsn: "file:" + path + "?_pragma=busy_timeout(10000)"}
	case "postgres":
		admin := pgtest.URL()
		execSQL(t, "pgx", admin, "CREATE DATABASE "+name,
			"PostgreSQL is not reachable at "+admin+" (set TEST_DATABASE_URL, or start it with `pg_ctlcluster 15 main start`)")
		t.Cleanup(func() {
			execSQL(t, "pgx", admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)", "drop the test database")
		})
		u, err := url.Parse(admin)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + name
		return database{kind: kind, url: u.String(), driver: "pgx", dsn: u.String()}
	case "mysql":
		cfg := mysql.NewConfig()
		cfg.User, cfg.Net, cfg.Addr = "root", "tcp", mysqlAddr
		admin := cfg.FormatDSN()
		execSQL(t, "mysql", admin, "CREATE DATABASE "+name,
			"MariaDB is not reachable at "+mysqlAddr+" as root without a password (start it with `"+startMariaDB+"`)")
		t.Cleanup(func() { execSQL(t, "mysql", admin, "DROP DATABASE IF EXISTS "+name, "drop the test database") })
		cfg.DBName = name
		return database{kind: kind, url: "mysql://root@" + mysqlAddr + "/" + name, driver: "mysql", dsn: cfg.FormatDSN()}
	}
	t.Fatalf("unknown database kind %q", kind)
	return database{}
}

// execSQL runs one statement on a connection of its own, failing with what
// when the server cannot be reached.
func execSQL(t *testing.T, driver, dsn, stmt, what string) {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer db.Close()
	// DROP DATABASE waits for a checkpoint: on a machine that runs the
	// other packages' PostgreSQL tests beside these, it took over 30 s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		t.Fatalf("%s: %s: %v", what, stmt, err)
	}
}

// effect is a row of webhook_effects.
type effect struct {
	EventID, Type, APIVersion string
	// Relationship and ObjectID are "" for NULL.
	Relationship, ObjectID string
}

// contents is what a receiver's database holds.
type contents struct {
	effects   []effect
	processed map[string]bool // processed_webhook_events' ids
}

// read reads the receiver's tables, on a connection opened for the read so
// that the test holds no lock the receiver could wait for.
func (d database) read(t *testing.T) contents {
	t.Helper()
	db, err := sql.Open(d.driver, d.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, `SELECT event_id, type, api_version, account_relationship, object_id FROM webhook_effects`)
	if err != nil {
		t.Fatalf("read webhook_effects on %s: %v", d.kind, err)
	}
	var c contents
	for rows.Next() {
		var e effect
		var rel, obj sql.NullString
		if err := rows.Scan(&e.EventID, &e.Type, &e.APIVersion, &rel, &obj); err != nil {
			t.Fatal(err)
		}
		e.Relationship, e.ObjectID = rel.String, obj.String
		c.effects = append(c.effects, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	rows, err = db.QueryContext(ctx, `SELECT event_id FROM processed_webhook_events`)
	if err != nil {
		t.Fatalf("read processed_webhook_events on %s: %v", d.kind, err)
	}
	defer rows.Close()
	c.processed = map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		c.processed[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}
