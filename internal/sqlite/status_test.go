package sqlite

import (
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

// TestDBStatus: each state is stored as its letter and reads back as its
// name; a name the store does not know is refused both ways.
func TestDBStatus(t *testing.T) {
	want := map[string]string{"pending": "p", "delivered": "d", "failed": "f", "failed_permanently": "x"}
	if len(want) != len(webhooks.DeliveryStatuses) {
		t.Fatalf("the states are %v; the test knows %d", webhooks.DeliveryStatuses, len(want))
	}
	for _, st := range webhooks.DeliveryStatuses {
		v, err := dbStatus(st).Value()
		if err != nil || v != want[st] {
			t.Errorf("dbStatus(%q) = %v, %v; want %q", st, v, err, want[st])
		}
		var back dbStatus
		if err := back.Scan(v); err != nil || string(back) != st {
			t.Errorf("scan of %v: %q, %v; want %q", v, back, err, st)
		}
	}
	if v, err := dbStatus("sent").Value(); err == nil {
		t.Errorf("dbStatus(\"sent\") = %v; want an error", v)
	}
	var s dbStatus
	for _, src := range []any{"delivered", "q", int64(1), nil} {
		if err := s.Scan(src); err == nil {
			t.Errorf("scan of %#v: %q; want an error", src, s)
		}
	}
}
