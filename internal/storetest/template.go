package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// FileTemplate is a database file made once per test process, that tests
// start from a copy of: a SQLite file that Open migrated, say, since the
// migrations take most of an Open under the race detector and a package's
// tests open many fresh stores. A store opened on a copy finds every
// migration applied, as on a restart.
type FileTemplate struct {
	create func(ctx context.Context, path string) error

	once  sync.Once
	bytes []byte
	err   error
}

// NewFileTemplate returns a template that create writes at path, when the
// first copy is asked for. What create leaves at path must be the whole
// database: a SQLite store closed (Close checkpoints its WAL into the file).
func NewFileTemplate(create func(ctx context.Context, path string) error) *FileTemplate {
	return &FileTemplate{create: create}
}

// Copy writes a copy of the template at path, making path's folder if
// needed.
func (ft *FileTemplate) Copy(tb testing.TB, path string) {
	tb.Helper()
	ft.once.Do(func() { ft.bytes, ft.err = ft.build() })
	if ft.err != nil {
		tb.Fatalf("the template database file: %v", ft.err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, ft.bytes, 0o600); err != nil {
		tb.Fatal(err)
	}
}

func (ft *FileTemplate) build() ([]byte, error) {
	dir, err := os.MkdirTemp("", "storetest-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	if err := ft.create(context.Background(), path); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("%d bytes were left in the WAL: the file alone is not the database", fi.Size())
	}
	return os.ReadFile(path)
}
