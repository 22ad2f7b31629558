package e2e

import (
	"slices"
	"testing"
	"time"
)

// TestRateLimit: an endpoint's rate_limit (SPEC 14) on the SQLite store,
// whose one process holds it in memory: no one-second window at the
// receiver holds more than the limit, every delivery arrives, and an
// unlimited endpoint's deliveries are not held behind the backlog. The
// field is validated, shown, and removed with null.
func TestRateLimit(t *testing.T) {
	const limit, events = 4, 12
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	limited, free := newSink(t), newSink(t)
	parent := "/v1/companies/" + acme.companyID
	for _, bad := range []any{0, 10001, 2.5, "5"} {
		ts.wantError(400, "invalid_request", "POST", parent+"/webhook_endpoints", acme.key, object{"url": limited.URL, "enabled_events": []string{"*"}, "rate_limit": bad})
	}
	ep := ts.newEndpoint(parent, acme.key, object{"url": limited.URL, "enabled_events": []string{"invoice.*"}, "rate_limit": limit})
	if ep.object["rate_limit"] != float64(limit) {
		t.Fatalf("rate_limit: %v", ep.object["rate_limit"])
	}
	other := ts.newEndpoint(parent, acme.key, object{"url": free.URL, "enabled_events": []string{"invoice.*"}})
	if other.object["rate_limit"] != nil {
		t.Errorf("an endpoint without a limit: rate_limit %v, want null", other.object["rate_limit"])
	}
	start := time.Now()
	for range events {
		ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
	}
	freeGot := free.waitRequests(t, events, 5*time.Second)
	if took := freeGot[len(freeGot)-1].at.Sub(start); took > 2*time.Second {
		t.Errorf("the unlimited endpoint's deliveries took %s, want them at once", took)
	}
	got := limited.waitRequests(t, events, 15*time.Second)
	var times []time.Time
	seen := map[string]bool{}
	for _, r := range got {
		times = append(times, r.at)
		if id := r.header.Get("Factuarea-Delivery-Id"); seen[id] {
			t.Errorf("delivery %s sent twice", id)
		} else {
			seen[id] = true
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for i := range times {
		n := 0
		for j := i; j < len(times) && times[j].Sub(times[i]) < time.Second; j++ {
			n++
		}
		if n > limit {
			t.Fatalf("%d requests within one second from %s, want at most %d", n, times[i].Sub(start), limit)
		}
	}
	ts.waitFor("the last attempts' records", 5*time.Second, func() bool {
		for _, d := range ts.deliveries(ep, acme.key) {
			if d["status"] == "pending" {
				return false
			}
		}
		return true
	})
	for _, d := range ts.deliveries(ep, acme.key) {
		if d["status"] != "delivered" || d["attempt_count"] != 1.0 {
			t.Errorf("a throttled delivery: %v, want delivered at its one attempt (waiting is not failing)", d)
		}
	}
	var patched object
	ts.must(200, "PATCH", ep.path, acme.key, object{"rate_limit": nil}, &patched)
	if patched["rate_limit"] != nil {
		t.Errorf("PATCH rate_limit null: got %v", patched["rate_limit"])
	}
}
