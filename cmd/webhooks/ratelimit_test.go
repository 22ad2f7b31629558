package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/pgtest"
)

// TestCluster_RateLimit runs three serve processes on one PostgreSQL
// database and registers events through all of them for two endpoints:
// one with rate_limit 5, one without. At the receiver, no one-second
// window holds more than 5 of the limited endpoint's requests, every
// delivery arrives, and the other endpoint's deliveries arrive at once,
// while the limited one's backlog waits (SPEC 14).
func TestCluster_RateLimit(t *testing.T) {
	const (
		adminKey = "rate-limit-test-admin-key"
		limit    = 5
		events   = 40
	)
	db := pgtest.SchemaURL(t)
	var mu sync.Mutex
	arrived := map[string][]time.Time{} // by path
	latency := []time.Duration{}        // of the unlimited endpoint, from registration
	registered := map[string]time.Time{}
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		now := time.Now()
		mu.Lock()
		arrived[r.URL.Path] = append(arrived[r.URL.Path], now)
		if r.URL.Path == "/free" {
			if at, ok := registered[r.Header.Get("Factuarea-Event-Id")]; ok {
				latency = append(latency, now.Sub(at))
			}
		}
		mu.Unlock()
	}))
	defer sink.Close()
	env := []string{
		"WEBHOOKS_DATABASE=" + db, "WEBHOOKS_ADMIN_KEY=" + adminKey,
		"WEBHOOKS_ALLOW_NETWORKS=127.0.0.0/8", "WEBHOOKS_ALLOW_HTTP=true", "WEBHOOKS_POLL_INTERVAL=200ms",
	}
	procs := []*process{startServe(t, env...), startServe(t, env...), startServe(t, env...)}
	a := procs[0].api(t, adminKey, "POST", "/v1/accounts", map[string]any{"name": "Cluster"}, 201)
	c := procs[0].api(t, adminKey, "POST", "/v1/companies", map[string]any{"account_id": a["id"], "nif": "B12345674", "name": "Cluster SL"}, 201)
	companyID := c["id"].(string)
	ep := procs[1].api(t, adminKey, "POST", "/v1/companies/"+companyID+"/webhook_endpoints",
		map[string]any{"url": sink.URL + "/limited", "enabled_events": []string{"invoice.*"}, "rate_limit": limit}, 201)
	if ep["rate_limit"] != float64(limit) {
		t.Fatalf("created endpoint: rate_limit %v", ep["rate_limit"])
	}
	procs[2].api(t, adminKey, "POST", "/v1/companies/"+companyID+"/webhook_endpoints",
		map[string]any{"url": sink.URL + "/free", "enabled_events": []string{"invoice.*"}}, 201)

	start := time.Now()
	for i := range events {
		ev := procs[i%3].api(t, adminKey, "POST", "/v1/events", map[string]any{
			"type": "invoice.sent", "company_id": companyID, "data": map[string]any{"object": map[string]any{"object": "invoice", "n": i}},
		}, 201)
		mu.Lock()
		registered[ev["id"].(string)] = time.Now()
		mu.Unlock()
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n, m := len(arrived["/limited"]), len(arrived["/free"])
		mu.Unlock()
		if n >= events && m >= events {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: %d limited and %d free deliveries of %d arrived", n, m, events)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	times := slices.Clone(arrived["/limited"])
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	most := 0
	for i := range times {
		j := i
		for j < len(times) && times[j].Sub(times[i]) < time.Second {
			j++
		}
		most = max(most, j-i)
	}
	if most > limit {
		t.Errorf("the receiver saw %d requests of the limited endpoint within one second, want at most %d", most, limit)
	}
	took := times[len(times)-1].Sub(start)
	if want := time.Duration(events/limit-1) * time.Second; took < want {
		t.Errorf("the limited endpoint's %d deliveries took %s, want at least %s", events, took, want)
	}
	slices.Sort(latency)
	p95 := latency[len(latency)*95/100]
	if p95 > time.Second {
		t.Errorf("the unlimited endpoint's p95 latency is %s while the other is throttled, want under a second", p95)
	}
	t.Logf("limited: %d deliveries in %s, at most %d in a second; unlimited: p95 %s", len(times), took, most, p95)
	if len(arrived["/limited"]) != events {
		t.Errorf("limited endpoint: %d requests, want %d (one per delivery)", len(arrived["/limited"]), events)
	}
}
