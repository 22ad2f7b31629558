package e2e

import (
	"maps"
	"slices"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/service"
)

// This file is recovery (SPEC section 6) and what disabling and deleting an
// endpoint do to its deliveries (SPEC section 5), through HTTP.

// TestRecover: recover {since, until?} retries (account endpoint) or
// replays (company endpoint) every failed or failed_permanently delivery
// created in [since, until), once: a second recover finds nothing new.
func TestRecover(t *testing.T) {
	for _, scope := range []string{"company", "account"} {
		t.Run(scope, func(t *testing.T) {
			t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
			clock, opt := stepClock(t0)
			ts := startService(t, "", opt, shortSchedule)
			acme := ts.newAccount("Acme", "", "B12345674")
			s := newSwitchSink(t)
			s.down.Store(true)
			parent := "/v1/companies/" + acme.companyID
			if scope == "account" {
				parent = "/v1/accounts/" + acme.accountID
			}
			ep := ts.newEndpoint(parent, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
			var events []string
			// Events at t0, t0+10m, …, t0+50m; the one at t0+20m is
			// delivered (the receiver is up then).
			for i := range 6 {
				clock.Set(t0.Add(time.Duration(i) * 10 * time.Minute))
				ts.settle(clock, ep.id) // earlier events' retries, while down
				s.down.Store(i != 2)
				events = append(events, ts.registerEvent(eventIn(acme.companyID, "invoice.sent"))["id"].(string))
				ts.settle(clock, ep.id)
				s.down.Store(true)
			}
			// Every failed one is pending, retried after 1 and 5 min; walk
			// the clock through the schedule with the receiver down: they
			// end failed_permanently.
			s.down.Store(true)
			for range 3 {
				ts.advance(clock, 10*time.Minute)
				ts.settle(clock, ep.id)
			}
			if n := len(ts.storeDeliveries(ep.id, "failed_permanently")); n != 5 {
				t.Fatalf("got %d failed_permanently deliveries, want 5", n)
			}
			s.down.Store(false)

			// [t0+10m, t0+40m): events 1 and 3 (2 was delivered).
			var rec object
			ts.must(200, "POST", ep.path+"/recover", acme.key, object{"since": t0.Add(10 * time.Minute).Unix(), "until": t0.Add(40 * time.Minute).Unix()}, &rec)
			if rec["object"] != "recovery" || rec["count"] != 2.0 {
				t.Errorf("recover [10m, 40m): got %v, want {object: recovery, count: 2}", rec)
			}
			ts.settle(clock, ep.id)
			want := map[string]int{events[1]: 1, events[2]: 1, events[3]: 1}
			if got := s.delivered(); !maps.Equal(got, want) {
				t.Errorf("delivered per event: got %v, want %v", got, want)
			}
			// Again over everything: the rest (0, 4, 5), not 1 and 3 again.
			ts.must(200, "POST", ep.path+"/recover", acme.key, object{"since": t0.Unix()}, &rec)
			if rec["count"] != 3.0 {
				t.Errorf("recover since t0: got %v, want count 3", rec)
			}
			ts.settle(clock, ep.id)
			want = map[string]int{}
			for _, id := range events {
				want[id] = 1
			}
			if got := s.delivered(); !maps.Equal(got, want) {
				t.Errorf("delivered per event: got %v, want %v", got, want)
			}
			ts.must(200, "POST", ep.path+"/recover", acme.key, object{"since": t0.Unix()}, &rec)
			if rec["count"] != 0.0 {
				t.Errorf("third recover: got %v, want count 0", rec)
			}

			ds := ts.deliveries(ep, acme.key)
			if scope == "account" {
				// Retries: the same 6 deliveries, all delivered now, the
				// last attempt manual.
				if len(ds) != 6 {
					t.Errorf("got %d deliveries, want 6 (retries re-arm)", len(ds))
				}
				for _, d := range ds {
					as := attemptsOf(ts.delivery(ep, acme.key, d["id"].(string)))
					if d["status"] != "delivered" || d["replay_of"] != nil || (d["event_id"] != events[2] && as[len(as)-1]["manual"] != true) {
						t.Errorf("delivery %v: want delivered by a manual attempt", d)
					}
				}
			} else {
				// Replays: 6 originals and 5 replays.
				replays := 0
				for _, d := range ds {
					if d["replay_of"] != nil {
						replays++
						if d["status"] != "delivered" {
							t.Errorf("replay %v: want delivered", d)
						}
					}
				}
				if len(ds) != 11 || replays != 5 {
					t.Errorf("got %d deliveries with %d replays, want 11 with 5", len(ds), replays)
				}
			}
			// Bad requests.
			ts.wantError(400, "invalid_request", "POST", ep.path+"/recover", acme.key, object{})
			ts.wantError(400, "invalid_request", "POST", ep.path+"/recover", acme.key, object{"since": t0.Unix(), "until": t0.Unix()})
			ts.wantError(400, "invalid_request", "POST", ep.path+"/recover", acme.key, object{"since": "yesterday"})
			ts.wantError(400, "unknown_field", "POST", ep.path+"/recover", acme.key, object{"since": t0.Unix(), "status": "failed"})
			ts.wantError(400, "invalid_json", "POST", ep.path+"/recover", acme.key, "{")
			var audit listPage
			ts.must(200, "GET", "/v1/accounts/"+acme.accountID+"/audit_log", acme.key, nil, &audit)
			recovered := 0
			for _, e := range audit.Data {
				if e["action"] == "webhook_endpoint.recovered" && e["outcome"] == "succeeded" {
					recovered++
				}
			}
			if recovered != 3 {
				t.Errorf("audit log: %d webhook_endpoint.recovered entries, want 3", recovered)
			}
		})
	}
}

// TestDisabledEndpoint: disabling ends the pending deliveries failed
// (endpoint_disabled); while disabled, each admitted event still gets a
// delivery, created failed with no attempt, and nothing reaches the
// receiver; once enabled, recover sends what it missed, once each.
func TestDisabledEndpoint(t *testing.T) {
	for _, scope := range []string{"company", "account"} {
		t.Run(scope, func(t *testing.T) {
			t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
			clock, opt := stepClock(t0)
			ts := startService(t, "", opt)
			acme := ts.newAccount("Acme", "", "B12345674")
			s := newSwitchSink(t)
			parent := "/v1/companies/" + acme.companyID
			if scope == "account" {
				parent = "/v1/accounts/" + acme.accountID
			}
			ep := ts.newEndpoint(parent, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
			delivered := ts.registerEvent(eventIn(acme.companyID, "invoice.created"))["id"].(string)
			ts.settle(clock, ep.id)

			// The receiver goes down: two deliveries pending.
			s.down.Store(true)
			var missed []string
			for range 2 {
				ts.advance(clock, time.Minute)
				missed = append(missed, ts.registerEvent(eventIn(acme.companyID, "invoice.sent"))["id"].(string))
				ts.settle(clock, ep.id)
			}
			if n := len(ts.storeDeliveries(ep.id, "pending")); n != 2 {
				t.Fatalf("got %d pending deliveries, want 2", n)
			}
			arrived := len(s.requests())
			var patched object
			ts.must(200, "PATCH", ep.path, acme.key, object{"status": "disabled"}, &patched)
			if patched["status"] != "disabled" {
				t.Errorf("PATCH status disabled: got %v", patched)
			}
			for _, d := range ts.deliveries(ep, acme.key) {
				if d["event_id"] == delivered {
					continue
				}
				if d["status"] != "failed" || d["reason"] != "endpoint_disabled" || d["next_attempt_at"] != nil || d["attempt_count"] == 0.0 || d["last_response_status"] != 503.0 {
					t.Errorf("pending delivery after disabling: got %v, want failed endpoint_disabled after its 503s", d)
				}
			}
			// Events keep coming while it is off; other types are not
			// admitted and get nothing.
			for range 3 {
				ts.advance(clock, time.Hour)
				missed = append(missed, ts.registerEvent(eventIn(acme.companyID, "invoice.paid"))["id"].(string))
			}
			ts.registerEvent(eventIn(acme.companyID, "quote.sent"))
			ts.advance(clock, 10*24*time.Hour)
			ts.idle()
			if n := len(s.requests()); n != arrived {
				t.Errorf("the receiver got %d requests while the endpoint was disabled, want none", n-arrived)
			}
			ds := ts.deliveries(ep, acme.key)
			if len(ds) != 6 {
				t.Fatalf("got %d deliveries, want 6 (1 delivered, 2 ended, 3 created failed)", len(ds))
			}
			for _, d := range ds[:3] {
				if d["status"] != "failed" || d["reason"] != "endpoint_disabled" || d["attempt_count"] != 0.0 || d["next_attempt_at"] != nil {
					t.Errorf("delivery made while disabled: got %v, want failed endpoint_disabled with no attempt", d)
				}
				if as := attemptsOf(ts.delivery(ep, acme.key, d["id"].(string))); len(as) != 0 {
					t.Errorf("delivery made while disabled: got attempts %v, want none", as)
				}
			}

			// Back up: enable, and recover since the receiver went down.
			s.down.Store(false)
			ts.must(200, "PATCH", ep.path, acme.key, object{"status": "enabled"}, nil)
			ts.idle()
			if n := len(s.requests()); n != arrived {
				t.Errorf("enabling sent %d requests by itself, want none before recover", n-arrived)
			}
			var rec object
			ts.must(200, "POST", ep.path+"/recover", acme.key, object{"since": t0.Add(time.Minute).Unix()}, &rec)
			if rec["count"] != float64(len(missed)) {
				t.Errorf("recover: got %v, want count %d", rec, len(missed))
			}
			ts.settle(clock, ep.id)
			want := map[string]int{delivered: 1}
			for _, id := range missed {
				want[id] = 1
			}
			if got := s.delivered(); !maps.Equal(got, want) {
				t.Errorf("delivered per event: got %v, want %v", got, want)
			}
			ts.must(200, "POST", ep.path+"/recover", acme.key, object{"since": t0.Unix()}, &rec)
			if rec["count"] != 0.0 {
				t.Errorf("second recover: got %v, want count 0", rec)
			}
			var audit listPage
			ts.must(200, "GET", "/v1/accounts/"+acme.accountID+"/audit_log", acme.key, nil, &audit)
			var actions []string
			for _, e := range audit.Data {
				actions = append(actions, e["action"].(string))
			}
			for _, a := range []string{"webhook_endpoint.disabled", "webhook_endpoint.enabled", "webhook_endpoint.recovered"} {
				if !slices.Contains(actions, a) {
					t.Errorf("audit log %v has no %s", actions, a)
				}
			}
		})
	}
}

// TestDeletedEndpoint: deleting ends the pending deliveries failed
// (endpoint_deleted), keeps their history, routes no more events to it,
// and every route of the endpoint answers 404.
func TestDeletedEndpoint(t *testing.T) {
	clock, opt := stepClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
	ts := startService(t, "", opt)
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSwitchSink(t)
	s.down.Store(true)
	for _, parent := range []string{"/v1/companies/" + acme.companyID, "/v1/accounts/" + acme.accountID} {
		ep := ts.newEndpoint(parent, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
		ts.registerEvent(eventIn(acme.companyID, "invoice.sent"))
		ts.registerEvent(eventIn(acme.companyID, "invoice.paid"))
		ts.settle(clock, ep.id)
		d := ts.deliveries(ep, acme.key)[0]["id"].(string)
		arrived := len(s.requests())

		ts.must(204, "DELETE", ep.path, acme.key, nil, nil)
		for _, sd := range ts.storeDeliveries(ep.id, "") {
			if sd.Status != webhooks.DeliveryFailed || sd.Reason != webhooks.ReasonEndpointDeleted || !sd.NextAttemptAt.IsZero() {
				t.Errorf("%s: delivery %s after deleting its endpoint: %s %s, want failed endpoint_deleted", parent, sd.ID, sd.Status, sd.Reason)
			}
		}
		ts.registerEvent(eventIn(acme.companyID, "invoice.sent"))
		ts.advance(clock, 24*time.Hour)
		ts.idle()
		if n := len(ts.storeDeliveries(ep.id, "")); n != 2 {
			t.Errorf("%s: %d deliveries, want 2: a deleted endpoint gets no new ones", parent, n)
		}
		if n := len(s.requests()); n != arrived {
			t.Errorf("%s: the receiver got %d requests after the delete, want none", parent, n-arrived)
		}
		action := "replay"
		if parent[4:12] == "accounts" {
			action = "retry"
		}
		for _, r := range []struct{ method, path string }{
			{"GET", ep.path}, {"PATCH", ep.path}, {"DELETE", ep.path},
			{"GET", ep.path + "/secret"}, {"POST", ep.path + "/rotate_secret"},
			{"POST", ep.path + "/test"}, {"POST", ep.path + "/recover"},
			{"GET", ep.path + "/deliveries"}, {"GET", ep.path + "/deliveries/" + d},
			{"POST", ep.path + "/deliveries/" + d + "/" + action},
		} {
			var body any
			if r.method != "GET" && r.method != "DELETE" {
				body = object{}
			}
			ts.wantError(404, "not_found", r.method, r.path, acme.key, body)
		}
		var l listPage
		ts.must(200, "GET", parent+"/webhook_endpoints", acme.key, nil, &l)
		for _, e := range l.Data {
			if e["id"] == ep.id {
				t.Errorf("%s: the deleted endpoint is still listed", parent)
			}
		}
	}
}

// TestDayOfDowntime: the receiver answers 503 for a day while an event
// comes every half hour, and the clock walks through the retry schedule.
// Then the receiver comes back, and what it missed arrives once per
// event, in two ways:
//
//   - disabled: an hour into the outage the customer disables the endpoint
//     (its pending deliveries end failed, and the day's later events are
//     created failed); after the outage, enable and recover since its
//     start: every missed event arrives, once.
//   - retrying: the endpoint stays enabled with a short schedule (1 min,
//     5 min, 30 min, 2 h: 5 attempts over 2 h 36 min), so the outage's
//     deliveries pile up failed_permanently, the latest still pending.
//     Recover since the start sends the failed ones; the pending ones
//     arrive on their schedule; none arrives twice.
func TestDayOfDowntime(t *testing.T) {
	for _, mode := range []string{"disabled", "retrying"} {
		t.Run(mode, func(t *testing.T) {
			start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
			clock, opt := stepClock(start)
			opts := []options{opt}
			if mode == "retrying" {
				opts = append(opts, func(c *service.Config) {
					c.Policy = webhooks.RetryPolicy{Waits: []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}, Jitter: 0.1}
				})
			}
			ts := startService(t, "", opts...)
			acme := ts.newAccount("Acme", "", "B12345674")
			s := newSwitchSink(t)
			ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
			before := ts.registerEvent(eventIn(acme.companyID, "invoice.created"))["id"].(string)
			ts.settle(clock, ep.id)

			outage := start.Add(time.Hour)
			back := outage.Add(24 * time.Hour)
			s.down.Store(true)
			var events []string
			next := outage
			disabled := false
			// Walk the clock to each event's time and each due attempt,
			// whichever comes first, until the receiver is back.
			for {
				due := ts.nextDue(ep.id)
				at := next
				if !due.IsZero() && due.Before(at) {
					at = due
				}
				if !at.Before(back) {
					break
				}
				clock.Set(at)
				if mode == "disabled" && !disabled && !at.Before(outage.Add(time.Hour)) {
					ts.must(200, "PATCH", ep.path, acme.key, object{"status": "disabled"}, nil)
					disabled = true
				}
				if at.Equal(next) {
					events = append(events, ts.registerEvent(eventIn(acme.companyID, "invoice.sent"))["id"].(string))
					next = next.Add(30 * time.Minute)
				}
				ts.settle(clock, ep.id)
			}
			if len(events) != 48 {
				t.Fatalf("registered %d events during the outage, want 48", len(events))
			}
			counts := map[string]int{}
			for _, d := range ts.storeDeliveries(ep.id, "") {
				counts[d.Status]++
			}
			t.Logf("%s: at the end of the outage: %v; the receiver got %d requests", mode, counts, len(s.requests()))
			if got := s.delivered(); !maps.Equal(got, map[string]int{before: 1}) {
				t.Fatalf("delivered during the outage: got %v, want only the event before it", got)
			}

			clock.Set(back)
			s.down.Store(false)
			if mode == "disabled" {
				if counts["failed"] != 48 {
					t.Errorf("at the end of the outage: %v, want 48 failed", counts)
				}
				ts.must(200, "PATCH", ep.path, acme.key, object{"status": "enabled"}, nil)
			} else if counts["failed_permanently"] == 0 || counts["pending"] == 0 {
				t.Errorf("at the end of the outage: %v, want both failed_permanently and pending", counts)
			}
			var rec object
			ts.must(200, "POST", ep.path+"/recover", acme.key, object{"since": outage.Unix()}, &rec)
			wantCount := counts["failed"] + counts["failed_permanently"]
			if rec["count"] != float64(wantCount) {
				t.Errorf("recover: got %v, want count %d", rec, wantCount)
			}
			ts.settle(clock, ep.id)
			// Then let the schedule run out (and a second recover find
			// nothing).
			for range 10 {
				ts.advance(clock, 12*time.Hour)
				ts.settle(clock, ep.id)
			}
			ts.must(200, "POST", ep.path+"/recover", acme.key, object{"since": outage.Unix()}, &rec)
			if rec["count"] != 0.0 {
				t.Errorf("second recover: got %v, want count 0", rec)
			}
			ts.settle(clock, ep.id)
			want := map[string]int{before: 1}
			for _, id := range events {
				want[id] = 1
			}
			got := s.delivered()
			for id, n := range got {
				if want[id] != n {
					t.Errorf("event %s arrived %d times, want %d", id, n, want[id])
				}
			}
			for id := range want {
				if got[id] == 0 {
					t.Errorf("event %s never arrived", id)
				}
			}
			// Reconciliation: the delivered deliveries name each event.
			seen := map[string]bool{}
			for _, d := range ts.storeDeliveries(ep.id, "delivered") {
				seen[d.EventID] = true
			}
			if len(seen) != len(want) {
				t.Errorf("the history shows %d events delivered, want %d", len(seen), len(want))
			}
		})
	}
}

// nextDue returns when the endpoint's next attempt is due (zero: none).
func (ts *testService) nextDue(endpointID string) time.Time {
	var next time.Time
	for _, d := range ts.storeDeliveries(endpointID, "pending") {
		if next.IsZero() || d.NextAttemptAt.Before(next) {
			next = d.NextAttemptAt
		}
	}
	return next
}

// shortSchedule retries after 1 and 5 minutes: 3 attempts in all.
func shortSchedule(c *service.Config) {
	c.Policy = webhooks.RetryPolicy{Waits: []time.Duration{time.Minute, 5 * time.Minute}}
}
