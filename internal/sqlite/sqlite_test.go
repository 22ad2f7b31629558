package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

// TestStore runs the store suite on a new database file per test: opening
// one is cheap, and a file (not :memory:) is what the service runs on.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) driver.Driver {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db.sqlite"))
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
