package sqlite

import (
	"database/sql/driver"
	"encoding/hex"
	"fmt"

	msqlite "modernc.org/sqlite"
)

// dbID is an id (SPEC 1: a UUID in its canonical 36-character form) as
// the store keeps it: its 16 bytes, in every table and index, which is
// a third of the text's bytes where the history's rows are mostly ids.
// The bytes sort as the text does, so (created, id) orders and cursors
// are unchanged.
//
// A string that is not a canonical id is kept as the text it is: no
// stored id equals it (a lookup of a malformed id finds nothing), and
// any value reads back as it was written.
//
// Arguments are dbID(s) (nullID for a column that stores "" as NULL);
// a scan reads into (*dbID)(&s), NULL as "".
type dbID string

// Value implements driver.Valuer.
func (v dbID) Value() (driver.Value, error) {
	if b, ok := idBytes(string(v)); ok {
		return b, nil
	}
	return string(v), nil
}

// Scan implements sql.Scanner.
func (v *dbID) Scan(src any) error {
	switch s := src.(type) {
	case nil:
		*v = ""
	case string:
		*v = dbID(s)
	case []byte:
		if len(s) != 16 {
			return fmt.Errorf("sqlite: an id of %d bytes", len(s))
		}
		*v = dbID(idText(s))
	default:
		return fmt.Errorf("sqlite: an id stored as %T", src)
	}
	return nil
}

// nullID stores an empty id as NULL.
func nullID(s string) any {
	if s == "" {
		return nil
	}
	return dbID(s)
}

// idArgs are ss as arguments.
func idArgs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = dbID(s)
	}
	return out
}

// idBytes returns a canonical id's 16 bytes: lowercase hex digits in
// groups of 8-4-4-4-12.
func idBytes(s string) ([]byte, bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return nil, false
	}
	b := make([]byte, 16)
	j := 0
	for i := 0; i < 36; i += 2 {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i--
			continue
		}
		hi, ok1 := lowerHex(s[i])
		lo, ok2 := lowerHex(s[i+1])
		if !ok1 || !ok2 {
			return nil, false
		}
		b[j] = hi<<4 | lo
		j++
	}
	return b, true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// idText is the canonical text of an id's 16 bytes.
func idText(b []byte) string {
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}

// webhooks_id(x) is dbID's rule in SQL, for the migration that turned
// the stored text ids into their bytes (0017_binary_ids.sql): a
// canonical id's 16 bytes, any other value as it is.
func init() {
	err := msqlite.RegisterDeterministicScalarFunction("webhooks_id", 1, func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		if s, ok := args[0].(string); ok {
			return dbID(s).Value()
		}
		return args[0], nil
	})
	if err != nil {
		panic(err)
	}
}
