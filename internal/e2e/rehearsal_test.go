package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/service"
)

// TestRehearsal: an outage rehearsal (SPEC 17) to a receiver that stays
// down makes the schedule's 8 attempts within ten minutes (the waits all
// divided by one factor), each recorded as usual, ends failed_permanently
// and sends the operational events a real outage would (failing at the
// 4th, exhausted at the end); with the receiver back, recover sends it and
// recovered follows. Test events are in no log.
func TestRehearsal(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newHealthFixture(t, opts...)
			start := f.clock.Now()
			var d object
			f.ts.must(201, "POST", f.ep.path+"/rehearsals", f.acme.key, nil, &d)
			if d["rehearsal"] != true || d["event_type"] != "ping" {
				t.Fatalf("rehearsal delivery: %v", d)
			}
			path := f.ep.path + "/deliveries/" + str(d["id"])
			var waits []time.Duration
			for attempt := 1; attempt <= 8; attempt++ {
				// The rehearsal's own: the platform endpoint's deliveries
				// (the operational events) are attempts too.
				f.ts.waitFor(fmt.Sprintf("attempt %d", attempt), 5*time.Second, func() bool {
					return f.ts.storeDelivery(str(d["id"])).AttemptCount >= attempt
				})
				f.ts.idle()
				f.ts.must(200, "GET", path, f.acme.key, nil, &d)
				if d["attempt_count"] != float64(attempt) {
					t.Fatalf("after attempt %d: %v", attempt, d)
				}
				if attempt == 8 {
					break
				}
				next := time.UnixMilli(f.ts.storeDelivery(str(d["id"])).NextAttemptAt.UnixMilli())
				waits = append(waits, next.Sub(f.clock.Now()))
				f.clock.Set(next)
				f.ts.svc.Engine.Wake()
			}
			if d["status"] != "failed_permanently" || d["reason"] != "schedule_exhausted" {
				t.Errorf("after 8 attempts: %v", d)
			}
			if took := f.clock.Now().Sub(start); took > webhooks.RehearsalLength || took < webhooks.RehearsalLength/3 {
				t.Errorf("the rehearsal took %s, want about %s", took, webhooks.RehearsalLength)
			}
			// The waits keep the schedule's shape: each the default's,
			// divided by one factor (within the jitter).
			factor := float64(webhooks.DefaultRetryWaits[len(waits)-1]) / float64(waits[len(waits)-1])
			for i, w := range waits {
				want := time.Duration(float64(webhooks.DefaultRetryWaits[i]) / factor)
				if w < time.Duration(float64(want)*0.75) || w > time.Duration(float64(want)*1.25)+time.Second {
					t.Errorf("wait %d: %s, want about %s", i+1, w, want)
				}
			}
			ops := f.opEvents()
			if n := len(ofType(ops, webhooks.EventEndpointFailing)); n != 1 {
				t.Errorf("failing events: %d, want 1", n)
			}
			ex := ofType(ops, webhooks.EventDeliveryExhausted)
			if len(ex) != 1 || opObject(ex[0])["delivery"].(map[string]any)["id"] != d["id"] {
				t.Errorf("exhausted events: %v, want one for the rehearsal", ex)
			}
			// Receiver back: recover sends it again (a company endpoint
			// replays); the endpoint recovered.
			f.status.Store(200)
			f.clock.Set(f.clock.Now().Add(time.Second))
			var rec object
			f.ts.must(200, "POST", f.ep.path+"/recover", f.acme.key, object{"since": start.Unix()}, &rec)
			if rec["count"] != 1.0 {
				t.Errorf("recover: %v, want the rehearsal's delivery", rec)
			}
			f.ts.settle(f.clock, f.ep.id)
			replayed := false
			for _, x := range f.ts.deliveries(f.ep, f.acme.key) {
				replayed = replayed || (x["replay_of"] == d["id"] && x["status"] == "delivered")
			}
			if !replayed {
				t.Errorf("after recover: no delivered replay of the rehearsal")
			}
			if n := len(ofType(f.opEvents(), webhooks.EventEndpointRecovered)); n != 1 {
				t.Errorf("recovered events: %d, want 1", n)
			}
			var log object
			f.ts.must(200, "GET", "/v1/companies/"+f.acme.companyID+"/events", f.acme.key, nil, &log)
			if len(log["data"].([]any)) != 0 {
				t.Errorf("the company's log lists the rehearsal: %v", log["data"])
			}
		})
	}
}

// storeDelivery reads a delivery straight from the store, with its times
// to the millisecond (the API shows whole seconds).
func (ts *testService) storeDelivery(id string) *webhooks.Delivery {
	ts.t.Helper()
	d, err := ts.svc.Store.FindDelivery(context.Background(), id)
	if err != nil {
		ts.t.Fatalf("FindDelivery: %v", err)
	}
	return d
}

// TestRehearsal_RetryAfter: a receiver that answers every attempt of a
// rehearsal 503 with Retry-After: 3600 does not stretch it to hours (SPEC
// 17): the Retry-After is divided by the rehearsal's factor, and the 8
// attempts still end failed_permanently within about ten minutes of the
// service's clock, with every wait's jitter at its most. The Retry-After
// still counts, divided: no wait is shorter than an hour divided by the
// factor, which makes the first three waits longer than the schedule's
// (about 5 s instead of 1 to 2.5 s): that is the "about", 10 min 11 s
// here.
func TestRehearsal_RetryAfter(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)}
			most := func() float64 { return 0.999 } // every wait's jitter at its most, +10 %
			ts := startService(t, "", append(opts, func(c *service.Config) { c.Now = clock.Now; c.Random = most; c.DisableAfter = -1 })...)
			acme := ts.newAccount("Acme", "", "B12345674")
			s := newSink(t)
			s.setRespond(func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(http.StatusServiceUnavailable)
			})
			ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
			start := clock.Now()
			var d object
			ts.must(201, "POST", ep.path+"/rehearsals", acme.key, nil, &d)
			id := str(d["id"])
			factor := webhooks.DefaultRetryPolicy().RehearsalFactor()
			floor := time.Hour / time.Duration(factor)
			for attempt := 1; attempt <= 8; attempt++ {
				ts.waitFor(fmt.Sprintf("attempt %d", attempt), 5*time.Second, func() bool { return ts.storeDelivery(id).AttemptCount >= attempt })
				ts.idle()
				stored := ts.storeDelivery(id)
				if attempt == 8 {
					break
				}
				if stored.Status != webhooks.DeliveryPending {
					t.Fatalf("after attempt %d: %s (%s), want pending", attempt, stored.Status, stored.Reason)
				}
				next := time.UnixMilli(stored.NextAttemptAt.UnixMilli())
				if wait := next.Sub(clock.Now()); wait < floor-10*time.Millisecond {
					t.Errorf("after attempt %d: next attempt in %s, want at least Retry-After 1 h divided by %d (%s)", attempt, wait, factor, floor)
				}
				clock.Set(next)
				ts.svc.Engine.Wake()
			}
			ts.must(200, "GET", ep.path+"/deliveries/"+id, acme.key, nil, &d)
			if d["status"] != "failed_permanently" || d["reason"] != "schedule_exhausted" || d["attempt_count"] != 8.0 || d["rehearsal"] != true {
				t.Errorf("after 8 attempts: %v, want failed_permanently, schedule_exhausted, 8 attempts, a rehearsal", d)
			}
			if n := len(d["attempts"].([]any)); n != 8 {
				t.Errorf("attempts recorded: %d, want 8", n)
			}
			took := clock.Now().Sub(start)
			t.Logf("the rehearsal took %s", took)
			if took > webhooks.RehearsalLength+webhooks.RehearsalLength/20 {
				t.Errorf("the rehearsal took %s, want at most about %s", took, webhooks.RehearsalLength)
			}
		})
	}
}

// TestRehearsal_ShortSchedule: with a schedule that fits in ten minutes
// already (the waits are not divided: a factor of 1), a rehearsal's
// delivery still says rehearsal: true, when created, read and listed, and
// every other delivery says false (a plain test event's, an event's).
func TestRehearsal_ShortSchedule(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			policy := webhooks.RetryPolicy{Waits: []time.Duration{time.Second, time.Second, time.Second, time.Second, time.Second, time.Second, time.Second}}
			if f := policy.RehearsalFactor(); f != 1 {
				t.Fatalf("the test's policy: factor %d, want 1 (it fits in ten minutes)", f)
			}
			ts := startService(t, "", append(opts, func(c *service.Config) { c.Policy = policy })...)
			acme := ts.newAccount("Acme", "", "B12345674")
			s := newSink(t)
			ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
			var rehearsal, test object
			ts.must(201, "POST", ep.path+"/rehearsals", acme.key, nil, &rehearsal)
			ts.must(201, "POST", ep.path+"/test", acme.key, nil, &test)
			ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
			if rehearsal["rehearsal"] != true {
				t.Errorf("the rehearsal's delivery as created: rehearsal %v, want true", rehearsal["rehearsal"])
			}
			if test["rehearsal"] != false {
				t.Errorf("the test event's delivery as created: rehearsal %v, want false", test["rehearsal"])
			}
			s.waitRequests(t, 3, 5*time.Second)
			ts.idle()
			var got object
			ts.must(200, "GET", ep.path+"/deliveries/"+str(rehearsal["id"]), acme.key, nil, &got)
			if got["rehearsal"] != true || got["status"] != "delivered" {
				t.Errorf("the rehearsal's delivery, read: %v, want rehearsal true, delivered", got)
			}
			ds := ts.deliveries(ep, acme.key)
			if len(ds) != 3 {
				t.Fatalf("deliveries: %d, want 3", len(ds))
			}
			for _, x := range ds {
				if want := x["id"] == rehearsal["id"]; x["rehearsal"] != want {
					t.Errorf("listed delivery %v (%v): rehearsal %v, want %v", x["id"], x["event_type"], x["rehearsal"], want)
				}
			}
		})
	}
}
