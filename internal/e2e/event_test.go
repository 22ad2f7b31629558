package e2e

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestIdempotencyKey: a producer's retried POST /v1/events with the same
// Idempotency-Key returns the first event (200) and registers nothing; the
// key with another body is refused.
func TestIdempotencyKey(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"*"}})
	body := object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}}
	key := http.Header{"Idempotency-Key": {"order-42-sent"}}

	st1, raw1 := ts.raw("POST", "/v1/events", adminKey, body, key)
	st2, raw2 := ts.raw("POST", "/v1/events", adminKey, body, key)
	if st1 != 201 || st2 != 200 {
		t.Fatalf("statuses: got %d then %d, want 201 then 200 (%s)", st1, st2, raw2)
	}
	var e1, e2 object
	json.Unmarshal(raw1, &e1)
	json.Unmarshal(raw2, &e2)
	if !reflect.DeepEqual(e1, e2) {
		t.Errorf("repeat returned %v, want the first event %v", e2, e1)
	}
	// Whitespace does not make another request.
	compact, _ := json.Marshal(body)
	indented, _ := json.MarshalIndent(body, "", "  ")
	if st, raw := ts.raw("POST", "/v1/events", adminKey, indented, key); st != 200 {
		t.Errorf("same body indented: got %d %s, want 200", st, raw)
	}
	_ = compact
	other := object{"type": "invoice.paid", "company_id": acme.companyID, "data": object{"object": invoice}}
	var errBody struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	st, raw := ts.raw("POST", "/v1/events", adminKey, other, key)
	json.Unmarshal(raw, &errBody)
	if st != 409 || errBody.Error.Code != "idempotency_key_reused" {
		t.Errorf("reused key: got %d %s, want 409 idempotency_key_reused", st, raw)
	}
	// Without a key, the same body is a new event.
	e3 := ts.registerEvent(body)
	if e3["id"] == e1["id"] {
		t.Error("a request without a key returned the keyed event")
	}
	s.waitRequests(t, 2, 5*time.Second)
	ts.waitFor("attempts stored", 5*time.Second, func() bool { return ts.attempts() >= 2 })
	if n := len(ts.deliveries(ep, acme.key)); n != 2 {
		t.Errorf("got %d deliveries, want 2 (one per registered event)", n)
	}
	if n := len(s.requests()); n != 2 {
		t.Errorf("sink got %d requests, want 2", n)
	}
	// The event reads back as registered.
	var got object
	ts.must(200, "GET", "/v1/events/"+e1["id"].(string), acme.key, nil, &got)
	if !reflect.DeepEqual(got, e1) {
		t.Errorf("GET event: got %v, want %v", got, e1)
	}
}

// TestPayloadVersions: an event is stored once and rendered for each
// endpoint's pinned version.
func TestPayloadVersions(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	latest, old := newSink(t), newSink(t)
	ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": latest.URL, "enabled_events": []string{"invoice.sent"}})
	ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": old.URL, "enabled_events": []string{"invoice.sent"}, "api_version": "2025-06-01"})
	var bad struct {
		Error struct{ Code string } `json:"error"`
	}
	if st := ts.call("POST", "/v1/accounts/"+acme.accountID+"/webhook_endpoints", acme.key, object{"url": old.URL, "enabled_events": []string{"*"}, "api_version": "2020-01-01"}, &bad); st != 400 {
		t.Errorf("unknown api_version: got %d %v, want 400", st, bad)
	}
	// Raw JSON, so that the producer's key order is the seed's.
	ev := ts.registerEvent(json.RawMessage(`{"type": "invoice.sent", "company_id": "` + acme.companyID + `", "data": {"object": ` + seedInvoiceJSON + `}}`))
	l := latest.waitRequests(t, 1, 5*time.Second)[0]
	o := old.waitRequests(t, 1, 5*time.Second)[0]
	var lb, ob map[string]any
	json.Unmarshal(l.body, &lb)
	json.Unmarshal(o.body, &ob)
	if lb["api_version"] != "2026-09-23" || ob["api_version"] != "2025-06-01" {
		t.Errorf("api_version: latest %v, old %v", lb["api_version"], ob["api_version"])
	}
	if lb["id"] != ev["id"] || ob["id"] != ev["id"] {
		t.Errorf("ids differ: %v %v %v", lb["id"], ob["id"], ev["id"])
	}
	wantOld := map[string]any{"object": map[string]any{
		"object": "invoice", "id": "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42", "number": "FAC-2026-00042",
		"status": "sent", "total_cents": 121000.0, "currency": "EUR",
	}}
	if !reflect.DeepEqual(ob["data"], any(wantOld)) {
		t.Errorf("2025-06-01 data: got %v, want %v", ob["data"], wantOld)
	}
	// The transform keeps the producer's key order: only total changes.
	if want := `"data":{"object":{"object":"invoice","id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42","number":"FAC-2026-00042","status":"sent","total_cents":121000,"currency":"EUR"}}`; !contains(o.body, want) {
		t.Errorf("2025-06-01 body %s, want it to contain %s", o.body, want)
	}
	if want := `"data":{"type":"invoice.sent","object":{"object":"invoice","id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42","number":"FAC-2026-00042","status":"sent","total":"1210.00","currency":"EUR"}}`; !contains(l.body, want) {
		t.Errorf("2026-09-23 body %s, want it to contain %s", l.body, want)
	}
	// An invoice total no version can render is refused at registration.
	st := ts.call("POST", "/v1/events", adminKey, object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": object{"object": "invoice", "total": "12.345"}}}, &bad)
	if st != 422 {
		t.Errorf("invoice total with 3 decimals: got %d %v, want 422", st, bad)
	}
}

// seedInvoiceJSON is the seed's invoice in its key order.
const seedInvoiceJSON = `{"object": "invoice", "id": "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42", "number": "FAC-2026-00042", "status": "sent", "total": "1210.00", "currency": "EUR"}`

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
