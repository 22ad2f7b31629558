package webhooks

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on what callers send. Every front end checks its input with these,
// so that a request refused by one backend is refused by every other (a
// NUL that PostgreSQL refuses and SQLite would store, say) and a number
// never wraps into something else before it is checked.
const (
	MaxNameLength          = 200
	MaxCorrelationIDLength = 255
	MaxIdempotencyKeyLen   = 255
	MaxOrderingKeyLength   = 200
	// MaxUnixTime is 9999-12-31T23:59:59Z, the last moment every backend
	// and every client's date type can hold.
	MaxUnixTime = 253402300799
)

// CheckText refuses text that cannot be stored and sent as JSON on every
// backend: invalid UTF-8, or a NUL character.
func CheckText(field, s string) error {
	if !utf8.ValidString(s) {
		return Errorf(EINVALID, "%s is not valid UTF-8 text.", field)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return Errorf(EINVALID, "%s contains a NUL character.", field)
	}
	return nil
}

// CheckLength refuses text longer than max characters (CheckText first).
func CheckLength(field, s string, max int) error {
	if err := CheckText(field, s); err != nil {
		return err
	}
	if utf8.RuneCountInString(s) > max {
		return Errorf(EINVALID, "%s must be at most %d characters.", field, max)
	}
	return nil
}

// UnixTime reads a time given in unix seconds, from 0 to MaxUnixTime: a
// larger number would wrap (or is milliseconds).
func UnixTime(field string, seconds int64) (time.Time, error) {
	if seconds < 0 || seconds > MaxUnixTime {
		hint := ""
		if seconds > MaxUnixTime && seconds/1000 <= MaxUnixTime {
			hint = " (it looks like milliseconds)"
		}
		return time.Time{}, Errorf(EINVALID, "%s must be a time in unix seconds%s.", field, hint)
	}
	return time.Unix(seconds, 0).UTC(), nil
}

// Seconds reads a duration given in whole seconds, from 0 to max; it is
// checked before it is multiplied, so that no number wraps into a valid
// one.
func Seconds(field string, seconds int64, max time.Duration) (time.Duration, error) {
	if seconds < 0 || seconds > int64(max/time.Second) {
		return 0, Errorf(EINVALID, "%s must be from 0 to %d seconds.", field, int64(max/time.Second))
	}
	return time.Duration(seconds) * time.Second, nil
}

// Page bounds.
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 100
)

// ValidateLimit checks a page's limit, whatever its list's cursor is.
func (p Page) ValidateLimit() error {
	if p.Limit < 1 || p.Limit > MaxPageLimit {
		return Errorf(EINVALID, "limit must be a number from 1 to %d.", MaxPageLimit)
	}
	return nil
}

// Validate checks a page a caller asks for, of a list whose cursor is an
// id.
func (p Page) Validate() error {
	if err := p.ValidateLimit(); err != nil {
		return err
	}
	if p.StartingAfter != "" && !ValidID(p.StartingAfter) {
		return Errorf(EINVALID, "starting_after must be the id of an item of the list.")
	}
	return nil
}

// CheckOrderingKey refuses an ordering key (SPEC 18) that is not 1 to
// MaxOrderingKeyLength printable characters; empty is no key.
func CheckOrderingKey(field, key string) error {
	if key == "" {
		return nil
	}
	if err := CheckLength(field, key, MaxOrderingKeyLength); err != nil {
		return err
	}
	for _, r := range key {
		if !unicode.IsPrint(r) {
			return Errorf(EINVALID, "%s must be printable characters (no control characters or line breaks).", field)
		}
	}
	return nil
}
