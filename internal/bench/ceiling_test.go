package bench

import (
	"context"
	"testing"
	"time"
)

// TestLoopbackCeiling: the ceiling is a rate of exchanges that did
// happen, and a server that cannot be reached is an error, not a
// ceiling of zero that every share would divide by.
func TestLoopbackCeiling(t *testing.T) {
	r, err := loopbackCeiling(context.Background(), "127.0.0.1", 4, 200*time.Millisecond)
	if err != nil || r <= 0 {
		t.Fatalf("got %.0f req/s, %v; want a positive rate", r, err)
	}
	if _, err := loopbackCeiling(context.Background(), "192.0.2.1", 4, 200*time.Millisecond); err == nil {
		t.Error("listening on an address of no interface: got no error")
	}
}
