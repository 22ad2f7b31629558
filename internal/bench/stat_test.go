package bench

import (
	"net/url"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/pgtest"
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

// TestPostgresCPU: PostgreSQL's processes are found by name and their CPU
// summed; the suite's PostgreSQL tests need a server on this machine,
// whose postmaster and background workers have run for a while.
func TestPostgresCPU(t *testing.T) {
	pgtest.SchemaURL(t) // a server answers, or the test fails saying how to start one
	if u, err := url.Parse(pgtest.URL()); err == nil && u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1" {
		t.Skipf("the test server %s is not on this machine: its CPU cannot be read here", u.Hostname())
	}
	deadline := time.Now().Add(10 * time.Second)
	for postgresCPU() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no CPU time found for any process named postgres, with a server running here")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
