package bench

import (
	"testing"
	"time"
)

// TestStatCPU: the CPU time is read after the command name, whatever that
// name holds; a name with ") " in it used to shift every field.
func TestStatCPU(t *testing.T) {
	rest := " S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 12 0 100 1000000 500 18446744073709551615"
	for _, comm := range []string{"webhooks", "my webhooks", "a) (b", "x) 1 2 3"} {
		if got, want := statCPU("4242 ("+comm+")"+rest), 3250*time.Millisecond; got != want {
			t.Errorf("command %q: got %s, want %s", comm, got, want)
		}
	}
	if got := statCPU("garbage"); got != 0 {
		t.Errorf("garbage: got %s, want 0", got)
	}
}
