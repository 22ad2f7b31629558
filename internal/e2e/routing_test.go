package e2e

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/factuarea/webhooks/signature"
)

// invoice is the seed's invoice.sent example.
var invoice = object{
	"object": "invoice", "id": "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42", "number": "FAC-2026-00042",
	"status": "sent", "total": "1210.00", "currency": "EUR",
}

// keysInOrder returns a JSON object's top-level keys in the order they
// appear in raw.
func keysInOrder(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestSeedExample is the Catalan guide's example: one invoice.sent on a NIF
// with a company endpoint and an account endpoint; two deliveries, compared
// field by field as SPEC section 4 lists.
func TestSeedExample(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	companySink, accountSink := newSink(t), newSink(t)
	companyEP := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": companySink.URL, "enabled_events": []string{"invoice.sent"}})
	accountEP := ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": accountSink.URL, "enabled_events": []string{"invoice.sent"}})

	ev := ts.registerEvent(object{
		"type": "invoice.sent", "company_id": acme.companyID,
		"correlation_id": "01a0e783-aa84-7b48-8c63-1a5e9d2f4b70",
		"data":           object{"object": invoice},
	})
	eventID := ev["id"].(string)
	c := companySink.waitRequests(t, 1, 5*time.Second)[0]
	a := accountSink.waitRequests(t, 1, 5*time.Second)[0]

	// Field order on the wire.
	if got, want := keysInOrder(t, c.body), []string{"id", "type", "api_version", "created", "livemode", "test", "correlation_id", "data"}; !reflect.DeepEqual(got, want) {
		t.Errorf("company body keys: got %v, want %v", got, want)
	}
	if got, want := keysInOrder(t, a.body), []string{"id", "type", "api_version", "created", "livemode", "test", "correlation_id", "account", "account_relationship", "company_id", "data"}; !reflect.DeepEqual(got, want) {
		t.Errorf("account body keys: got %v, want %v", got, want)
	}
	var cb, ab map[string]any
	json.Unmarshal(c.body, &cb)
	json.Unmarshal(a.body, &ab)
	for _, k := range []string{"id", "type", "created", "livemode", "test", "correlation_id", "data", "api_version"} {
		if !reflect.DeepEqual(cb[k], ab[k]) {
			t.Errorf("body %s differs: company %v, account %v", k, cb[k], ab[k])
		}
	}
	if cb["id"] != eventID || cb["type"] != "invoice.sent" || cb["test"] != false || cb["livemode"] != true {
		t.Errorf("company body: got %v", cb)
	}
	if got, want := ab["account"], any(map[string]any{"id": acme.accountID}); !reflect.DeepEqual(got, want) {
		t.Errorf("account: got %v, want %v", got, want)
	}
	if ab["account_relationship"] != "own" || ab["company_id"] != acme.companyID {
		t.Errorf("account envelope: got relationship %v company %v", ab["account_relationship"], ab["company_id"])
	}
	wantData := map[string]any{"type": "invoice.sent", "object": map[string]any(invoice)}
	if !reflect.DeepEqual(cb["data"], wantData) {
		t.Errorf("data: got %v, want %v", cb["data"], wantData)
	}
	// Headers: equal, different, and only on account endpoints.
	for _, h := range []string{"Factuarea-Event-Id", "Factuarea-Event-Type", "Idempotency-Key", "Content-Type", "User-Agent"} {
		if c.header.Get(h) != a.header.Get(h) || c.header.Get(h) == "" {
			t.Errorf("header %s: company %q, account %q; want equal and set", h, c.header.Get(h), a.header.Get(h))
		}
	}
	if c.header.Get("Factuarea-Event-Id") != eventID || c.header.Get("Idempotency-Key") != eventID {
		t.Errorf("event id headers: got %q and %q, want %s", c.header.Get("Factuarea-Event-Id"), c.header.Get("Idempotency-Key"), eventID)
	}
	if c.header.Get("Content-Type") != "application/json" || !strings.HasPrefix(c.header.Get("User-Agent"), "Factuarea-Webhooks/") {
		t.Errorf("content type %q, user agent %q", c.header.Get("Content-Type"), c.header.Get("User-Agent"))
	}
	for _, h := range []string{"Factuarea-Delivery-Id", "Factuarea-Signature"} {
		if c.header.Get(h) == a.header.Get(h) {
			t.Errorf("header %s: both %q, want different", h, c.header.Get(h))
		}
	}
	if got := a.header.Get("Factuarea-Account-Relationship"); got != "own" {
		t.Errorf("account relationship header: got %q, want own", got)
	}
	if got := c.header.Get("Factuarea-Account-Relationship"); got != "" {
		t.Errorf("company endpoint got relationship header %q", got)
	}
	// Each signed with its own endpoint's secret, over the raw body.
	now := time.Now()
	if err := signature.Verify(c.header.Get("Factuarea-Signature"), c.body, now, 0, companyEP.secret); err != nil {
		t.Errorf("company signature: %v", err)
	}
	if err := signature.Verify(a.header.Get("Factuarea-Signature"), a.body, now, 0, accountEP.secret); err != nil {
		t.Errorf("account signature: %v", err)
	}
	if err := signature.Verify(c.header.Get("Factuarea-Signature"), c.body, now, 0, accountEP.secret); err == nil {
		t.Errorf("company delivery verifies with the account endpoint's secret")
	}
	// The delivery ids on the wire are the deliveries in the history.
	ts.waitFor("both delivered", 5*time.Second, func() bool { return ts.attempts() >= 2 })
	for _, x := range []struct {
		ep  endpoint
		got received
	}{{companyEP, c}, {accountEP, a}} {
		ds := ts.deliveries(x.ep, acme.key)
		if len(ds) != 1 {
			t.Fatalf("%s: got %d deliveries, want 1", x.ep.path, len(ds))
		}
		d := ds[0]
		if d["id"] != x.got.header.Get("Factuarea-Delivery-Id") || d["event_id"] != eventID || d["status"] != "delivered" || d["attempt_count"] != 1.0 || d["last_response_status"] != 200.0 {
			t.Errorf("%s: delivery %v", x.ep.path, d)
		}
	}
}

// TestManagedRouting: a managed account's company event reaches the
// provisioning account's endpoints that list "managed", as "managed".
func TestManagedRouting(t *testing.T) {
	ts := startService(t, "")
	firm := ts.newAccount("Firm", "", "")
	client := ts.newAccount("Client", firm.accountID, "12345678Z")
	managedSink, ownOnlySink, clientSink := newSink(t), newSink(t), newSink(t)
	ts.newEndpoint("/v1/accounts/"+firm.accountID, firm.key, object{"url": managedSink.URL, "enabled_events": []string{"invoice.*"}, "relationships": []string{"managed"}})
	ownOnly := ts.newEndpoint("/v1/accounts/"+firm.accountID, firm.key, object{"url": ownOnlySink.URL, "enabled_events": []string{"*"}, "relationships": []string{"own"}})
	ts.newEndpoint("/v1/accounts/"+client.accountID, client.key, object{"url": clientSink.URL, "enabled_events": []string{"*"}})

	ev := ts.registerEvent(object{"type": "invoice.created", "company_id": client.companyID, "data": object{"object": invoice}})
	m := managedSink.waitRequests(t, 1, 5*time.Second)[0]
	own := clientSink.waitRequests(t, 1, 5*time.Second)[0]
	var mb, ob map[string]any
	json.Unmarshal(m.body, &mb)
	json.Unmarshal(own.body, &ob)
	if mb["id"] != ev["id"] || ob["id"] != ev["id"] {
		t.Errorf("ids: managed %v, own %v, want %v", mb["id"], ob["id"], ev["id"])
	}
	if mb["account_relationship"] != "managed" || m.header.Get("Factuarea-Account-Relationship") != "managed" {
		t.Errorf("managed copy: relationship %v, header %q", mb["account_relationship"], m.header.Get("Factuarea-Account-Relationship"))
	}
	if got := mb["account"].(map[string]any)["id"]; got != client.accountID {
		t.Errorf("managed copy's account: got %v, want the managed account %s", got, client.accountID)
	}
	if ob["account_relationship"] != "own" {
		t.Errorf("own copy: relationship %v", ob["account_relationship"])
	}
	ts.waitFor("attempts stored", 5*time.Second, func() bool { return ts.attempts() >= 2 })
	if got := ts.deliveries(ownOnly, firm.key); len(got) != 0 {
		t.Errorf("an own-only endpoint of the firm got %d deliveries of its client's event", len(got))
	}
	if n := len(ownOnlySink.requests()); n != 0 {
		t.Errorf("own-only sink got %d requests", n)
	}
}

// TestAccountEventRouting: account.* events reach account endpoints only,
// and a company endpoint cannot subscribe to them.
func TestAccountEventRouting(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "X1234567L")
	companySink, accountSink := newSink(t), newSink(t)
	var e object
	if got := ts.call("POST", "/v1/companies/"+acme.companyID+"/webhook_endpoints", acme.key,
		object{"url": companySink.URL, "enabled_events": []string{"account.updated"}}, &e); got != 400 {
		t.Errorf("company endpoint subscribing to account.updated: got %d %v, want 400", got, e)
	}
	companyEP := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": companySink.URL, "enabled_events": []string{"*"}})
	ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": accountSink.URL, "enabled_events": []string{"account.*"}})

	ev := ts.registerEvent(object{"type": "account.updated", "account_id": acme.accountID, "data": object{"object": object{"object": "account", "id": acme.accountID}}})
	got := accountSink.waitRequests(t, 1, 5*time.Second)[0]
	var b map[string]any
	json.Unmarshal(got.body, &b)
	if b["id"] != ev["id"] || b["company_id"] != nil || b["account_relationship"] != "own" {
		t.Errorf("account.updated body: %s", got.body)
	}
	// One that names a company still only reaches account endpoints.
	ts.registerEvent(object{"type": "account.company_added", "account_id": acme.accountID, "company_id": acme.companyID, "data": object{"object": object{"object": "company"}}})
	got = accountSink.waitRequests(t, 2, 5*time.Second)[1]
	json.Unmarshal(got.body, &b)
	if b["company_id"] != acme.companyID {
		t.Errorf("account event naming a company: company_id %v, want %s", b["company_id"], acme.companyID)
	}
	ts.waitFor("attempts stored", 5*time.Second, func() bool { return ts.attempts() >= 2 })
	if n := len(ts.deliveries(companyEP, acme.key)); n != 0 {
		t.Errorf("company endpoint subscribed to * got %d deliveries of account events", n)
	}
	// A non-account event must name a company.
	var errBody struct {
		Error struct{ Code string } `json:"error"`
	}
	if got := ts.call("POST", "/v1/events", adminKey, object{"type": "invoice.sent", "account_id": acme.accountID, "data": object{"object": invoice}}, &errBody); got != 422 || errBody.Error.Code != "company_required" {
		t.Errorf("invoice.sent without a company: got %d %s, want 422 company_required", got, errBody.Error.Code)
	}
}
