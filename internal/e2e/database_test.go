package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/factuarea/webhooks/internal/pgtest"
	"github.com/factuarea/webhooks/internal/service"
)

// TestDatabase_KeyValueDSN: a PostgreSQL connection string in libpq's
// key=value form, which the postgres package documents, opens PostgreSQL.
// It used to be taken as the name of a SQLite file.
func TestDatabase_KeyValueDSN(t *testing.T) {
	t.Chdir(t.TempDir()) // where a SQLite file of that name would appear
	schema := pgtest.Schema(t)
	u, err := url.Parse(pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	dsn := fmt.Sprintf("host=%s port=%s dbname=%s user=%s sslmode=disable search_path=%s",
		u.Hostname(), u.Port(), u.Path[1:], u.User.Username(), schema)
	if pw, ok := u.User.Password(); ok {
		dsn += " password=" + pw
	}
	if !service.IsPostgres(dsn) {
		t.Errorf("IsPostgres(%q): got false", dsn)
	}
	ts := startService(t, "", func(c *service.Config) { c.Database = dsn })
	var a object
	ts.must(201, "POST", "/v1/accounts", adminKey, object{"name": "Acme"}, &a)
	conn := pgtest.Connect(t)
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM `+schema+`.accounts WHERE id = $1`, a["id"]).Scan(&n); err != nil || n != 1 {
		t.Errorf("the account in PostgreSQL's schema %s: got %d (%v), want 1", schema, n, err)
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("files made in the working folder: %v, want none", entries)
	}
	// Paths stay SQLite files, whatever they hold.
	for _, path := range []string{"data/webhooks.db", "sqlite:host=a.db", "/var/lib/webhooks/my=db.sqlite"} {
		if service.IsPostgres(path) {
			t.Errorf("IsPostgres(%q): got true", path)
		}
	}
}
