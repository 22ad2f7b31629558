package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
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
