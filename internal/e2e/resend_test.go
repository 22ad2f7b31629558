package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/service"
	"github.com/factuarea/webhooks/signature"
)

// This file is SPEC section 6's table, row by row, through HTTP: retry on
// an account endpoint, replay on a company endpoint, send test event, and
// every error a resend can answer. Recover is in recover_test.go.

// statusSink is a sink that answers the status it is set to.
func statusSink(t *testing.T, initial int) (*sink, *atomic.Int32) {
	s := newSink(t)
	var status atomic.Int32
	status.Store(int32(initial))
	s.setRespond(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(status.Load())) })
	return s, &status
}

// sameDelivery checks what a resend must keep on the wire (the event id in
// its three places, the type and the body's bytes) and that the signature
// changed and verifies with secret.
func sameDelivery(t *testing.T, first, again received, secret string) {
	t.Helper()
	for _, h := range []string{"Factuarea-Event-Id", "Idempotency-Key", "Factuarea-Event-Type", "Factuarea-Account-Relationship", "Content-Type"} {
		if got, want := again.header.Get(h), first.header.Get(h); got != want {
			t.Errorf("%s: got %q, want %q as on the first attempt", h, got, want)
		}
	}
	if again.header.Get("Idempotency-Key") != again.header.Get("Factuarea-Event-Id") {
		t.Errorf("Idempotency-Key %q, want the event id %q", again.header.Get("Idempotency-Key"), again.header.Get("Factuarea-Event-Id"))
	}
	var body struct {
		ID string `json:"id"`
	}
	json.Unmarshal(again.body, &body)
	if body.ID != again.header.Get("Factuarea-Event-Id") {
		t.Errorf("body id %q, want the Factuarea-Event-Id %q", body.ID, again.header.Get("Factuarea-Event-Id"))
	}
	if !bytes.Equal(again.body, first.body) {
		t.Errorf("body changed:\n got %s\nwant %s", again.body, first.body)
	}
	sig, firstSig := again.header.Get("Factuarea-Signature"), first.header.Get("Factuarea-Signature")
	if sig == firstSig {
		t.Errorf("Factuarea-Signature %q unchanged, want a new timestamp and signature", sig)
	}
	h, err := signature.Parse(sig)
	if err != nil {
		t.Fatalf("Factuarea-Signature %q: %v", sig, err)
	}
	if err := signature.Verify(sig, again.body, time.Unix(h.Timestamp, 0), time.Minute, secret); err != nil {
		t.Errorf("Factuarea-Signature %q does not verify: %v", sig, err)
	}
}

// TestRetry: on an account endpoint, retry re-arms the same delivery for
// one manual attempt now; attempt_count goes on; if the manual attempt
// fails, the delivery ends failed (manual_attempt_failed) with nothing
// scheduled.
func TestRetry(t *testing.T) {
	clock, opt := stepClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
	ts := startService(t, "", opt)
	acme := ts.newAccount("Acme", "", "B12345674")
	s, status := statusSink(t, 422)
	ep := ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
	ev := ts.registerEvent(eventIn(acme.companyID, "invoice.sent"))
	ts.settle(clock, ep.id)
	ds := ts.deliveries(ep, acme.key)
	if len(ds) != 1 || ds[0]["status"] != "failed_permanently" || ds[0]["reason"] != "non_retryable_status" {
		t.Fatalf("after a 422: got %v, want one failed_permanently delivery", ds)
	}
	id := ds[0]["id"].(string)

	// The receiver is fixed; an hour later its owner retries.
	status.Store(200)
	ts.advance(clock, time.Hour)
	var re object
	ts.must(200, "POST", ep.path+"/deliveries/"+id+"/retry", acme.key, nil, &re)
	if re["id"] != id || re["event_id"] != ev["id"] || re["replay_of"] != nil || re["attempt_count"] != 1.0 {
		t.Errorf("retry answered %v, want delivery %s re-armed (replay_of null, attempt_count 1)", re, id)
	}
	if re["status"] != "pending" || re["reason"] != nil || re["next_attempt_at"] != float64(clock.Now().Unix()) {
		t.Errorf("retry answered %v, want pending now with no reason", re)
	}
	got := s.waitRequests(t, 2, 5*time.Second)
	ts.settle(clock, ep.id)
	sameDelivery(t, got[0], got[1], ep.secret)
	if got[1].header.Get("Factuarea-Delivery-Id") != id {
		t.Errorf("Factuarea-Delivery-Id %q, want the same delivery %s", got[1].header.Get("Factuarea-Delivery-Id"), id)
	}
	d := ts.delivery(ep, acme.key, id)
	if d["status"] != "delivered" || d["attempt_count"] != 2.0 || d["reason"] != nil || d["last_response_status"] != 200.0 {
		t.Errorf("after the retry: got %v, want delivered after 2 attempts", d)
	}
	as := attemptsOf(d)
	if len(as) != 2 || as[0]["manual"] != false || as[1]["manual"] != true || as[1]["number"] != 2.0 || as[1]["response_status"] != 200.0 {
		t.Errorf("attempts: got %v, want an automatic one, then manual number 2 answered 200", as)
	}
	if n := len(ts.deliveries(ep, acme.key)); n != 1 {
		t.Errorf("got %d deliveries, want 1: a retry adds none", n)
	}
	// Delivered: nothing to resend.
	ts.wantError(409, "delivery_not_resendable", "POST", ep.path+"/deliveries/"+id+"/retry", acme.key, nil)

	// A manual attempt that fails ends failed, and nothing follows it.
	status.Store(404)
	ts.registerEvent(eventIn(acme.companyID, "invoice.paid"))
	ts.settle(clock, ep.id)
	id2 := ts.deliveries(ep, acme.key)[0]["id"].(string)
	status.Store(503)
	ts.advance(clock, time.Minute)
	ts.must(200, "POST", ep.path+"/deliveries/"+id2+"/retry", acme.key, nil, nil)
	ts.settle(clock, ep.id)
	d = ts.delivery(ep, acme.key, id2)
	if d["status"] != "failed" || d["reason"] != "manual_attempt_failed" || d["next_attempt_at"] != nil || d["attempt_count"] != 2.0 || d["last_response_status"] != 503.0 {
		t.Errorf("after a failed manual attempt: got %v, want failed manual_attempt_failed, nothing scheduled", d)
	}
	before := len(s.requests())
	for range 5 {
		ts.advance(clock, 3*24*time.Hour)
		ts.idle()
	}
	if n := len(s.requests()); n != before {
		t.Errorf("sink got %d more requests after a failed manual attempt, want none", n-before)
	}
	// failed can be retried again (within the window: 15 days have passed).
	status.Store(200)
	ts.must(200, "POST", ep.path+"/deliveries/"+id2+"/retry", acme.key, nil, nil)
	ts.settle(clock, ep.id)
	if d := ts.delivery(ep, acme.key, id2); d["status"] != "delivered" || d["attempt_count"] != 3.0 {
		t.Errorf("second retry: got %v, want delivered after 3 attempts", d)
	}

	// Each retry is in the audit log.
	var audit listPage
	ts.must(200, "GET", "/v1/accounts/"+acme.accountID+"/audit_log?limit=100", acme.key, nil, &audit)
	retried := 0
	for _, e := range audit.Data {
		if e["action"] == "webhook_delivery.retried" && e["outcome"] == "succeeded" {
			retried++
		}
	}
	if retried != 3 {
		t.Errorf("audit log: %d webhook_delivery.retried entries, want 3", retried)
	}
}

// TestReplay: on a company endpoint, replay creates a new delivery (201)
// of the same event with the stored body: same event id, a new delivery
// id, replay_of naming the original, byte-identical body.
func TestReplay(t *testing.T) {
	clock, opt := stepClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
	ts := startService(t, "", opt)
	acme := ts.newAccount("Acme", "", "B12345674")
	s, status := statusSink(t, 400)
	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
	ev := ts.registerEvent(eventIn(acme.companyID, "invoice.sent"))
	ts.settle(clock, ep.id)
	orig := ts.deliveries(ep, acme.key)[0]
	origID := orig["id"].(string)

	status.Store(503)
	ts.advance(clock, 2*time.Hour)
	var r1 object
	ts.must(201, "POST", ep.path+"/deliveries/"+origID+"/replay", acme.key, nil, &r1)
	r1ID, _ := r1["id"].(string)
	if r1ID == origID || r1["replay_of"] != origID || r1["event_id"] != ev["id"] || r1["event_type"] != "invoice.sent" || r1["endpoint_id"] != ep.id {
		t.Errorf("replay answered %v, want a new delivery of event %v with replay_of %s", r1, ev["id"], origID)
	}
	if r1["status"] != "pending" || r1["attempt_count"] != 0.0 || r1["created"] != float64(clock.Now().Unix()) {
		t.Errorf("replay answered %v, want pending, no attempts yet, created now", r1)
	}
	got := s.waitRequests(t, 2, 5*time.Second)
	ts.settle(clock, ep.id)
	sameDelivery(t, got[0], got[1], ep.secret)
	if got[1].header.Get("Factuarea-Delivery-Id") != r1ID || got[0].header.Get("Factuarea-Delivery-Id") != origID {
		t.Errorf("Factuarea-Delivery-Id: got %q then %q, want %s then %s", got[0].header.Get("Factuarea-Delivery-Id"), got[1].header.Get("Factuarea-Delivery-Id"), origID, r1ID)
	}
	// The replay's manual attempt failed (503): failed, nothing scheduled;
	// the original is untouched.
	d := ts.delivery(ep, acme.key, r1ID)
	if d["status"] != "failed" || d["reason"] != "manual_attempt_failed" || d["next_attempt_at"] != nil || d["attempt_count"] != 1.0 {
		t.Errorf("replay after a 503: got %v, want failed manual_attempt_failed", d)
	}
	if as := attemptsOf(d); len(as) != 1 || as[0]["manual"] != true || as[0]["number"] != 1.0 {
		t.Errorf("replay attempts: got %v, want one manual attempt number 1", as)
	}
	if o := ts.delivery(ep, acme.key, origID); o["status"] != "failed_permanently" || o["attempt_count"] != 1.0 || o["replay_of"] != nil {
		t.Errorf("original after a replay: got %v, want it unchanged", o)
	}

	// Replaying the replay: replay_of still names the original.
	status.Store(200)
	ts.advance(clock, time.Hour)
	var r2 object
	ts.must(201, "POST", ep.path+"/deliveries/"+r1ID+"/replay", acme.key, nil, &r2)
	if r2["replay_of"] != origID {
		t.Errorf("replay of a replay: replay_of %v, want the original %s", r2["replay_of"], origID)
	}
	got = s.waitRequests(t, 3, 5*time.Second)
	ts.settle(clock, ep.id)
	sameDelivery(t, got[0], got[2], ep.secret)
	if d := ts.delivery(ep, acme.key, r2["id"].(string)); d["status"] != "delivered" {
		t.Errorf("second replay: got %v, want delivered", d)
	}
	// Newest first: the second replay, the first, the original.
	var ids []string
	for _, d := range ts.deliveries(ep, acme.key) {
		ids = append(ids, d["id"].(string))
	}
	if want := []string{r2["id"].(string), r1ID, origID}; strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("deliveries: got %v, want %v", ids, want)
	}
	// One event, three deliveries; the event_id filter finds them all.
	var l listPage
	ts.must(200, "GET", ep.path+"/deliveries?event_id="+ev["id"].(string), acme.key, nil, &l)
	if len(l.Data) != 3 {
		t.Errorf("deliveries of the event: got %d, want 3", len(l.Data))
	}
}

// TestResendErrors: every error a retry or a replay answers.
func TestResendErrors(t *testing.T) {
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	clock, opt := stepClock(t0)
	// The failing endpoints fail for months of the clock: they would be
	// disabled (SPEC 14), which is not what this test is about.
	ts := startService(t, "", opt, func(c *service.Config) { c.DisableAfter = -1 })
	acme := ts.newAccount("Acme", "", "B12345674")
	other := ts.newAccount("Other", "", "A58818501")
	failing, _ := statusSink(t, 422)
	pendingSink, _ := statusSink(t, 503)
	okSink, _ := statusSink(t, 200)
	company := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": failing.URL, "enabled_events": []string{"invoice.*"}})
	account := ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": failing.URL, "enabled_events": []string{"invoice.*"}})
	companyPending := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": pendingSink.URL, "enabled_events": []string{"invoice.*"}})
	accountPending := ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": pendingSink.URL, "enabled_events": []string{"invoice.*"}})
	companyOK := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": okSink.URL, "enabled_events": []string{"invoice.*"}})
	accountOK := ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": okSink.URL, "enabled_events": []string{"invoice.*"}})
	otherEP := ts.newEndpoint("/v1/companies/"+other.companyID, other.key, object{"url": failing.URL, "enabled_events": []string{"invoice.*"}})
	all := []string{company.id, account.id, companyPending.id, accountPending.id, companyOK.id, accountOK.id, otherEP.id}

	// Three events, a day apart: the oldest is used for the windows.
	for range 3 {
		ts.registerEvent(eventIn(acme.companyID, "invoice.sent"))
		ts.registerEvent(eventIn(other.companyID, "invoice.sent"))
		ts.settle(clock, all...)
		ts.advance(clock, 24*time.Hour)
		ts.settle(clock, all...)
	}
	first := func(ep endpoint, status string) string {
		t.Helper()
		key := acme.key
		if ep.id == otherEP.id {
			key = other.key
		}
		ds := ts.deliveries(ep, key)
		for _, d := range ds {
			if d["status"] == status {
				return d["id"].(string)
			}
		}
		t.Fatalf("endpoint %s has no %s delivery: %v", ep.id, status, ds)
		return ""
	}
	path := func(ep endpoint, id, action string) string { return ep.path + "/deliveries/" + id + "/" + action }
	companyFailed, accountFailed := first(company, "failed_permanently"), first(account, "failed_permanently")

	// delivery_not_resendable
	{
		ts.wantError(409, "delivery_not_resendable", "POST", path(companyPending, first(companyPending, "pending"), "replay"), acme.key, nil)
		ts.wantError(409, "delivery_not_resendable", "POST", path(accountPending, first(accountPending, "pending"), "retry"), acme.key, nil)
		ts.wantError(409, "delivery_not_resendable", "POST", path(companyOK, first(companyOK, "delivered"), "replay"), acme.key, nil)
		ts.wantError(409, "delivery_not_resendable", "POST", path(accountOK, first(accountOK, "delivered"), "retry"), acme.key, nil)
	}
	// wrong_resend_action
	{
		msg := ts.wantError(400, "wrong_resend_action", "POST", path(company, companyFailed, "retry"), acme.key, nil)
		if !strings.Contains(msg, "replay") {
			t.Errorf("retry on a company endpoint: message %q does not name replay", msg)
		}
		msg = ts.wantError(400, "wrong_resend_action", "POST", path(account, accountFailed, "replay"), acme.key, nil)
		if !strings.Contains(msg, "use retry") {
			t.Errorf("replay on an account endpoint: message %q does not name retry", msg)
		}
		// Also for a delivery that could not be resent anyway: the action
		// is wrong first.
		ts.wantError(400, "wrong_resend_action", "POST", path(companyOK, first(companyOK, "delivered"), "retry"), acme.key, nil)
	}
	// not_found
	{
		// A delivery of another endpoint, of the same account or another's.
		ts.wantError(404, "not_found", "GET", company.path+"/deliveries/"+accountFailed, acme.key, nil)
		ts.wantError(404, "not_found", "POST", path(company, first(companyOK, "delivered"), "replay"), acme.key, nil)
		ts.wantError(404, "not_found", "POST", path(account, accountFailed[:8], "retry"), acme.key, nil)
		otherFailed := first(otherEP, "failed_permanently")
		ts.wantError(404, "not_found", "POST", path(company, otherFailed, "replay"), acme.key, nil)
		ts.wantError(404, "not_found", "POST", path(otherEP, otherFailed, "replay"), acme.key, nil)
		ts.wantError(404, "not_found", "GET", otherEP.path+"/deliveries/"+otherFailed, acme.key, nil)
		// The endpoint under another owner's path.
		ts.wantError(404, "not_found", "POST", "/v1/accounts/"+acme.accountID+"/webhook_endpoints/"+company.id+"/deliveries/"+companyFailed+"/replay", acme.key, nil)
	}
	// outside_resend_window
	{
		// Events at t0, t0+1d and t0+2d; now is t0+3d. Retry: 30 days;
		// replay: 90 days, counted from the event's creation.
		ds := ts.deliveries(account, acme.key) // newest first
		oldest, middle := ds[2]["id"].(string), ds[1]["id"].(string)
		clock.Set(t0.Add(30*24*time.Hour - time.Second))
		ts.must(200, "POST", path(account, oldest, "retry"), acme.key, nil, nil)
		clock.Set(t0.Add(24*time.Hour + 30*24*time.Hour))
		msg := ts.wantError(409, "outside_resend_window", "POST", path(account, middle, "retry"), acme.key, nil)
		if !strings.Contains(msg, "30-day") {
			t.Errorf("message %q does not name the 30-day window", msg)
		}
		cds := ts.deliveries(company, acme.key)
		oldest, middle = cds[2]["id"].(string), cds[1]["id"].(string)
		clock.Set(t0.Add(90*24*time.Hour - time.Second))
		ts.must(201, "POST", path(company, oldest, "replay"), acme.key, nil, nil)
		clock.Set(t0.Add(24*time.Hour + 90*24*time.Hour))
		msg = ts.wantError(409, "outside_resend_window", "POST", path(company, middle, "replay"), acme.key, nil)
		if !strings.Contains(msg, "90-day") {
			t.Errorf("message %q does not name the 90-day window", msg)
		}
		// Recover skips what is outside the window: the newest event
		// (t0+2d) is 89 days old, the other two are not resendable.
		var rec object
		ts.must(200, "POST", company.path+"/recover", acme.key, object{"since": t0.Unix()}, &rec)
		if rec["count"] != 1.0 {
			t.Errorf("recover at t0+91d: got %v, want count 1 (only the event inside the window)", rec)
		}
		ts.settle(clock, all...)
	}
	// endpoint_disabled
	{
		for _, c := range []struct {
			ep     endpoint
			action string
		}{{company, "replay"}, {account, "retry"}} {
			var failed string
			for _, d := range ts.deliveries(c.ep, acme.key) {
				if d["status"] == "failed_permanently" {
					failed = d["id"].(string)
				}
			}
			ts.must(200, "PATCH", c.ep.path, acme.key, object{"status": "disabled"}, nil)
			ts.wantError(409, "endpoint_disabled", "POST", path(c.ep, failed, c.action), acme.key, nil)
			ts.wantError(409, "endpoint_disabled", "POST", c.ep.path+"/recover", acme.key, object{"since": t0.Unix()})
			ts.wantError(409, "endpoint_disabled", "POST", c.ep.path+"/test", acme.key, nil)
			ts.must(200, "PATCH", c.ep.path, acme.key, object{"status": "enabled"}, nil)
		}
	}
	// audit
	{
		// Refused resends are in the audit log with their code.
		var audit listPage
		ts.must(200, "GET", "/v1/accounts/"+acme.accountID+"/audit_log?limit=100", acme.key, nil, &audit)
		refused := map[string]int{}
		for _, e := range audit.Data {
			if e["outcome"] == "refused" {
				refused[e["action"].(string)+" "+str(e["error_code"])]++
			}
		}
		for _, want := range []string{
			"webhook_delivery.retried delivery_not_resendable", "webhook_delivery.replayed delivery_not_resendable",
			"webhook_delivery.retried wrong_resend_action", "webhook_delivery.replayed wrong_resend_action",
			"webhook_delivery.retried outside_resend_window", "webhook_delivery.replayed outside_resend_window",
			"webhook_delivery.retried endpoint_disabled", "webhook_endpoint.recovered endpoint_disabled", "webhook_endpoint.test_sent endpoint_disabled",
		} {
			if refused[want] == 0 {
				t.Errorf("audit log: no refused %s entry (got %v)", want, refused)
			}
		}
	}
}

// TestSendTestEvent: POST …/test creates a delivery of a ping event with
// test true, to that endpoint alone, in its envelope, and the event is in
// no event log.
func TestSendTestEvent(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	companySink, accountSink, bystander := newSink(t), newSink(t), newSink(t)
	companyEP := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": companySink.URL, "enabled_events": []string{"invoice.sent"}})
	accountEP := ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": accountSink.URL, "enabled_events": []string{"*"}, "livemode": false})
	ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": bystander.URL, "enabled_events": []string{"*"}})
	ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": bystander.URL, "enabled_events": []string{"*"}})

	for _, c := range []struct {
		name     string
		ep       endpoint
		sink     *sink
		livemode bool
	}{{"company", companyEP, companySink, true}, {"account", accountEP, accountSink, false}} {
		var d object
		ts.must(201, "POST", c.ep.path+"/test", acme.key, nil, &d)
		if d["object"] != "webhook_delivery" || d["event_type"] != "ping" || d["endpoint_id"] != c.ep.id || d["replay_of"] != nil {
			t.Errorf("%s: test answered %v, want a delivery of a ping event to %s", c.name, d, c.ep.id)
		}
		r := c.sink.waitRequests(t, 1, 5*time.Second)[0]
		var body map[string]any
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("%s: body %s: %v", c.name, r.body, err)
		}
		if body["type"] != "ping" || body["test"] != true || body["livemode"] != c.livemode || body["id"] != d["event_id"] {
			t.Errorf("%s: body %s, want a ping with test true, livemode %t, id %v", c.name, r.body, c.livemode, d["event_id"])
		}
		if r.header.Get("Factuarea-Event-Type") != "ping" || r.header.Get("Factuarea-Delivery-Id") != d["id"] || r.header.Get("Idempotency-Key") != d["event_id"] {
			t.Errorf("%s: headers %v", c.name, r.header)
		}
		if c.name == "account" {
			acct, _ := body["account"].(map[string]any)
			if acct["id"] != acme.accountID || body["account_relationship"] != "own" || body["company_id"] != nil {
				t.Errorf("account: body %s, want the endpoint's account, own, company_id null", r.body)
			}
			if r.header.Get("Factuarea-Account-Relationship") != "own" {
				t.Errorf("account: Factuarea-Account-Relationship %q, want own", r.header.Get("Factuarea-Account-Relationship"))
			}
		}
		ts.waitFor("the test delivery's attempt", 5*time.Second, func() bool {
			return ts.delivery(c.ep, acme.key, d["id"].(string))["status"] == "delivered"
		})
	}
	ts.idle()
	if n := len(bystander.requests()); n != 0 {
		t.Errorf("another endpoint subscribed to * got %d requests, want none", n)
	}
	for _, log := range []string{"/v1/companies/" + acme.companyID + "/events", "/v1/accounts/" + acme.accountID + "/events"} {
		var l listPage
		ts.must(200, "GET", log, acme.key, nil, &l)
		if len(l.Data) != 0 {
			t.Errorf("%s: got %v, want no events (test events are not logged)", log, l.Data)
		}
	}
	// The test route takes no fields.
	ts.wantError(400, "unknown_field", "POST", companyEP.path+"/test", acme.key, object{"type": "invoice.sent"})
}
