package sqlite

import (
	"database/sql/driver"
	"fmt"

	webhooks "github.com/factuarea/webhooks"
)

// dbStatus is a delivery's state as deliveries.status keeps it: a letter,
// not the name, in the row and in the endpoint's index, where nearly every
// delivery says "delivered" (9 bytes; 1 now). The SQL says the letters:
//
//	'p' pending, 'd' delivered, 'f' failed, 'x' failed_permanently
//
// Arguments are dbStatus(s); a scan reads into (*dbStatus)(&s).
type dbStatus string

var (
	statusLetter = map[string]string{
		webhooks.DeliveryPending:           "p",
		webhooks.DeliveryDelivered:         "d",
		webhooks.DeliveryFailed:            "f",
		webhooks.DeliveryFailedPermanently: "x",
	}
	letterStatus = func() map[string]string {
		m := map[string]string{}
		for s, l := range statusLetter {
			m[l] = s
		}
		return m
	}()
)

// Value implements driver.Valuer. A state that is none of the four is a
// bug above the store, not a value to keep.
func (v dbStatus) Value() (driver.Value, error) {
	l, ok := statusLetter[string(v)]
	if !ok {
		return nil, fmt.Errorf("sqlite: no delivery state %q", string(v))
	}
	return l, nil
}

// Scan implements sql.Scanner.
func (v *dbStatus) Scan(src any) error {
	var l string
	switch s := src.(type) {
	case string:
		l = s
	case []byte:
		l = string(s)
	default:
		return fmt.Errorf("sqlite: a delivery state stored as %T", src)
	}
	st, ok := letterStatus[l]
	if !ok {
		return fmt.Errorf("sqlite: a delivery state stored as %q", l)
	}
	*v = dbStatus(st)
	return nil
}

// statusArgs are ss as arguments.
func statusArgs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = dbStatus(s)
	}
	return out
}
