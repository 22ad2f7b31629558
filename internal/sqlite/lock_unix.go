//go:build unix

package sqlite

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive, non-blocking lock on path. The kernel drops
// it when the process ends, however it ends.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("sqlite: %s is in use by another process (one process per SQLite file; use PostgreSQL to run several): %w", path, err)
	}
	return f, nil
}
