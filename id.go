package webhooks

import (
	"regexp"

	"github.com/google/uuid"
)

// NewID returns a new UUIDv7 in its canonical lowercase form. Being
// time-ordered, ids sort by creation and keep index inserts at the end.
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

var idPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// ValidID reports whether s is a canonical lowercase UUID, the only form
// the service issues. Anything else cannot name an object, so lookups of it
// answer "not found" without touching storage.
func ValidID(s string) bool {
	return idPattern.MatchString(s)
}
