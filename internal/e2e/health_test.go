package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/service"
	"github.com/factuarea/webhooks/signature"
)

// healthFixture is a service on a fake clock with a platform endpoint that
// collects the operational events, and a company endpoint whose receiver
// answers what status says.
type healthFixture struct {
	t        *testing.T
	ts       *testService
	clock    *fakeClock
	acme     fixture
	platform endpoint
	ops      *sink
	ep       endpoint
	status   *atomic.Int32
}

func newHealthFixture(t *testing.T, opts ...options) *healthFixture {
	clock := &fakeClock{now: time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)}
	ts := startService(t, "", append(opts, func(c *service.Config) { c.Now = clock.Now })...)
	f := &healthFixture{t: t, ts: ts, clock: clock, acme: ts.newAccount("Acme", "", "B12345674"), ops: newSink(t)}
	f.platform = ts.newEndpoint("/v1", adminKey, object{"url": f.ops.URL, "enabled_events": []string{"*"}})
	if f.platform.object["scope"] != "platform" {
		t.Fatalf("platform endpoint: scope %v", f.platform.object["scope"])
	}
	var s *sink
	s, f.status = statusSink(t, 500)
	f.ep = ts.newEndpoint("/v1/companies/"+f.acme.companyID, f.acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
	return f
}

// event registers an invoice.sent event and waits for its first attempt
// and what the engine observed of it.
func (f *healthFixture) event() string {
	f.t.Helper()
	ev := f.ts.registerEvent(object{"type": "invoice.sent", "company_id": f.acme.companyID, "data": object{"object": invoice}})
	id := str(ev["id"])
	// Its own delivery's attempt: the platform endpoint's deliveries are
	// attempts too.
	f.ts.waitFor("the event's first attempt", 5*time.Second, func() bool {
		for _, d := range f.ts.storeDeliveries(f.ep.id, "") {
			if d.EventID == id && d.AttemptCount > 0 {
				return true
			}
		}
		return false
	})
	f.ts.idle()
	return id
}

// opEvents returns the operational events the platform endpoint received,
// each checked to be signed with its secret.
func (f *healthFixture) opEvents() []object {
	f.t.Helper()
	f.ts.idle()
	f.ts.settle(f.clock, f.platform.id)
	var out []object
	for _, r := range f.ops.requests() {
		if err := signature.Verify(r.header.Get(signature.HeaderName), r.body, f.clock.Now(), 24*time.Hour*30, f.platform.secret); err != nil {
			f.t.Errorf("operational event not signed with the platform endpoint's secret: %v", err)
		}
		var ev object
		if err := json.Unmarshal(r.body, &ev); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func ofType(evs []object, typ string) []object {
	var out []object
	for _, ev := range evs {
		if ev["type"] == typ {
			out = append(out, ev)
		}
	}
	return out
}

func opObject(ev object) object { return ev["data"].(map[string]any)["object"].(map[string]any) }

// TestHealth_FailingOncePerEpisode: webhook_endpoint.failing fires at the
// 4th failed attempt in a row, whatever the deliveries, once per episode;
// a 2xx ends the episode with webhook_endpoint.recovered, and the next
// episode fires failing again. Each is signed like any delivery and in
// the platform endpoint's history.
func TestHealth_FailingOncePerEpisode(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newHealthFixture(t, opts...)
			for i := 1; i <= 3; i++ {
				f.event()
			}
			if got := ofType(f.opEvents(), webhooks.EventEndpointFailing); len(got) != 0 {
				t.Fatalf("failing after 3 failed attempts: %v", got)
			}
			f.event() // the 4th
			failing := ofType(f.opEvents(), webhooks.EventEndpointFailing)
			if len(failing) != 1 {
				t.Fatalf("after 4 failed attempts: got %d failing events, want 1", len(failing))
			}
			o := opObject(failing[0])
			if o["id"] != f.ep.id || o["account_id"] != f.acme.accountID || o["company_id"] != f.acme.companyID ||
				o["consecutive_failures"] != 4.0 || o["failing_since"] != float64(f.clock.Now().Unix()) {
				t.Errorf("failing object: got %v", o)
			}
			if la, _ := o["last_attempt"].(map[string]any); la == nil || la["response_status"] != 500.0 {
				t.Errorf("failing object's last_attempt: got %v", o["last_attempt"])
			}
			var got object
			f.ts.must(200, "GET", f.ep.path, f.acme.key, nil, &got)
			if got["failing_since"] != float64(f.clock.Now().Unix()) {
				t.Errorf("endpoint failing_since: got %v", got["failing_since"])
			}
			// More failures, and the retries of the first deliveries: no
			// second failing event in this episode.
			f.event()
			f.clock.Set(f.clock.Now().Add(2 * time.Minute))
			f.ts.settle(f.clock, f.ep.id)
			f.ts.idle()
			if n := len(ofType(f.opEvents(), webhooks.EventEndpointFailing)); n != 1 {
				t.Errorf("failing events after more failures: got %d, want 1", n)
			}
			// A 2xx ends it: recovered, once.
			f.status.Store(200)
			f.event()
			f.event()
			recovered := ofType(f.opEvents(), webhooks.EventEndpointRecovered)
			if len(recovered) != 1 {
				t.Fatalf("recovered events: got %d, want 1", len(recovered))
			}
			if o := opObject(recovered[0]); o["consecutive_failures"].(float64) < 5 {
				t.Errorf("recovered object: got %v, want the streak it ended", o)
			}
			f.ts.must(200, "GET", f.ep.path, f.acme.key, nil, &got)
			if got["failing_since"] != nil {
				t.Errorf("endpoint failing_since after a 2xx: got %v, want null", got["failing_since"])
			}
			// A new episode fires again.
			f.status.Store(503)
			for range 4 {
				f.event()
			}
			if n := len(ofType(f.opEvents(), webhooks.EventEndpointFailing)); n != 2 {
				t.Errorf("failing events after a second episode: got %d, want 2", n)
			}
			// They are in the platform endpoint's history, delivered.
			ds := f.ts.deliveries(f.platform, adminKey)
			if len(ds) != len(f.ops.requests()) {
				t.Errorf("platform endpoint history: %d deliveries, %d received", len(ds), len(f.ops.requests()))
			}
			for _, d := range ds {
				if d["status"] != "delivered" {
					t.Errorf("operational delivery %v: status %v", d["id"], d["status"])
				}
			}
			// They are not in the account's event log.
			var log object
			f.ts.must(200, "GET", "/v1/accounts/"+f.acme.accountID+"/events?limit=100", f.acme.key, nil, &log)
			for _, ev := range log["data"].([]any) {
				if typ := ev.(map[string]any)["type"].(string); webhooks.IsOperationalType(typ) {
					t.Errorf("the account's log lists %s", typ)
				}
			}
		})
	}
}

// TestHealth_Exhausted: a delivery that ends failed_permanently sends
// webhook_delivery.exhausted, naming the delivery.
func TestHealth_Exhausted(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newHealthFixture(t, opts...)
			f.status.Store(422)
			evID := f.event()
			ex := ofType(f.opEvents(), webhooks.EventDeliveryExhausted)
			if len(ex) != 1 {
				t.Fatalf("exhausted events: got %d, want 1", len(ex))
			}
			d, _ := opObject(ex[0])["delivery"].(map[string]any)
			if d == nil || d["event_id"] != evID || d["reason"] != "non_retryable_status" || d["last_response_status"] != 422.0 {
				t.Errorf("exhausted object's delivery: got %v", d)
			}
		})
	}
}

// TestHealth_DisableAfter: once every attempt has failed for the
// disable-after time, the next failure disables the endpoint (reason
// failing, actor system, in the audit log and as an operational event);
// its pending deliveries end failed; events registered while it is off
// get failed deliveries; enabling it again (an enabled event, with who)
// and recovering sends every event.
func TestHealth_DisableAfter(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newHealthFixture(t, append(opts, func(c *service.Config) { c.DisableAfter = 48 * time.Hour })...)
			start := f.clock.Now()
			first := f.event()
			// The first delivery's retries fail, on the fake clock, for 48 h
			// and more; then a second event's first attempt fails, and
			// disables the endpoint, its own retry and the first's pending.
			var ep object
			second := ""
			for f.clock.Now().Sub(start) < 50*time.Hour {
				f.clock.Set(f.clock.Now().Add(time.Hour))
				f.ts.settle(f.clock, f.ep.id)
				f.ts.must(200, "GET", f.ep.path, f.acme.key, nil, &ep)
				if ep["status"] != "enabled" {
					t.Fatalf("disabled after %s: %v", f.clock.Now().Sub(start), ep)
				}
			}
			second = f.event()
			f.ts.must(200, "GET", f.ep.path, f.acme.key, nil, &ep)
			if ep["status"] != "disabled" || ep["disabled_reason"] != "failing" || ep["disabled_at"] != float64(f.clock.Now().Unix()) ||
				ep["failing_since"] != float64(start.Unix()) {
				t.Fatalf("after failing for 50 h: endpoint %v", ep)
			}
			ds := f.ts.deliveries(f.ep, f.acme.key)
			if len(ds) != 2 {
				t.Fatalf("got %d deliveries, want 2", len(ds))
			}
			for _, d := range ds {
				if d["status"] != "failed" || d["reason"] != "endpoint_disabled" {
					t.Errorf("a pending delivery: got %v, want failed endpoint_disabled", d)
				}
			}
			disabled := ofType(f.opEvents(), webhooks.EventEndpointDisabled)
			if len(disabled) != 1 {
				t.Fatalf("disabled events: got %d, want 1", len(disabled))
			}
			o := opObject(disabled[0])
			if actor, _ := o["actor"].(map[string]any); actor == nil || actor["type"] != "system" || o["disabled_reason"] != "failing" {
				t.Errorf("disabled object: got %v", o)
			}
			var audit object
			f.ts.must(200, "GET", "/v1/accounts/"+f.acme.accountID+"/audit_log?limit=100", f.acme.key, nil, &audit)
			found := false
			for _, e := range audit["data"].([]any) {
				e := e.(map[string]any)
				if e["action"] == "webhook_endpoint.disabled" && e["actor"].(map[string]any)["type"] == "system" {
					found = true
				}
			}
			if !found {
				t.Errorf("no audit entry of the system disabling the endpoint")
			}

			// While off, an event gets its (failed) delivery; nothing is sent.
			f.status.Store(200)
			ev := f.ts.registerEvent(object{"type": "invoice.sent", "company_id": f.acme.companyID, "data": object{"object": invoice}})
			f.ts.idle()
			// Enabled again by the customer, then recover: both events arrive.
			f.ts.must(200, "PATCH", f.ep.path, f.acme.key, object{"status": "enabled"}, &ep)
			if ep["disabled_reason"] != nil || ep["disabled_at"] != nil || ep["failing_since"] != nil {
				t.Errorf("enabled endpoint: got %v", ep)
			}
			enabled := ofType(f.opEvents(), webhooks.EventEndpointEnabled)
			if len(enabled) != 1 || opObject(enabled[0])["actor"].(map[string]any)["type"] != "api_key" {
				t.Errorf("enabled events: got %v, want one by the api_key", enabled)
			}
			f.clock.Set(f.clock.Now().Add(time.Second)) // recover's until (now) is exclusive
			var rec object
			f.ts.must(200, "POST", f.ep.path+"/recover", f.acme.key, object{"since": start.Unix()}, &rec)
			if rec["count"] != 3.0 {
				t.Errorf("recover: got %v, want 3", rec)
			}
			f.ts.settle(f.clock, f.ep.id)
			delivered := map[string]bool{}
			for _, d := range f.ts.deliveries(f.ep, f.acme.key) {
				if d["status"] == "delivered" {
					delivered[str(d["event_id"])] = true
				}
			}
			if !delivered[first] || !delivered[second] || !delivered[str(ev["id"])] {
				t.Errorf("after recover: delivered %v, want the three events", delivered)
			}
		})
	}
}

// TestHealth_Gone: a 410 disables the endpoint at once (reason gone).
func TestHealth_Gone(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newHealthFixture(t, append(opts, quickChecks)...)
			f.ts.must(200, "PATCH", f.ep.path, f.acme.key, object{"auto_recover": true}, nil)
			f.status.Store(410)
			f.event()
			var ep object
			f.ts.must(200, "GET", f.ep.path, f.acme.key, nil, &ep)
			if ep["status"] != "disabled" || ep["disabled_reason"] != "gone" {
				t.Fatalf("after a 410: endpoint %v", ep)
			}
			if n := len(ofType(f.opEvents(), webhooks.EventEndpointDisabled)); n != 1 {
				t.Errorf("disabled events: got %d, want 1", n)
			}
			// Asking for automatic recovery changes nothing for a 410: the
			// receiver asked senders to stop. No probe, still disabled.
			f.status.Store(200)
			f.clock.Set(f.clock.Now().Add(3 * time.Hour))
			time.Sleep(300 * time.Millisecond) // a few rounds of the recovery's checks
			f.ts.must(200, "GET", f.ep.path, f.acme.key, nil, &ep)
			if n := len(pings(f)); n != 0 || ep["status"] != "disabled" {
				t.Errorf("gone with auto_recover, 3 h on: %d probes, %v; want none, disabled", n, ep["status"])
			}
			// A customer's PATCH says manual.
			f.ts.must(200, "PATCH", f.ep.path, f.acme.key, object{"status": "enabled"}, nil)
			f.ts.must(200, "PATCH", f.ep.path, f.acme.key, object{"status": "disabled"}, &ep)
			if ep["disabled_reason"] != "manual" {
				t.Errorf("disabled by PATCH: reason %v, want manual", ep["disabled_reason"])
			}
		})
	}
}

// TestHealth_RetryAfter: a 429 or 503 with Retry-After moves the next
// attempt no earlier than it asks (seconds or an HTTP date, capped at a
// day), and 8 attempts stay the limit.
func TestHealth_RetryAfter(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)}
			ts := startService(t, "", append(opts, func(c *service.Config) { c.Now = clock.Now; c.DisableAfter = -1 })...)
			acme := ts.newAccount("Acme", "", "B12345674")
			var n atomic.Int32
			s := newSink(t)
			asks := []func(now time.Time) (int, string){
				func(time.Time) (int, string) { return 503, "3600" },
				func(now time.Time) (int, string) { return 429, now.Add(3 * time.Hour).UTC().Format(http.TimeFormat) },
				func(time.Time) (int, string) { return 503, "99999999999" },
				func(time.Time) (int, string) { return 500, "36000" }, // not a 429 or 503: ignored (the schedule says 2 h)
			}
			s.setRespond(func(i int, w http.ResponseWriter, _ *http.Request) {
				k := int(n.Add(1)) - 1
				status, ra := 503, "60"
				if k < len(asks) {
					status, ra = asks[k](clock.Now())
				}
				w.Header().Set("Retry-After", ra)
				w.WriteHeader(status)
			})
			ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
			ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
			want := []time.Duration{time.Hour, 3 * time.Hour, 24 * time.Hour, 0}
			for attempt := 1; attempt <= 8; attempt++ {
				ts.waitFor(fmt.Sprintf("attempt %d", attempt), 5*time.Second, func() bool { return ts.attempts() >= attempt })
				ts.idle()
				d := ts.deliveries(ep, acme.key)[0]
				if attempt == 8 {
					if d["status"] != "failed_permanently" || d["attempt_count"] != 8.0 {
						t.Fatalf("after 8 attempts: %v", d)
					}
					break
				}
				next := time.Unix(int64(d["next_attempt_at"].(float64)), 0)
				wait := next.Sub(clock.Now())
				if attempt <= len(want) && want[attempt-1] > 0 && (wait < want[attempt-1]-time.Second || wait > want[attempt-1]+time.Second) {
					t.Errorf("after attempt %d (Retry-After): next attempt in %s, want %s", attempt, wait, want[attempt-1])
				}
				if attempt == 4 && wait > 3*time.Hour {
					t.Errorf("after a 500 with Retry-After: next attempt in %s, want the schedule's (2 h)", wait)
				}
				clock.Set(next.Add(time.Second)) // the API shows whole seconds
				ts.svc.Engine.Wake()
			}
			if got := strconv.Itoa(ts.attempts()); got != "8" {
				t.Errorf("attempts: %s, want 8", got)
			}
		})
	}
}
