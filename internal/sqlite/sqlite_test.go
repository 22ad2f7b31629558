package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

// migratedSQLite is a database file that Open created and migrated, once
// for the package's tests (storetest.FileTemplate).
var migratedSQLite = storetest.NewFileTemplate(sqlite.Migrate)

// TestStore runs the store suite on a new database file per test: a file
// (not :memory:) is what the service runs on. Each test's file is a copy
// of migratedSQLite: the migrations take most of an Open under the race
// detector, and the suite opens a store per leaf test. Open then finds
// every migration applied, as on a restart.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) driver.Driver {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		migratedSQLite.Copy(t, path)
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatalf("sqlite.Open: %v", err)
		}
		t.Cleanup(func() {
			sqlite.CheckBinaryIDs(t, s)
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return s
	})
}
