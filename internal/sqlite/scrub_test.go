package sqlite_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

// TestPurgedBytesLeaveTheFiles: what the retention purge deletes leaves
// the database file and the WAL once Scrub has run (SPEC 19): deletions
// overwrite what they free (secure_delete), and the checkpoint empties
// the WAL. The marker is in the files before, so the test can fail.
func TestPurgedBytesLeaveTheFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	d, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	s := storetest.Stack(t, d)
	a := storetest.MustCreateAccount(t, s, "")
	co := storetest.MustCreateCompany(t, s, a.ID)
	storetest.MustCreateEndpoint(t, s, storetest.NewCompanyEndpoint(co.ID, "*"))
	const marker = "PURGEMARK-5b1d0c7e9a"
	created := time.Now().Add(-100 * 24 * time.Hour)
	var ids []string
	for range 20 {
		ev := storetest.NewEvent(t, "invoice.sent", co.ID, created)
		ev.Object = json.RawMessage(`{"object":"invoice","customer":"` + marker + `","pad":"` + string(bytes.Repeat([]byte("x"), 3000)) + `"}`)
		for _, dl := range storetest.MustRegisterEvent(t, s, ev) {
			storetest.MustFailPermanently(t, s, dl.ID, created)
		}
		ids = append(ids, ev.ID)
	}
	if !inFiles(t, path, marker) {
		t.Fatal("the marker is in none of the files before the purge: the test cannot see what it looks for")
	}
	if n, err := d.Purge(t.Context(), time.Now().Add(-90*24*time.Hour), time.Now(), 500); err != nil || n != len(ids) {
		t.Fatalf("Purge: got %d (%v), want %d", n, err, len(ids))
	}
	if err := d.Scrub(t.Context()); err != nil {
		t.Fatalf("Scrub: %v", err)
	}
	if inFiles(t, path, marker) {
		t.Error("the purged events' marker is still in the files after the scrub")
	}
	if _, err := d.FindEvent(t.Context(), ids[0]); webhooks.ErrorCode(err) != webhooks.ENOTFOUND {
		t.Errorf("FindEvent of a purged event: got %v, want not found", err)
	}
}

func inFiles(t *testing.T, path, marker string) bool {
	t.Helper()
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(marker)) {
			return true
		}
	}
	return false
}
