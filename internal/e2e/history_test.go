package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/service"
)

// This file reads the history through the API (SPEC section 7): the
// delivery list and detail and the event logs' filters. It also holds the
// helpers the history, resend, recover, pagination and contract tests
// share.

// apiError is the body of every error answer.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// wantError makes a call that must fail with status and code, and returns
// the error's message.
func (ts *testService) wantError(status int, code, method, path, key string, body any) string {
	ts.t.Helper()
	got, raw := ts.raw(method, path, key, body, nil)
	var e apiError
	json.Unmarshal(raw, &e)
	if got != status || e.Error.Code != code {
		ts.t.Errorf("%s %s: got %d %s, want %d %s", method, path, got, raw, status, code)
	}
	return e.Error.Message
}

// delivery returns one delivery of ep with its attempts.
func (ts *testService) delivery(ep endpoint, key, id string) object {
	ts.t.Helper()
	var d object
	ts.must(200, "GET", ep.path+"/deliveries/"+id, key, nil, &d)
	return d
}

// attemptsOf returns a delivery's attempts.
func attemptsOf(d object) []object {
	var out []object
	as, _ := d["attempts"].([]any)
	for _, a := range as {
		out = append(out, a.(map[string]any))
	}
	return out
}

// eventIn returns an invoice event about company, of type typ.
func eventIn(companyID, typ string) object {
	return object{"type": typ, "company_id": companyID, "data": object{"object": invoice}}
}

// stepClock returns a fake clock at a fixed time and the option that makes
// the service use it, with the jitter fixed at its middle (no jitter) so
// that schedules are exact.
func stepClock(start time.Time) (*fakeClock, options) {
	clock := &fakeClock{now: start}
	return clock, func(c *service.Config) {
		c.Now = clock.Now
		c.Random = func() float64 { return 0.5 }
	}
}

// advance moves the clock by d and wakes the engine.
func (ts *testService) advance(clock *fakeClock, d time.Duration) {
	clock.Set(clock.Now().Add(d))
	ts.svc.Engine.Wake()
}

// settle waits until every delivery of the endpoints that is due at the
// clock's time has been attempted and its attempt stored: no pending
// delivery is left with next_attempt_at at or before now.
func (ts *testService) settle(clock *fakeClock, endpointIDs ...string) {
	ts.t.Helper()
	ts.svc.Engine.Wake()
	ts.waitFor("the due deliveries' attempts", 10*time.Second, func() bool {
		now := clock.Now()
		for _, id := range endpointIDs {
			for _, d := range ts.storeDeliveries(id, webhooks.DeliveryPending) {
				if !d.NextAttemptAt.After(now) {
					return false
				}
			}
		}
		return true
	})
}

// storeDeliveries reads an endpoint's deliveries straight from the store
// (for deleted endpoints, whose routes answer 404), newest first.
func (ts *testService) storeDeliveries(endpointID, status string) []*webhooks.Delivery {
	ts.t.Helper()
	var out []*webhooks.Delivery
	p := webhooks.Page{Limit: 100}
	for {
		l, err := ts.svc.Store.ListDeliveries(context.Background(), webhooks.DeliveryFilter{EndpointID: endpointID, Status: status}, p)
		if err != nil {
			ts.t.Fatalf("ListDeliveries: %v", err)
		}
		out = append(out, l.Data...)
		if !l.HasMore {
			return out
		}
		p.StartingAfter = l.Data[len(l.Data)-1].ID
	}
}

// switchSink is a receiver that answers 503 while it is down and 200
// otherwise, and counts the 200s it answered per event id.
type switchSink struct {
	*sink
	down atomic.Bool
	mu   sync.Mutex
	ok   map[string]int
}

func newSwitchSink(t *testing.T) *switchSink {
	s := &switchSink{sink: newSink(t), ok: map[string]int{}}
	s.setRespond(func(_ int, w http.ResponseWriter, r *http.Request) {
		if s.down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		s.mu.Lock()
		s.ok[r.Header.Get("Factuarea-Event-Id")]++
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	return s
}

// delivered returns how many times each event id was answered 200.
func (s *switchSink) delivered() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.ok))
	for k, v := range s.ok {
		out[k] = v
	}
	return out
}

// listPage is one page of any list.
type listPage struct {
	Object  string   `json:"object"`
	Data    []object `json:"data"`
	HasMore bool     `json:"has_more"`
}

// walk reads a whole list page by page with limit, calling between (if
// set) after each page, and checks each page's shape. It returns the items
// in the order listed.
func (ts *testService) walk(path, key string, limit int, between func()) []object {
	ts.t.Helper()
	var items []object
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	after := ""
	for page := 0; ; page++ {
		q := fmt.Sprintf("%s%slimit=%d", path, sep, limit)
		if after != "" {
			q += "&starting_after=" + url.QueryEscape(after)
		}
		var l listPage
		ts.must(200, "GET", q, key, nil, &l)
		if l.Object != "list" {
			ts.t.Errorf("GET %s: object %q, want list", q, l.Object)
		}
		if len(l.Data) > limit {
			ts.t.Fatalf("GET %s: got %d items, want at most %d", q, len(l.Data), limit)
		}
		if l.HasMore && len(l.Data) != limit {
			ts.t.Errorf("GET %s: has_more with %d items, want a full page of %d", q, len(l.Data), limit)
		}
		items = append(items, l.Data...)
		if !l.HasMore {
			return items
		}
		if page > 10000 {
			ts.t.Fatalf("GET %s: more than 10000 pages", path)
		}
		after = items[len(items)-1]["id"].(string)
		if between != nil {
			between()
		}
	}
}

// ids returns the items' field (usually "id").
func ids(items []object, field string) []string {
	out := make([]string, 0, len(items))
	for _, o := range items {
		out = append(out, str(o[field]))
	}
	return out
}

// reversed returns ids newest first, given them oldest first.
func reversed(ids []string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

// TestDeliveryHistory reads an endpoint's deliveries: each with its
// event_id, newest first, filtered by status and event_id, and the detail
// with every attempt.
func TestDeliveryHistory(t *testing.T) {
	clock, opt := stepClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
	ts := startService(t, "", opt)
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	// invoice.paid is refused (failed_permanently), invoice.sent fails
	// once and then goes through, the rest are delivered at once.
	s.setRespond(func(_ int, w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Factuarea-Event-Type") {
		case "invoice.paid":
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, "gone")
		case "invoice.sent":
			if clock.Now().Equal(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)) {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprint(w, "busy")
				return
			}
			fallthrough
		default:
			fmt.Fprint(w, "ok")
		}
	})
	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
	var events []string // oldest first
	for _, typ := range []string{"invoice.created", "invoice.sent", "invoice.paid", "invoice.created"} {
		events = append(events, ts.registerEvent(eventIn(acme.companyID, typ))["id"].(string))
	}
	ts.settle(clock, ep.id)
	ts.advance(clock, 61*time.Second) // the 503's retry after 1 min (no jitter)
	ts.settle(clock, ep.id)

	ds := ts.deliveries(ep, acme.key)
	if len(ds) != 4 {
		t.Fatalf("got %d deliveries, want 4", len(ds))
	}
	for i, d := range ds {
		if want := events[len(events)-1-i]; d["event_id"] != want {
			t.Errorf("delivery %d: event_id %v, want %s (newest first)", i, d["event_id"], want)
		}
		if d["object"] != "webhook_delivery" || d["endpoint_id"] != ep.id || d["attempts"] != nil {
			t.Errorf("delivery %d: got %v, want a webhook_delivery of %s without attempts in the list", i, d, ep.id)
		}
	}
	byEvent := map[string]object{}
	for _, d := range ds {
		byEvent[d["event_id"].(string)] = d
	}
	sent, paid := byEvent[events[1]], byEvent[events[2]]
	if sent["status"] != "delivered" || sent["attempt_count"] != 2.0 || sent["last_response_status"] != 200.0 || sent["reason"] != nil || sent["next_attempt_at"] != nil {
		t.Errorf("invoice.sent delivery: got %v, want delivered after 2 attempts", sent)
	}
	if paid["status"] != "failed_permanently" || paid["reason"] != "non_retryable_status" || paid["last_response_status"] != 422.0 {
		t.Errorf("invoice.paid delivery: got %v, want failed_permanently non_retryable_status 422", paid)
	}
	if paid["event_type"] != "invoice.paid" || paid["replay_of"] != nil {
		t.Errorf("invoice.paid delivery: got %v", paid)
	}

	// The detail adds every attempt, in order.
	d := ts.delivery(ep, acme.key, sent["id"].(string))
	as := attemptsOf(d)
	if len(as) != 2 {
		t.Fatalf("invoice.sent: got %d attempts, want 2", len(as))
	}
	t1 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	wantAttempts := []struct {
		status  float64
		body    string
		started int64
	}{{503, "busy", t1.Unix()}, {200, "ok", t1.Add(61 * time.Second).Unix()}}
	for i, w := range wantAttempts {
		a := as[i]
		if a["number"] != float64(i+1) || a["response_status"] != w.status || a["response_body"] != w.body ||
			a["started_at"] != float64(w.started) || a["manual"] != false || a["error"] != nil {
			t.Errorf("attempt %d: got %v, want number %d status %v body %q started_at %d", i+1, a, i+1, w.status, w.body, w.started)
		}
		if _, ok := a["duration_ms"].(float64); !ok {
			t.Errorf("attempt %d: duration_ms %v, want a number", i+1, a["duration_ms"])
		}
	}

	// Filters, alone and together.
	filter := func(query string) []string {
		t.Helper()
		var l listPage
		ts.must(200, "GET", ep.path+"/deliveries?"+query, acme.key, nil, &l)
		var out []string
		for _, d := range l.Data {
			out = append(out, d["event_id"].(string))
		}
		return out
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"status=delivered", []string{events[3], events[1], events[0]}},
		{"status=failed_permanently", []string{events[2]}},
		{"status=pending", nil},
		{"status=failed", nil},
		{"event_id=" + events[1], []string{events[1]}},
		{"event_id=" + events[2] + "&status=failed_permanently", []string{events[2]}},
		{"event_id=" + events[2] + "&status=delivered", nil},
		{"event_id=" + webhooks.NewID(), nil},
	} {
		if got := filter(c.query); !slices.Equal(got, c.want) {
			t.Errorf("deliveries?%s: got events %v, want %v", c.query, got, c.want)
		}
	}
	ts.wantError(400, "invalid_request", "GET", ep.path+"/deliveries?status=lost", acme.key, nil)
	ts.wantError(400, "invalid_request", "GET", ep.path+"/deliveries?event_id=42", acme.key, nil)
	ts.wantError(400, "unknown_field", "GET", ep.path+"/deliveries?type=invoice.sent", acme.key, nil)
}

// TestEventLogFilters checks type, created_gte and created_lt (unix
// seconds, the lower bound included and the upper one excluded) on the
// company and account logs, and what the account log holds: the account's
// account.* events and its companies' events, not a managed account's.
func TestEventLogFilters(t *testing.T) {
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	clock, opt := stepClock(t0)
	ts := startService(t, "", opt)
	acme := ts.newAccount("Acme", "", "B12345674")
	// A second company of Acme's, and a managed account with its own.
	var c2 object
	ts.must(201, "POST", "/v1/companies", adminKey, object{"account_id": acme.accountID, "nif": "A58818501", "name": "Acme Two SL"}, &c2)
	second := c2["id"].(string)
	client := ts.newAccount("Client", acme.accountID, "12345678Z")

	type ev struct {
		id, typ, company, account string
		at                        time.Time
	}
	var all []ev
	add := func(offset time.Duration, typ, company, account string) {
		clock.Set(t0.Add(offset))
		in := object{"type": typ, "data": object{"object": object{"object": "thing"}}}
		if company != "" {
			in["company_id"] = company
		}
		if account != "" {
			in["account_id"] = account
		}
		e := ts.registerEvent(in)
		if e["created"] != float64(t0.Add(offset).Unix()) {
			t.Fatalf("event created %v, want %d", e["created"], t0.Add(offset).Unix())
		}
		all = append(all, ev{e["id"].(string), typ, company, e["account_id"].(string), t0.Add(offset)})
	}
	// Ten seconds apart; two events share second 40.
	add(0, "invoice.created", acme.companyID, "")
	add(10*time.Second, "invoice.sent", acme.companyID, "")
	add(20*time.Second, "account.updated", "", acme.accountID)
	add(30*time.Second, "invoice.sent", second, "")
	add(40*time.Second, "invoice.paid", acme.companyID, "")
	add(40*time.Second+500*time.Millisecond, "invoice.sent", acme.companyID, "")
	add(50*time.Second, "invoice.sent", client.companyID, "")
	add(60*time.Second, "account.updated", "", client.accountID)
	add(70*time.Second, "account.key_created", "", acme.accountID)
	// A test event is never in a log.
	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": "http://127.0.0.1:9/", "enabled_events": []string{"nothing.matches"}})
	ts.must(201, "POST", ep.path+"/test", acme.key, nil, nil)

	sec := func(d time.Duration) string { return fmt.Sprint(t0.Add(d).Unix()) }
	pick := func(keep func(ev) bool) []string {
		var out []string
		for i := len(all) - 1; i >= 0; i-- {
			if keep(all[i]) {
				out = append(out, all[i].id)
			}
		}
		return out
	}
	inCompany := func(c string) func(ev) bool { return func(e ev) bool { return e.company == c } }
	acmeOwn := func(e ev) bool { return e.account == acme.accountID }
	and := func(fs ...func(ev) bool) func(ev) bool {
		return func(e ev) bool {
			for _, f := range fs {
				if !f(e) {
					return false
				}
			}
			return true
		}
	}
	typ := func(s string) func(ev) bool { return func(e ev) bool { return e.typ == s } }
	gte := func(d time.Duration) func(ev) bool { return func(e ev) bool { return !e.at.Before(t0.Add(d)) } }
	lt := func(d time.Duration) func(ev) bool { return func(e ev) bool { return e.at.Before(t0.Add(d)) } }

	company := "/v1/companies/" + acme.companyID + "/events"
	account := "/v1/accounts/" + acme.accountID + "/events"
	clientLog := "/v1/accounts/" + client.accountID + "/events"
	cases := []struct {
		path, query string
		want        []string
	}{
		{company, "", pick(inCompany(acme.companyID))},
		{company, "type=invoice.sent", pick(and(inCompany(acme.companyID), typ("invoice.sent")))},
		{company, "type=invoice", nil},
		{company, "type=invoice.*", nil},
		{company, "created_gte=" + sec(10*time.Second), pick(and(inCompany(acme.companyID), gte(10*time.Second)))},
		{company, "created_lt=" + sec(40*time.Second), pick(and(inCompany(acme.companyID), lt(40*time.Second)))},
		// Second 40 holds two events: both are at or after 40 and before 41.
		{company, "created_gte=" + sec(40*time.Second) + "&created_lt=" + sec(41*time.Second), pick(and(inCompany(acme.companyID), gte(40*time.Second), lt(41*time.Second)))},
		{company, "created_gte=" + sec(10*time.Second) + "&created_lt=" + sec(10*time.Second), nil},
		{company, "created_gte=" + sec(10*time.Second) + "&created_lt=" + sec(40*time.Second) + "&type=invoice.sent", []string{all[1].id}},
		{account, "", pick(acmeOwn)},
		{account, "type=account.updated", []string{all[2].id}},
		{account, "type=invoice.sent", pick(and(acmeOwn, typ("invoice.sent")))},
		{account, "created_gte=" + sec(20*time.Second) + "&created_lt=" + sec(70*time.Second), pick(and(acmeOwn, gte(20*time.Second), lt(70*time.Second)))},
		{account, "created_gte=" + sec(71*time.Second), nil},
		{clientLog, "", []string{all[7].id, all[6].id}},
		{"/v1/companies/" + second + "/events", "", []string{all[3].id}},
	}
	for _, c := range cases {
		key := acme.key
		if c.path == clientLog {
			// The provisioning account's key does not reach its managed
			// account's log; the managed account's own key does.
			ts.wantError(404, "not_found", "GET", c.path, acme.key, nil)
			key = client.key
		}
		var l listPage
		ts.must(200, "GET", c.path+"?limit=100&"+c.query, key, nil, &l)
		var got []string
		for _, e := range l.Data {
			got = append(got, e["id"].(string))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("GET %s?%s: got %v, want %v", c.path, c.query, got, c.want)
		}
	}
	for _, bad := range []string{"created_gte=yesterday", "created_lt=-1", "created_gte=1.5"} {
		ts.wantError(400, "invalid_request", "GET", company+"?"+bad, acme.key, nil)
		ts.wantError(400, "invalid_request", "GET", account+"?"+bad, acme.key, nil)
	}
	ts.wantError(400, "unknown_field", "GET", company+"?created_gt=1", acme.key, nil)
	ts.wantError(400, "unknown_field", "GET", account+"?status=delivered", acme.key, nil)

	// An event reads back to its own account (the managing account too
	// sees only its own).
	ts.must(200, "GET", "/v1/events/"+all[3].id, acme.key, nil, nil)
	ts.wantError(404, "not_found", "GET", "/v1/events/"+all[6].id, acme.key, nil)
	ts.must(200, "GET", "/v1/events/"+all[6].id, client.key, nil, nil)
	ts.wantError(404, "not_found", "GET", "/v1/events/"+all[3].id, client.key, nil)
}
