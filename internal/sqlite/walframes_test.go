package sqlite

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/storetest"
)

// TestWalframes runs scripts/walframes (docs/performance.md's count of
// the pages each write transaction writes) on a copy of a live store's
// write-ahead log: each registration is one transaction that writes the
// events table, and is counted as one.
func TestWalframes(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run scripts/walframes:", err)
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "live.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st := storetest.Stack(t, s)
	a := storetest.MustCreateAccount(t, st, "")
	c := storetest.MustCreateCompany(t, st, a.ID)
	storetest.MustCreateEndpoint(t, st, storetest.NewCompanyEndpoint(c.ID, "*"))
	// The log restarts after a full checkpoint: it then holds only the
	// registrations, as a busy service's holds mostly those and records.
	if err := s.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	const events = 20
	for range events {
		storetest.MustRegisterEvent(t, st, storetest.NewEvent(t, "invoice.sent", c.ID, time.Now()))
	}
	// The copy is what an operator takes of a running service: the store
	// stays open, so its log is not checkpointed away.
	copyDir := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copyDir, "copy.db"+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(python, "../../scripts/walframes", filepath.Join(copyDir, "copy.db")).CombinedOutput()
	if err != nil {
		t.Fatalf("walframes: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`registrations: (\d+) transactions, ([0-9.]+) frames each`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("walframes counted no registration:\n%s", out)
	}
	if n, _ := strconv.Atoi(string(m[1])); n != events {
		t.Errorf("walframes counted %d registrations, want %d:\n%s", n, events, out)
	}
	if f, _ := strconv.ParseFloat(string(m[2]), 64); f < 3 {
		t.Errorf("a registration wrote %.1f pages, want at least the event, its delivery and their keys:\n%s", f, out)
	}
	// One event and one delivery per transaction: each index of theirs
	// gets one entry, in its last leaf.
	for _, index := range []string{"events_created", "deliveries_event"} {
		if !regexp.MustCompile(`(?m)^  ` + index + ` +leaf +1\.00 per transaction$`).Match(out) {
			t.Errorf("each registration should write one leaf of %s:\n%s", index, out)
		}
	}
}
