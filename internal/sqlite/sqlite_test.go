package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

// TestStore runs the store suite on a new database file per test: a file
// (not :memory:) is what the service runs on. Each test's file is a copy
// of one that Open created and migrated once for the suite (and closed):
// the migrations take most of an Open under the race detector, and the
// suite opens a store per leaf test. Open then finds every migration
// applied, as it does on a restart.
func TestStore(t *testing.T) {
	template := migratedTemplate(t)
	storetest.Run(t, func(t *testing.T) driver.Driver {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		if err := os.WriteFile(path, template, 0o600); err != nil {
			t.Fatal(err)
		}
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

// migratedTemplate returns the bytes of a new database file that Open
// migrated, once closed: Close checkpoints the WAL into the file, so the
// file alone is the whole database.
func migratedTemplate(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "template.sqlite")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		t.Fatalf("the template's WAL holds %d bytes after Close: the file alone is not the database", fi.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
