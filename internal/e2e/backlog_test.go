package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/service"
)

// quickChecks runs the backlog and recovery services every 50 ms of wall
// time, on the fixture's fake clock.
func quickChecks(c *service.Config) {
	c.BacklogInterval, c.RecoveryInterval = 50*time.Millisecond, 50*time.Millisecond
}

// opEventsNow returns the operational events the platform endpoint has
// received, without waiting for the engine to be idle (a test that holds
// a receiver cannot).
func (f *healthFixture) opEventsNow() []object {
	f.t.Helper()
	var out []object
	for _, r := range f.ops.requests() {
		var ev object
		if err := json.Unmarshal(r.body, &ev); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// TestHealth_Backlogged: an endpoint whose cap holds its deliveries back
// (one at a time, the receiver slow) has a backlog that the service
// announces once its oldest due delivery has waited longer than
// WEBHOOKS_BACKLOG_ALERT on the service's clock (webhook_endpoint.
// backlogged, once, with oldest_due_at and due_count), that the gauge
// shows, and that clears (webhook_endpoint.backlog_cleared) once caught
// up. The healthy endpoint beside it gets no backlog event.
func TestHealth_Backlogged(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newHealthFixture(t, append(opts, quickChecks, func(c *service.Config) {
				// One attempt at a time, whose claim outlasts the fake
				// clock's jumps.
				c.PerEndpoint, c.AttemptTimeout, c.Lease = 1, 10*time.Second, time.Hour
			})...)
			f.status.Store(200) // the fixture's endpoint is healthy
			release := make(chan struct{})
			slow := newSink(t)
			slow.setRespond(func(_ int, w http.ResponseWriter, _ *http.Request) {
				<-release
				w.WriteHeader(http.StatusOK)
			})
			released := false
			defer func() {
				if !released {
					close(release)
				}
			}()
			busy := f.ts.newEndpoint("/v1/companies/"+f.acme.companyID, f.acme.key, object{"url": slow.URL, "enabled_events": []string{"invoice.*"}})
			registered := f.clock.Now()
			for range 4 {
				f.ts.registerEvent(object{"type": "invoice.sent", "company_id": f.acme.companyID, "data": object{"object": invoice}})
			}
			f.ts.waitFor("the first attempt to the busy endpoint", 5*time.Second, func() bool { return len(slow.requests()) == 1 })

			// Under the alert: nothing. Over it: one backlogged event.
			f.clock.Set(registered.Add(4 * time.Minute))
			time.Sleep(300 * time.Millisecond) // a few checks
			if evs := ofType(f.opEventsNow(), webhooks.EventEndpointBacklogged); len(evs) != 0 {
				t.Fatalf("backlogged after 4 min: %v", evs)
			}
			f.clock.Set(registered.Add(6 * time.Minute))
			f.ts.waitFor("webhook_endpoint.backlogged", 10*time.Second, func() bool {
				return len(ofType(f.opEventsNow(), webhooks.EventEndpointBacklogged)) > 0
			})
			time.Sleep(300 * time.Millisecond) // more checks: still one
			backlogged := ofType(f.opEventsNow(), webhooks.EventEndpointBacklogged)
			if len(backlogged) != 1 {
				t.Fatalf("backlogged events: %d, want 1", len(backlogged))
			}
			o := opObject(backlogged[0])
			if o["id"] != busy.id || o["due_count"] != 3.0 || o["oldest_due_at"] != float64(registered.Unix()) {
				t.Errorf("backlogged: %v, want the busy endpoint, 3 due since %d", o, registered.Unix())
			}
			if metrics := f.ts.metrics(); !strings.Contains(metrics, "webhooks_oldest_due_seconds 360") {
				t.Errorf("the gauge: want webhooks_oldest_due_seconds 360 in\n%s", grepLines(metrics, "webhooks_oldest_due"))
			}

			// Caught up: cleared, with nothing due.
			close(release)
			released = true
			f.ts.waitFor("the busy endpoint's four attempts", 10*time.Second, func() bool { return len(slow.requests()) >= 4 })
			if n := len(slow.requests()); n != 4 {
				t.Errorf("the busy endpoint got %d requests, want 4", n)
			}
			f.clock.Set(f.clock.Now().Add(time.Second))
			f.ts.waitFor("webhook_endpoint.backlog_cleared", 10*time.Second, func() bool {
				return len(ofType(f.opEventsNow(), webhooks.EventBacklogCleared)) > 0
			})
			cleared := opObject(ofType(f.opEventsNow(), webhooks.EventBacklogCleared)[0])
			if oldest, ok := cleared["oldest_due_at"]; cleared["id"] != busy.id || cleared["due_count"] != 0.0 || !ok || oldest != nil {
				t.Errorf("backlog_cleared: %v, want the busy endpoint, nothing due (oldest_due_at null)", cleared)
			}
			for _, typ := range []string{webhooks.EventEndpointBacklogged, webhooks.EventBacklogCleared} {
				for _, ev := range ofType(f.opEvents(), typ) {
					if opObject(ev)["id"] == f.ep.id {
						t.Errorf("%s about the healthy endpoint", typ)
					}
				}
			}
		})
	}
}

// TestHealth_AutoRecover: an endpoint with auto_recover that the service
// disabled for failing is probed with a ping an hour after the disable;
// at the first 2xx it is enabled again by the system (reason recovered,
// in the audit log) and every event it missed arrives.
func TestHealth_AutoRecover(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newHealthFixture(t, append(opts, quickChecks, func(c *service.Config) { c.DisableAfter = 48 * time.Hour })...)
			var ep object
			f.ts.must(200, "PATCH", f.ep.path, f.acme.key, object{"auto_recover": true}, &ep)
			if ep["auto_recover"] != true {
				t.Fatalf("PATCH auto_recover: %v", ep)
			}
			start := f.clock.Now()
			first := f.event()
			for f.clock.Now().Sub(start) < 50*time.Hour {
				f.clock.Set(f.clock.Now().Add(time.Hour))
				f.ts.settle(f.clock, f.ep.id)
			}
			second := f.event()
			f.ts.must(200, "GET", f.ep.path, f.acme.key, nil, &ep)
			if ep["status"] != "disabled" || ep["disabled_reason"] != "failing" {
				t.Fatalf("after failing for 50 h: %v", ep)
			}
			disabled := f.clock.Now()
			third := str(f.ts.registerEvent(object{"type": "invoice.sent", "company_id": f.acme.companyID, "data": object{"object": invoice}})["id"])

			// Half an hour on: no probe yet. An hour on, the receiver still
			// down: one probe, and it stays disabled.
			f.clock.Set(disabled.Add(30 * time.Minute))
			time.Sleep(300 * time.Millisecond)
			if n := len(pings(f)); n != 0 {
				t.Fatalf("%d probes half an hour after the disable, want none", n)
			}
			f.clock.Set(disabled.Add(time.Hour))
			f.ts.waitFor("the first probe's attempt", 10*time.Second, func() bool { return attempted(pings(f)) == 1 })
			f.ts.must(200, "GET", f.ep.path, f.acme.key, nil, &ep)
			if ep["status"] != "disabled" {
				t.Fatalf("after a failed probe: %v", ep)
			}
			// The receiver is back; the next probe, an hour later, gets a
			// 2xx.
			f.status.Store(200)
			f.clock.Set(disabled.Add(2 * time.Hour))
			f.ts.waitFor("the endpoint enabled again", 10*time.Second, func() bool {
				f.ts.must(200, "GET", f.ep.path, f.acme.key, nil, &ep)
				return ep["status"] == "enabled"
			})
			if ep["disabled_reason"] != nil || ep["disabled_at"] != nil {
				t.Errorf("enabled again: %v", ep)
			}
			f.ts.settle(f.clock, f.ep.id)
			delivered := map[string]bool{}
			for _, d := range f.ts.deliveries(f.ep, f.acme.key) {
				if d["status"] == "delivered" {
					delivered[str(d["event_id"])] = true
				}
			}
			for _, id := range []string{first, second, third} {
				if !delivered[id] {
					t.Errorf("event %s not delivered after the recovery (delivered: %v)", id, delivered)
				}
			}
			enabled := ofType(f.opEvents(), webhooks.EventEndpointEnabled)
			if len(enabled) != 1 {
				t.Fatalf("enabled events: %d, want 1", len(enabled))
			}
			o := opObject(enabled[0])
			if actor, _ := o["actor"].(map[string]any); o["reason"] != "recovered" || actor["type"] != "system" {
				t.Errorf("webhook_endpoint.enabled: %v, want reason recovered, actor system", o)
			}
			var audit object
			f.ts.must(200, "GET", "/v1/accounts/"+f.acme.accountID+"/audit_log?limit=100", f.acme.key, nil, &audit)
			actions := map[string]bool{}
			for _, e := range audit["data"].([]any) {
				e := e.(map[string]any)
				if e["actor"].(map[string]any)["type"] == "system" {
					actions[str(e["action"])] = true
				}
			}
			if !actions["webhook_endpoint.enabled"] || !actions["webhook_endpoint.recovered"] {
				t.Errorf("the system's audit entries: %v, want enabled and recovered", actions)
			}
		})
	}
}

// pings returns the endpoint's ping deliveries (the probes).
func pings(f *healthFixture) []*webhooks.Delivery {
	var out []*webhooks.Delivery
	for _, d := range f.ts.storeDeliveries(f.ep.id, "") {
		if d.EventType == webhooks.PingEventType {
			out = append(out, d)
		}
	}
	return out
}

// attempted counts the deliveries that have had an attempt.
func attempted(ds []*webhooks.Delivery) int {
	n := 0
	for _, d := range ds {
		if d.AttemptCount > 0 {
			n++
		}
	}
	return n
}

// metrics returns the service's /metrics page.
func (ts *testService) metrics() string {
	ts.t.Helper()
	resp, err := http.Get(ts.url + "/metrics")
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
