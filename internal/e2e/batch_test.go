package e2e

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// batchResult is the answer of POST /v1/events/batch.
type batchResult struct {
	Object string `json:"object"`
	Data   []struct {
		Status int    `json:"status"`
		Event  object `json:"event"`
		Err    *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"data"`
}

// batch sends a batch with the admin key; it must answer 200.
func (ts *testService) batch(events ...any) batchResult {
	ts.t.Helper()
	var res batchResult
	status, raw := ts.raw("POST", "/v1/events/batch", adminKey, object{"events": events}, nil)
	if status != http.StatusOK {
		ts.t.Fatalf("POST /v1/events/batch: got %d %s, want 200", status, clip(raw))
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		ts.t.Fatal(err)
	}
	if res.Object != "batch_result" || len(res.Data) != len(events) {
		ts.t.Fatalf("POST /v1/events/batch: got %s, want a batch_result of %d outcomes", clip(raw), len(events))
	}
	return res
}

// companyEvents counts a company's events (up to 100).
func (ts *testService) companyEvents(f fixture) int {
	ts.t.Helper()
	var l struct {
		Data []object `json:"data"`
	}
	ts.must(200, "GET", "/v1/companies/"+f.companyID+"/events?limit=100", f.key, nil, &l)
	return len(l.Data)
}

// withKey returns an event input with an idempotency key.
func withKey(in object, key string) object {
	out := object{"idempotency_key": key}
	for k, v := range in {
		out[k] = v
	}
	return out
}

// TestBatch runs testBatch on SQLite and PostgreSQL.
func TestBatch(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testBatch(t, startService(t, "")) })
	t.Run("PostgreSQL", func(t *testing.T) { testBatch(t, startService(t, "", withPostgres(t))) })
}

// testBatch: POST /v1/events/batch registers each item on its own, as POST
// /v1/events would, and answers each item's outcome in the items' order;
// a refused item leaves its neighbours registered, and delivered; an
// idempotency_key repeated in the batch or across requests is one event; a
// batch refused as a whole registers nothing.
func testBatch(t *testing.T, ts *testService) {
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"*"}})

	// A key first used by POST /v1/events, then by the batch.
	single := eventIn(acme.companyID, "invoice.created")
	var first object
	st, raw := ts.raw("POST", "/v1/events", adminKey, single, http.Header{"Idempotency-Key": {"FAC-41-created"}})
	if st != 201 || json.Unmarshal(raw, &first) != nil {
		t.Fatalf("POST /v1/events: got %d %s", st, clip(raw))
	}

	sent := withKey(eventIn(acme.companyID, "invoice.sent"), "FAC-42-sent")
	items := []any{
		0: sent,
		1: eventIn(acme.companyID, "invoice.paid"),
		2: object{"type": "Invoice Sent", "company_id": acme.companyID, "data": object{"object": invoice}},
		3: object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}, "id": webhookID()},
		4: eventIn(webhookID(), "invoice.sent"),
		5: sent, // the same key and request: item 0's event
		6: withKey(eventIn(acme.companyID, "invoice.voided"), "FAC-42-sent"),
		7: withKey(single, "FAC-41-created"),
		8: object{"type": 42, "data": object{"object": invoice}},
		9: eventIn(acme.companyID, "invoice.sent"),
	}
	res := ts.batch(items...)
	want := []struct {
		status int
		code   string
	}{
		{201, ""}, {201, ""}, {400, "invalid_request"}, {400, "unknown_field"}, {422, "unknown_company"},
		{200, ""}, {409, "idempotency_key_reused"}, {200, ""}, {400, "invalid_request"}, {201, ""},
	}
	var created []string
	for i, o := range res.Data {
		w := want[i]
		switch {
		case o.Status != w.status:
			t.Errorf("item %d: got status %d (%v, %v), want %d %s", i, o.Status, o.Event, o.Err, w.status, w.code)
		case w.code != "" && (o.Err == nil || o.Err.Code != w.code || o.Event != nil):
			t.Errorf("item %d: got %v, %v, want the error %s", i, o.Event, o.Err, w.code)
		case w.code == "" && (o.Event == nil || o.Err != nil):
			t.Errorf("item %d: got %v, %v, want an event", i, o.Event, o.Err)
		case w.status == 201:
			created = append(created, str(o.Event["id"]))
			if o.Event["type"] != items[i].(object)["type"] {
				t.Errorf("item %d: got a %v event, want %v", i, o.Event["type"], items[i].(object)["type"])
			}
			// The answer is the event as it reads back.
			var got object
			ts.must(200, "GET", "/v1/events/"+str(o.Event["id"]), acme.key, nil, &got)
			if !reflect.DeepEqual(got, o.Event) {
				t.Errorf("item %d: GET its event: got %v, want %v", i, got, o.Event)
			}
		}
	}
	if len(res.Data) == len(want) {
		if res.Data[5].Event != nil && res.Data[0].Event != nil && res.Data[5].Event["id"] != res.Data[0].Event["id"] {
			t.Errorf("the key repeated in the batch: got event %v, want item 0's %v", res.Data[5].Event["id"], res.Data[0].Event["id"])
		}
		if res.Data[7].Event != nil && !reflect.DeepEqual(res.Data[7].Event, first) {
			t.Errorf("the key of POST /v1/events: got %v, want its event %v", res.Data[7].Event, first)
		}
		if res.Data[3].Err != nil && !strings.Contains(res.Data[3].Err.Message, `"id"`) {
			t.Errorf("the unknown field's message %q does not name it", res.Data[3].Err.Message)
		}
	}

	// Sent again, the keyed item repeats and the others are new events.
	again := ts.batch(sent, eventIn(acme.companyID, "invoice.paid"))
	if again.Data[0].Status != 200 || again.Data[0].Event["id"] != res.Data[0].Event["id"] || again.Data[1].Status != 201 {
		t.Errorf("the batch again: got %+v, want 200 with item 0's event, then 201", again.Data)
	}
	created = append(created, str(again.Data[1].Event["id"]))

	// Refused whole: nothing registered.
	before := ts.companyEvents(acme)
	many := make([]any, 101)
	for i := range many {
		many[i] = eventIn(acme.companyID, "invoice.sent")
	}
	ts.wantError(400, "invalid_request", "POST", "/v1/events/batch", adminKey, object{"events": many})
	ts.wantError(400, "invalid_request", "POST", "/v1/events/batch", adminKey, object{"events": []any{}})
	ts.wantError(400, "invalid_request", "POST", "/v1/events/batch", adminKey, object{})
	ts.wantError(400, "unknown_field", "POST", "/v1/events/batch", adminKey, object{"events": many[:1], "atomic": true})
	ts.wantError(400, "invalid_json", "POST", "/v1/events/batch", adminKey, `{"events": [`)
	ts.wantError(403, "forbidden", "POST", "/v1/events/batch", acme.key, object{"events": many[:1]})
	if st, raw := ts.raw("POST", "/v1/events/batch", adminKey, object{"events": many[:1]}, http.Header{"Idempotency-Key": {"b-1"}}); st != 400 || replyError(raw).Error.Code != "invalid_request" {
		t.Errorf("a batch with an Idempotency-Key header: got %d %s, want 400 invalid_request", st, clip(raw))
	}
	// 17 events of almost the most POST /v1/events takes are over the
	// batch's 4 MiB.
	big := eventIn(acme.companyID, "invoice.sent")
	big["data"] = object{"object": object{"object": "invoice", "note": strings.Repeat("x", 250<<10)}}
	bigs := make([]any, 17)
	for i := range bigs {
		bigs[i] = big
	}
	msg := ts.wantError(413, "request_too_large", "POST", "/v1/events/batch", adminKey, object{"events": bigs})
	if !strings.Contains(msg, "4 MiB") {
		t.Errorf("413 message %q does not say the limit", msg)
	}
	if after := ts.companyEvents(acme); after != before {
		t.Errorf("refused batches registered %d events", after-before)
	}
	// One item over what POST /v1/events takes is refused on its own.
	huge := eventIn(acme.companyID, "invoice.sent")
	huge["data"] = object{"object": object{"object": "invoice", "note": strings.Repeat("x", 260<<10)}}
	if r := ts.batch(huge, eventIn(acme.companyID, "invoice.paid")); r.Data[0].Status != 413 || r.Data[0].Err == nil || r.Data[0].Err.Code != "request_too_large" || r.Data[1].Status != 201 {
		t.Errorf("an item over 256 KiB: got %+v, want 413 request_too_large, then 201", r.Data)
	} else {
		created = append(created, str(r.Data[1].Event["id"]))
	}

	// Each event registered is delivered once, the refused ones never.
	s.waitRequests(t, 1+len(created), 10*time.Second)
	ts.idle()
	got := s.requests()
	var delivered []string
	for _, r := range got {
		delivered = append(delivered, r.header.Get("Factuarea-Event-Id"))
	}
	wantIDs := append([]string{str(first["id"])}, created...)
	slices.Sort(delivered)
	slices.Sort(wantIDs)
	if !slices.Equal(delivered, wantIDs) {
		t.Errorf("the sink got the events %v, want %v", delivered, wantIDs)
	}
}

// TestBatchUnavailable: with the database down, a batch none of whose
// events could be registered answers 503 with Retry-After, as POST
// /v1/events does, so that a producer sends it again; once the database is
// back it registers.
func TestBatchUnavailable(t *testing.T) {
	ts, proxy := startBehindProxy(t)
	acme := ts.newAccount("Acme", "", "B12345674")
	events := object{"events": []any{eventIn(acme.companyID, "invoice.sent"), eventIn(acme.companyID, "invoice.paid")}}

	proxy.cut()
	req, _ := http.NewRequest("POST", ts.url+"/v1/events/batch", strings.NewReader(`{"events": [`+
		`{"type": "invoice.sent", "company_id": "`+acme.companyID+`", "data": {"object": {"object": "invoice"}}},`+
		`{"type": "invoice.paid", "company_id": "`+acme.companyID+`", "data": {"object": {"object": "invoice"}}}]}`))
	req.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var e apiError
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || e.Error.Code != "service_unavailable" || resp.Header.Get("Retry-After") != "5" {
		t.Errorf("a batch with the database down: got %d %v, Retry-After %q; want 503 service_unavailable, 5", resp.StatusCode, e, resp.Header.Get("Retry-After"))
	}

	proxy.restore()
	ts.waitFor("the service to answer again", 15*time.Second, func() bool {
		status, _ := ts.raw("GET", "/v1/accounts/"+acme.accountID, acme.key, nil, nil)
		return status == http.StatusOK
	})
	var res batchResult
	ts.must(200, "POST", "/v1/events/batch", adminKey, events, &res)
	if len(res.Data) != 2 || res.Data[0].Status != 201 || res.Data[1].Status != 201 {
		t.Errorf("the batch again: got %+v, want two 201", res.Data)
	}
}

// exerciseBatch makes TestContract's calls of POST /v1/events/batch: its
// answers and its error paths.
func exerciseBatch(ts *testService, f fixture) {
	ts.t.Helper()
	ts.must(200, "POST", "/v1/events/batch", adminKey, object{"events": []any{
		withKey(eventIn(f.companyID, "invoice.sent"), "contract-batch"),
		withKey(eventIn(f.companyID, "invoice.sent"), "contract-batch"),
		withKey(eventIn(f.companyID, "invoice.paid"), "contract-batch"),
		eventIn(webhookID(), "invoice.sent"),
		object{"type": "invoice.sent", "data": object{"object": invoice}},
		object{"type": "invoice.sent", "company_id": f.companyID, "data": object{"object": invoice}, "id": webhookID()},
		object{"type": 42},
		"an event",
		nil,
		withKey(eventIn(f.companyID, "invoice.sent"), strings.Repeat("k", 256)),
	}}, nil)
	ts.wantError(400, "invalid_request", "POST", "/v1/events/batch", adminKey, object{"events": []any{}})
	ts.wantError(400, "unknown_field", "POST", "/v1/events/batch", adminKey, object{"events": []any{eventIn(f.companyID, "invoice.sent")}, "id": "x"})
	ts.wantError(400, "invalid_json", "POST", "/v1/events/batch", adminKey, "[]")
	ts.wantError(401, "unauthorized", "POST", "/v1/events/batch", "", object{"events": []any{eventIn(f.companyID, "invoice.sent")}})
	ts.wantError(403, "forbidden", "POST", "/v1/events/batch", f.key, object{"events": []any{eventIn(f.companyID, "invoice.sent")}})
	ts.wantError(413, "request_too_large", "POST", "/v1/events/batch", adminKey, `{"events": ["`+strings.Repeat("x", 5<<20)+`"]}`)
}
