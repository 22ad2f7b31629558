package main

import (
	"bytes"
	"database/sql"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestErasure_KillDuringLargeErasure deletes a company with many events
// and kills the serve process with SIGKILL while the background job is
// half way through its erasure. After the restart the job goes on where
// its last chunk committed: every event of the company ends erased, with
// its deliveries' bodies and its attempts' response bodies, the payloads
// leave the files, and nothing of the other company of the account was
// touched; registrations and deliveries go on meanwhile.
func TestErasure_KillDuringLargeErasure(t *testing.T) {
	if testing.Short() {
		t.Skip("registers tens of thousands of events")
	}
	const (
		adminKey = "erasure-test-admin-key"
		bigN     = 2_000 // the deleted company's events: 40 chunks (webhooks.ErasureChunk), the kill after the fourth or so
		keepN    = 200   // the other company's
		answered = 100   // of the big company's, delivered before the endpoint is disabled
	)
	dir := t.TempDir()
	path := filepath.Join(dir, "webhooks.db")
	var arrivals atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrivals.Add(1)
		w.Write([]byte(`{"echo":"ANSWERMARK-c3f1"}`))
	}))
	defer sink.Close()
	env := []string{
		"WEBHOOKS_DATABASE=" + path, "WEBHOOKS_ADMIN_KEY=" + adminKey,
		"WEBHOOKS_ALLOW_NETWORKS=127.0.0.0/8", "WEBHOOKS_ALLOW_HTTP=true",
		"WEBHOOKS_ERASE_INTERVAL=200ms", "WEBHOOKS_SCRUB_INTERVAL=1s", "WEBHOOKS_LOG_LEVEL=info",
	}
	p := startServe(t, env...)
	a := p.api(t, adminKey, "POST", "/v1/accounts", map[string]any{"name": "Holding"}, 201)
	big := p.api(t, adminKey, "POST", "/v1/companies", map[string]any{"account_id": a["id"], "nif": "B12345674", "name": "Big SL"}, 201)
	keep := p.api(t, adminKey, "POST", "/v1/companies", map[string]any{"account_id": a["id"], "nif": "A58818501", "name": "Keep SL"}, 201)
	ep := p.api(t, adminKey, "POST", "/v1/accounts/"+a["id"].(string)+"/webhook_endpoints",
		map[string]any{"url": sink.URL, "enabled_events": []string{"*"}}, 201)
	epPath := "/v1/accounts/" + a["id"].(string) + "/webhook_endpoints/" + ep["id"].(string)
	batch := func(company string, n int, mark string) {
		for done := 0; done < n; {
			var items []map[string]any
			for ; len(items) < 100 && done < n; done++ {
				items = append(items, map[string]any{"type": "invoice.sent", "company_id": company,
					"data": map[string]any{"object": map[string]any{"object": "invoice", "n": done, "customer": mark}}})
			}
			p.api(t, adminKey, "POST", "/v1/events/batch", map[string]any{"events": items}, 200)
		}
	}
	batch(big["id"].(string), answered, "BIGMARK-9e27")
	batch(keep["id"].(string), keepN, "KEEPMARK-41d0")
	waitUntil(t, "the first deliveries arrive", 30*time.Second, func() bool { return arrivals.Load() >= answered+keepN })
	// The rest are stored failed (endpoint_disabled), each with its body:
	// no HTTP needed to fill the database.
	p.api(t, adminKey, "PATCH", epPath, map[string]any{"status": "disabled"}, 200)
	batch(big["id"].(string), bigN-answered, "BIGMARK-9e27")

	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		for i, a := range args {
			// The store keeps an id as its 16 bytes.
			if id, ok := a.(string); ok {
				if args[i], err = hex.DecodeString(strings.ReplaceAll(id, "-", "")); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	erased := func(company string) int {
		return count(`SELECT count(*) FROM events WHERE company_id = ? AND erased IS NOT NULL`, company)
	}
	if n := count(`SELECT count(*) FROM events WHERE company_id = ?`, big["id"]); n != bigN {
		t.Fatalf("the big company's events: got %d, want %d", n, bigN)
	}

	p.api(t, adminKey, "DELETE", "/v1/companies/"+big["id"].(string), nil, 204)
	deleted := time.Now()
	waitUntil(t, "the erasure to be under way", 30*time.Second, func() bool { return erased(big["id"].(string)) >= bigN/10 })
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	atKill := erased(big["id"].(string))
	if atKill >= bigN {
		t.Fatalf("the erasure finished before the kill (%d events): make the company larger", atKill)
	}
	// The rest gets three times what the first part took at the same
	// pace: the race detector and a shared machine slow the chunks down
	// several times over, and a job that did not resume never finishes.
	pace := time.Since(deleted) / time.Duration(atKill)
	rest := max(time.Minute, 3*pace*time.Duration(bigN-atKill))
	t.Logf("killed with %d of %d events erased after %s; the rest gets %s", atKill, bigN, time.Since(deleted).Round(time.Millisecond), rest.Round(time.Second))

	p = startServe(t, env...)
	// Registrations and deliveries go on during the erasure.
	p.api(t, adminKey, "PATCH", epPath, map[string]any{"status": "enabled"}, 200)
	before := arrivals.Load()
	p.api(t, adminKey, "POST", "/v1/events", map[string]any{"type": "invoice.paid", "company_id": keep["id"],
		"data": map[string]any{"object": map[string]any{"object": "invoice"}}}, 201)
	waitUntil(t, "a delivery after the restart", 30*time.Second, func() bool { return arrivals.Load() > before })
	waitUntil(t, "the erasure to finish", rest, func() bool {
		return erased(big["id"].(string)) == bigN && count(`SELECT count(*) FROM erasures`) == 0
	})
	// Nothing of the company remains.
	for q, want := range map[string]int{
		`SELECT count(*) FROM events WHERE company_id = ? AND (object <> '' OR traceparent IS NOT NULL OR erased IS NULL)`:     0,
		`SELECT count(*) FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.company_id = ? AND d.body_n IS NOT NULL`: 0,
		`SELECT count(*) FROM bodies b JOIN events e ON e.id = b.event_id WHERE e.company_id = ?`:                              0,
		`SELECT count(*) FROM attempts a JOIN deliveries d ON d.id = a.delivery_id JOIN events e ON e.id = d.event_id
			WHERE e.company_id = ? AND length(a.response_body) > 0`: 0,
		`SELECT count(*) FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.company_id = ? AND d.status = 'p'`:                      0,
		`SELECT count(*) FROM attempts a JOIN deliveries d ON d.id = a.delivery_id JOIN events e ON e.id = d.event_id WHERE e.company_id = ?`: answered,
		`SELECT count(*) FROM companies WHERE id = ? AND deleted IS NOT NULL AND name = '' AND nif <> 'B12345674'`:                            1,
	} {
		if got := count(q, big["id"]); got != want {
			t.Errorf("%s: got %d, want %d", q, got, want)
		}
	}
	// Nothing else was touched.
	for q, want := range map[string]int{
		`SELECT count(*) FROM events WHERE company_id = ? AND erased IS NULL AND object LIKE '%KEEPMARK-41d0%'`: keepN,
		`SELECT count(*) FROM deliveries d JOIN bodies b ON b.event_id = d.event_id AND b.n = d.body_n
			JOIN events e ON e.id = d.event_id WHERE e.company_id = ? AND length(b.body) > 0`: keepN + 1,
		`SELECT count(*) FROM attempts a JOIN deliveries d ON d.id = a.delivery_id JOIN events e ON e.id = d.event_id
			WHERE e.company_id = ? AND length(a.response_body) > 0`: keepN + 1,
		`SELECT count(*) FROM companies WHERE id = ? AND deleted IS NULL AND name = 'Keep SL'`: 1,
	} {
		if got := count(q, keep["id"]); got != want {
			t.Errorf("%s: got %d, want %d", q, got, want)
		}
	}
	p.api(t, adminKey, "GET", "/v1/accounts/"+a["id"].(string), nil, 200)
	p.api(t, adminKey, "GET", epPath, nil, 200)
	// And the bytes leave the files.
	waitUntil(t, "the big company's payloads to leave the files", time.Minute, func() bool {
		return !filesContain(t, path, "BIGMARK-9e27")
	})
	if !filesContain(t, path, "KEEPMARK-41d0") {
		t.Error("the other company's payloads are gone from the files too")
	}
}

func waitUntil(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// filesContain reports whether the SQLite database at path or its WAL
// holds marker.
func filesContain(t *testing.T, path, marker string) bool {
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
