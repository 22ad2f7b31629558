package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/service"
)

// TestFullSchedule follows one delivery to a failing endpoint through the
// whole schedule on a fake clock: 8 attempts, waits of 1 min, 5 min, 30 min,
// 2 h, 12 h, 1 day and 3 days each within ±10 %, then failed_permanently
// with reason schedule_exhausted.
func TestFullSchedule(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)}
	ts := startService(t, "", func(c *service.Config) { c.Now = clock.Now })
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	s.setRespond(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
	ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})

	get := func() object {
		ds := ts.deliveries(ep, acme.key)
		if len(ds) != 1 {
			t.Fatalf("got %d deliveries, want 1", len(ds))
		}
		return ds[0]
	}
	for n := 1; n <= 8; n++ {
		ts.waitFor(fmt.Sprintf("attempt %d", n), 5*time.Second, func() bool { return ts.attempts() >= n })
		d := get()
		if d["attempt_count"] != float64(n) {
			t.Fatalf("after attempt %d: attempt_count %v", n, d["attempt_count"])
		}
		if n == 8 {
			if d["status"] != "failed_permanently" || d["reason"] != "schedule_exhausted" || d["next_attempt_at"] != nil {
				t.Fatalf("after the 8th attempt: %v", d)
			}
			break
		}
		if d["status"] != "pending" {
			t.Fatalf("after attempt %d: status %v, want pending", n, d["status"])
		}
		attemptAt := clock.Now()
		next := time.Unix(int64(d["next_attempt_at"].(float64)), 0)
		wait, want := next.Sub(attemptAt), webhooks.DefaultRetryWaits[n-1]
		lo, hi := time.Duration(float64(want)*0.9)-time.Second, time.Duration(float64(want)*1.1)+time.Second
		if wait < lo || wait > hi {
			t.Errorf("wait after attempt %d: got %s, want %s ± 10 %%", n, wait, want)
		}
		// Just before the wait ends nothing happens; at its end the next
		// attempt goes.
		clock.Set(next.Add(-2 * time.Second))
		ts.idle()
		if got := ts.attempts(); got != n {
			t.Fatalf("attempt %d made before its time (%d attempts)", n+1, got)
		}
		clock.Set(next.Add(time.Second))
		ts.svc.Engine.Wake()
	}
	if got := len(s.requests()); got != 8 {
		t.Errorf("sink got %d requests, want 8", got)
	}
	// Nothing more, however long we wait.
	clock.Set(clock.Now().Add(30 * 24 * time.Hour))
	ts.idle()
	if got := len(s.requests()); got != 8 {
		t.Errorf("sink got %d requests after the schedule ended, want 8", got)
	}
	var d object
	ts.must(200, "GET", ep.path+"/deliveries/"+get()["id"].(string), acme.key, nil, &d)
	attempts := d["attempts"].([]any)
	if len(attempts) != 8 {
		t.Fatalf("got %d attempts, want 8", len(attempts))
	}
	for i, a := range attempts {
		if a.(map[string]any)["number"] != float64(i+1) || a.(map[string]any)["response_status"] != 503.0 {
			t.Errorf("attempt %d: %v", i+1, a)
		}
	}
}

// TestJitterBounds checks the schedule's extremes: the jitter's source at
// its lowest and highest gives 90 % and 110 % of each wait.
func TestJitterBounds(t *testing.T) {
	p := webhooks.DefaultRetryPolicy()
	for i, w := range webhooks.DefaultRetryWaits {
		lo, _ := p.Wait(i+1, 0)
		hi, _ := p.Wait(i+1, 0.999999999)
		if lo != time.Duration(float64(w)*0.9) || hi < time.Duration(float64(w)*1.0999) || hi > time.Duration(float64(w)*1.1) {
			t.Errorf("wait %d: got [%s, %s], want [%s, %s]", i+1, lo, hi, time.Duration(float64(w)*0.9), time.Duration(float64(w)*1.1))
		}
	}
	if _, ok := p.Wait(8, 0.5); ok {
		t.Error("a wait after the 8th attempt")
	}
	var total time.Duration
	for _, w := range webhooks.DefaultRetryWaits {
		total += w
	}
	// "4 days 14 hours" (and 36 minutes); "5 days 2 hours at most".
	if want := 4*24*time.Hour + 14*time.Hour + 36*time.Minute; total != want {
		t.Errorf("waits add up to %s, want %s", total, want)
	}
	if most := time.Duration(float64(total) * 1.1); most > 5*24*time.Hour+2*time.Hour {
		t.Errorf("waits with jitter add up to %s, over 5 days 2 hours", most)
	}
}
