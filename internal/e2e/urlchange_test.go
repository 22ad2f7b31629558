package e2e

import (
	"net/http"
	"testing"
	"time"
)

// TestEndpoint_URLChange: what a customer who moves an endpoint to a new
// URL (PATCH url) gets. A delivery still being retried makes its next
// attempt at the new URL, as the same delivery (same delivery id, same
// body, the attempt count going on); what was delivered, or failed for
// good, before the change is not sent again by itself, and a recover
// sends the failed one, and only it, to the new URL.
func TestEndpoint_URLChange(t *testing.T) {
	clock, opt := stepClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
	ts := startService(t, "", opt)
	acme := ts.newAccount("Acme", "", "B12345674")
	old, moved := newSink(t), newSink(t)
	// The old URL takes the first event, fails the second for now (500,
	// retried) and the third for good (422; a 410 would disable it).
	old.setRespond(func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(map[int]int{1: 200, 2: 500, 3: 422}[n])
	})
	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": old.URL + "/hooks", "enabled_events": []string{"invoice.*"}})
	var events []string
	for _, typ := range []string{"invoice.sent", "invoice.paid", "invoice.voided"} {
		events = append(events, ts.registerEvent(eventIn(acme.companyID, typ))["id"].(string))
		old.waitRequests(t, len(events), 10*time.Second)
		ts.settle(clock, ep.id)
	}
	byEvent := func() map[string]object {
		out := map[string]object{}
		for _, d := range ts.deliveries(ep, acme.key) {
			out[d["event_id"].(string)] = d
		}
		return out
	}
	before := byEvent()
	for i, want := range []string{"delivered", "pending", "failed_permanently"} {
		if got := before[events[i]]["status"]; got != want {
			t.Fatalf("event %d before the change: got %v, want %s", i, got, want)
		}
	}

	ts.must(200, "PATCH", ep.path, acme.key, object{"url": moved.URL + "/new"}, nil)
	ts.advance(clock, time.Minute)
	ts.settle(clock, ep.id)
	moved.waitRequests(t, 1, 10*time.Second)
	ts.idle()
	got := moved.requests()
	if len(got) != 1 || got[0].header.Get("Factuarea-Event-Id") != events[1] {
		t.Fatalf("the new URL got %d requests (%v), want one: the retry of event %s", len(got), got, events[1])
	}
	if got[0].header.Get("Factuarea-Delivery-Id") != before[events[1]]["id"] {
		t.Errorf("the retry at the new URL: delivery id %s, want the same delivery %s", got[0].header.Get("Factuarea-Delivery-Id"), before[events[1]]["id"])
	}
	oldReqs := old.requests()
	if len(oldReqs) != 3 {
		t.Errorf("the old URL got %d requests, want the 3 before the change and none after", len(oldReqs))
	}
	if string(got[0].body) != string(oldReqs[1].body) {
		t.Errorf("the retry's body changed with the URL:\n%s\nwant\n%s", got[0].body, oldReqs[1].body)
	}
	after := byEvent()
	if d := after[events[1]]; d["status"] != "delivered" || d["attempt_count"] != 2.0 {
		t.Errorf("the retried delivery: got %v, want delivered on its second attempt", d)
	}
	if after[events[0]]["status"] != "delivered" || after[events[2]]["status"] != "failed_permanently" {
		t.Errorf("the other deliveries changed with the URL: %v, %v", after[events[0]], after[events[2]])
	}

	// Recover sends the failed one again, to the new URL; the delivered
	// one is not sent again.
	var rec object
	ts.must(200, "POST", ep.path+"/recover", acme.key, object{"since": 0}, &rec)
	if rec["count"] != 1.0 {
		t.Errorf("recover: got %v, want 1 delivery sent again", rec)
	}
	ts.settle(clock, ep.id)
	moved.waitRequests(t, 2, 10*time.Second)
	ts.idle()
	if got := moved.requests(); len(got) != 2 || got[1].header.Get("Factuarea-Event-Id") != events[2] {
		t.Errorf("after recover the new URL got %d requests, want 2: the second a replay of event %s", len(got), events[2])
	}
	if len(old.requests()) != 3 {
		t.Errorf("after recover the old URL got %d requests, want still 3", len(old.requests()))
	}
}
