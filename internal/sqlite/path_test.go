package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/factuarea/webhooks/internal/sqlite"
)

// TestOpen_PathWithURICharacters: a path with "#", "?" or "%" opens that
// file. The path goes into a file: URI, where "#" used to end it, so that
// "data#2/webhooks.db" opened a file called "data" beside it (and two
// such folders shared one database).
func TestOpen_PathWithURICharacters(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a#b", "c?d", "e%23f", "g%h"} {
		path := filepath.Join(dir, name, "webhooks.db")
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatalf("Open(%q): %v", path, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("Open(%q): the database is not at that path (%v)", path, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			t.Errorf("Open made the file %s, outside the folders it was given", e.Name())
		}
	}
}
