package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/pgtest"
)

// TestKill_HandedDeliveries: a process killed (SIGKILL) while the
// deliveries it registered are in its engine's memory, handed over at
// registration without a claim and attempted but not recorded, loses none
// of them. On SQLite the restarted process takes them back; on PostgreSQL
// another process does, once their leases lapse.
func TestKill_HandedDeliveries(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { testKillHanded(t, backend) })
	}
}

func testKillHanded(t *testing.T, backend string) {
	const (
		adminKey = "handoff-test-admin-key"
		events   = 8
	)
	// The first attempts hang until the process that made them dies; the
	// later ones are answered.
	var mu sync.Mutex
	delivered := map[string]int{} // by event id
	var held atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if held.Add(1) <= events {
			<-r.Context().Done()
			return
		}
		mu.Lock()
		delivered[r.Header.Get("Factuarea-Event-Id")]++
		mu.Unlock()
	}))
	defer sink.Close()

	db := filepath.Join(t.TempDir(), "webhooks.db")
	if backend == "postgres" {
		db = pgtest.SchemaURL(t)
	}
	env := []string{
		"WEBHOOKS_DATABASE=" + db, "WEBHOOKS_ADMIN_KEY=" + adminKey,
		"WEBHOOKS_ALLOW_NETWORKS=127.0.0.0/8", "WEBHOOKS_ALLOW_HTTP=true",
		"WEBHOOKS_ATTEMPT_TIMEOUT=2s", "WEBHOOKS_LEASE=3s", "WEBHOOKS_POLL_INTERVAL=200ms",
	}
	victim := startServe(t, env...)
	a := victim.api(t, adminKey, "POST", "/v1/accounts", map[string]any{"name": "Handoff"}, 201)
	c := victim.api(t, adminKey, "POST", "/v1/companies", map[string]any{"account_id": a["id"], "nif": "B12345674", "name": "Handoff SL"}, 201)
	companyID := c["id"].(string)
	victim.api(t, adminKey, "POST", "/v1/companies/"+companyID+"/webhook_endpoints",
		map[string]any{"url": sink.URL, "enabled_events": []string{"invoice.*"}}, 201)
	var ids []string
	for i := range events {
		ev := victim.api(t, adminKey, "POST", "/v1/events", map[string]any{
			"type": "invoice.sent", "company_id": companyID, "data": map[string]any{"object": map[string]any{"object": "invoice", "n": i}},
		}, 201)
		ids = append(ids, ev["id"].(string))
	}
	deadline := time.Now().Add(20 * time.Second)
	for held.Load() < events {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d attempts reached the sink", held.Load(), events)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := metric(t, victim, `webhooks_attempts_started_total{source="handed"}`); n != events {
		t.Fatalf("the process started %v attempts handed over at registration, want all %d (none claimed)", n, events)
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	victim.cmd.Wait()
	// SQLite: the same file, after a restart; PostgreSQL: another process,
	// which claims them when their leases lapse.
	other := startServe(t, env...)
	deadline = time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(delivered)
		mu.Unlock()
		if n == events {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events delivered after the kill", n, events)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, id := range ids {
		mu.Lock()
		n := delivered[id]
		mu.Unlock()
		if n != 1 {
			t.Errorf("event %s: answered %d times after the kill, want 1", id, n)
		}
	}
	if n := metric(t, other, `webhooks_attempts_started_total{source="claimed"}`); n < events {
		t.Errorf("the taking-over process claimed %v attempts, want at least %d", n, events)
	}
}
