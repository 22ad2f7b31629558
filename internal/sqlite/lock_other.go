//go:build !unix

package sqlite

import "os"

// lockFile only creates the file where flock is not available.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
