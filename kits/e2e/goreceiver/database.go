package main

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/factuarea/webhooks/receiver"
	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// openDatabase opens a DATABASE_URL of the contract: sqlite:<absolute path>,
// postgres://… or mysql://user[:password]@host:port/database.
func openDatabase(raw string) (*sql.DB, receiver.Dialect, error) {
	switch {
	case raw == "":
		return nil, 0, errors.New("DATABASE_URL is required")
	case strings.HasPrefix(raw, "sqlite:"):
		path := strings.TrimPrefix(raw, "sqlite:")
		if !filepath.IsAbs(path) {
			return nil, 0, fmt.Errorf("DATABASE_URL %q: want sqlite:<absolute path>", raw)
		}
		// An immediate transaction lock and a busy timeout make a second
		// copy of an event wait for the first one's commit instead of
		// failing (see the receiver package's documentation).
		db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate&_pragma=busy_timeout(10000)")
		return db, receiver.SQLite, err
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		db, err := sql.Open("pgx", raw)
		return db, receiver.Postgres, err
	case strings.HasPrefix(raw, "mysql://"):
		u, err := url.Parse(raw)
		if err != nil {
			return nil, 0, fmt.Errorf("DATABASE_URL: %w", err)
		}
		cfg := mysql.NewConfig()
		cfg.Net, cfg.Addr, cfg.DBName = "tcp", u.Host, strings.TrimPrefix(u.Path, "/")
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		if cfg.DBName == "" {
			return nil, 0, fmt.Errorf("DATABASE_URL %q names no database", raw)
		}
		connector, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, 0, fmt.Errorf("DATABASE_URL: %w", err)
		}
		return sql.OpenDB(connector), receiver.MySQL, nil
	}
	return nil, 0, fmt.Errorf("DATABASE_URL %q: want sqlite:<path>, postgres://… or mysql://…", raw)
}
