package sqlite

import (
	"database/sql/driver"
	"encoding/binary"
)

// leaseToken is a claim's token as lease_token keeps it. The engine's
// tokens are UUIDv7s, whose first 8 bytes (the millisecond, the version
// and a 12-bit sequence) google/uuid makes strictly increasing within the
// process that draws them: those 8 bytes, as an integer, tell its claims
// apart as the 16 do. The store is one process's (the lock file), and a
// process hands back every lease it finds at start-up (releaseAll), so no
// token of another process is ever compared.
//
// A delivery holds its lease from its registration (handed to the engine)
// to its attempt's record, which empties the column: the 8 bytes fewer are
// room freed on a page that later rows, appended at the table's end,
// mostly never take. Any other token is kept as dbID keeps an id.
type leaseToken string

// Value implements driver.Valuer.
func (v leaseToken) Value() (driver.Value, error) {
	if v == "" {
		return nil, nil
	}
	if b, ok := idBytes(string(v)); ok && b[6]>>4 == 7 {
		return int64(binary.BigEndian.Uint64(b[:8])), nil
	}
	return dbID(v).Value()
}
