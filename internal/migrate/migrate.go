// Package migrate applies a storage backend's embedded SQL migrations, in
// order: each backend says how to apply one and record it (its own
// transaction and table), and this package which ones and when.
package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Files returns the migrations of fsys, migration/NNNN_name.sql, in the
// order they apply. Their numbers must run from 0001 without a gap or a
// repeat, so that two changes cannot both add "the next" migration.
func Files(fsys fs.FS) ([]string, error) {
	names, err := fs.Glob(fsys, "migration/*.sql")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	for i, name := range names {
		num, _, ok := strings.Cut(path.Base(name), "_")
		if n, err := strconv.Atoi(num); !ok || err != nil || len(num) != 4 || n != i+1 {
			return nil, fmt.Errorf("migration %s: want number %04d (migrations are NNNN_name.sql, numbered from 0001 without gaps)", name, i+1)
		}
	}
	return names, nil
}

// Run calls apply for each migration of fsys, in order; apply applies it
// unless its record says it was, and records it, in one transaction.
func Run(ctx context.Context, fsys fs.FS, apply func(ctx context.Context, name string, body []byte) error) error {
	names, err := Files(fsys)
	if err != nil {
		return err
	}
	for _, name := range names {
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		if err := apply(ctx, name, body); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	return nil
}
