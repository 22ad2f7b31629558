package e2e

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// invoiceSentSchema is the catalog's schema of invoice.sent in these tests.
var invoiceSentSchema = object{
	"type":     "object",
	"required": []string{"id", "number", "total"},
	"properties": object{
		"id": object{"type": "string"}, "number": object{"type": "string"},
		"total": object{"type": "string", "pattern": `^[0-9]+\.[0-9]{2}$`},
	},
}

// declareType declares an event type through the API.
func (ts *testService) declareType(name string, extra object) object {
	ts.t.Helper()
	in := object{"name": name, "description": "When " + name + " happens."}
	for k, v := range extra {
		in[k] = v
	}
	var out object
	ts.must(201, "POST", "/v1/event_types", adminKey, in, &out)
	return out
}

// wantMessage checks that an error message holds each of parts.
func wantMessage(t *testing.T, what, msg string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("%s: got message %q, want it to contain %q", what, msg, p)
		}
	}
}

// TestEventTypes: the catalog through the API, on each backend. Free-form
// until a type is declared; then an unknown type, a pattern that matches
// nothing and an object its schema refuses are each refused with 422 and a
// message that says what to do.
func TestEventTypes(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testEventTypes(t, startService(t, "")) })
	t.Run("PostgreSQL", func(t *testing.T) { testEventTypes(t, startService(t, "", withPostgres(t))) })
}

func testEventTypes(t *testing.T, ts *testService) {
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	company := "/v1/companies/" + acme.companyID
	ep := ts.newEndpoint(company, acme.key, object{"url": s.URL, "enabled_events": []string{"*"}})
	// Free-form while the catalog is empty: a typo goes through, as it
	// always did.
	ts.registerEvent(eventIn(acme.companyID, "invoice.snet"))
	ts.newEndpoint(company, acme.key, object{"url": s.URL, "enabled_events": []string{"quote.*"}})

	sent := ts.declareType("invoice.sent", object{"schema": invoiceSentSchema, "example": invoice})
	if sent["object"] != "event_type" || sent["archived"] != false || sent["example"].(map[string]any)["number"] != "FAC-2026-00042" {
		t.Errorf("declared: got %v", sent)
	}
	ts.declareType("invoice.paid", nil)
	ts.declareType("account.updated", nil)

	// Registering.
	ts.registerEvent(eventIn(acme.companyID, "invoice.sent"))
	ts.registerEvent(object{"type": "invoice.paid", "company_id": acme.companyID, "data": object{"object": object{"anything": true}}})
	msg := ts.wantError(422, "unknown_event_type", "POST", "/v1/events", adminKey, eventIn(acme.companyID, "invoice.snet"))
	wantMessage(t, "a typo", msg, `event type "invoice.snet" is not in the catalog: did you mean "invoice.sent"?`)
	msg = ts.wantError(422, "invalid_event_data", "POST", "/v1/events", adminKey,
		object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": object{"id": "inv_1", "number": "F-1", "total": 1210}}})
	wantMessage(t, "an object the schema refuses", msg, "data.object does not match the schema of invoice.sent", "at data.object/total", "got number, want string")
	var batch struct {
		Data []struct {
			Status int `json:"status"`
			Error  struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"data"`
	}
	ts.must(200, "POST", "/v1/events/batch", adminKey, object{"events": []any{
		eventIn(acme.companyID, "invoice.sent"),
		eventIn(acme.companyID, "invoice.sen"),
		object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": object{"id": "inv_1"}}},
	}}, &batch)
	if len(batch.Data) != 3 || batch.Data[0].Status != 201 || batch.Data[1].Error.Code != "unknown_event_type" ||
		batch.Data[2].Error.Code != "invalid_event_data" || !strings.Contains(batch.Data[1].Error.Message, `did you mean "invoice.sent"?`) {
		t.Errorf("batch: got %+v, want 201, unknown_event_type with a suggestion, invalid_event_data", batch.Data)
	}
	// Test events and the operational types need no declaration.
	ts.must(201, "POST", ep.path+"/test", acme.key, nil, nil)

	// Subscribing.
	ts.newEndpoint(company, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
	ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": s.URL, "enabled_events": []string{"account.updated", "invoice.paid"}})
	msg = ts.wantError(422, "unknown_event_type", "POST", company+"/webhook_endpoints", acme.key,
		object{"url": s.URL, "enabled_events": []string{"invoice.sent", "invoice.snet"}})
	wantMessage(t, "subscribing to a typo", msg, `enabled_events entry "invoice.snet" matches no event type in the catalog: did you mean "invoice.sent"?`)
	msg = ts.wantError(422, "unknown_event_type", "POST", company+"/webhook_endpoints", acme.key,
		object{"url": s.URL, "enabled_events": []string{"invoce.*"}})
	wantMessage(t, "subscribing to a prefix typo", msg, `did you mean "invoice.*"?`)
	msg = ts.wantError(422, "unknown_event_type", "PATCH", ep.path, acme.key, object{"enabled_events": []string{"*", "invoice.voided"}})
	wantMessage(t, "adding a pattern that matches nothing", msg, `"invoice.voided"`)

	// Reading the catalog, with any key.
	var list struct {
		Object  string   `json:"object"`
		Data    []object `json:"data"`
		HasMore bool     `json:"has_more"`
	}
	ts.must(200, "GET", "/v1/event_types?limit=2", acme.key, nil, &list)
	if len(list.Data) != 2 || !list.HasMore || list.Data[0]["name"] != "account.updated" || list.Data[1]["name"] != "invoice.paid" {
		t.Fatalf("the first page: got %+v, want account.updated and invoice.paid, and more", list)
	}
	ts.must(200, "GET", "/v1/event_types?limit=2&starting_after=invoice.paid", acme.key, nil, &list)
	if len(list.Data) != 1 || list.HasMore || list.Data[0]["name"] != "invoice.sent" {
		t.Errorf("the second page: got %+v, want invoice.sent alone", list)
	}
	var got object
	ts.must(200, "GET", "/v1/event_types/invoice.sent", acme.key, nil, &got)
	if got["schema"] == nil || got["example"] == nil || got["description"] != "When invoice.sent happens." {
		t.Errorf("GET invoice.sent: got %v", got)
	}

	// Archiving: listed, flagged, refused for events and new subscriptions.
	// DELETE answers the type itself (200), whose name is its key: the
	// object has no id. Archiving it again answers it the same.
	for range 2 {
		var archived object
		ts.must(200, "DELETE", "/v1/event_types/invoice.paid", adminKey, nil, &archived)
		keys := slices.Sorted(maps.Keys(archived))
		want := []string{"archived", "created", "description", "example", "name", "object", "schema", "updated"}
		if archived["archived"] != true || archived["name"] != "invoice.paid" || archived["object"] != "event_type" || !slices.Equal(keys, want) {
			t.Errorf("the archived type: got %v (fields %v), want invoice.paid archived, with fields %v", archived, keys, want)
		}
	}
	msg = ts.wantError(422, "unknown_event_type", "POST", "/v1/events", adminKey, eventIn(acme.companyID, "invoice.paid"))
	wantMessage(t, "an archived type", msg, `"invoice.paid" is archived`)
	ts.wantError(422, "unknown_event_type", "POST", company+"/webhook_endpoints", acme.key,
		object{"url": s.URL, "enabled_events": []string{"invoice.paid"}})
	ts.must(200, "GET", "/v1/event_types/invoice.paid", acme.key, nil, &got)
	if got["archived"] != true {
		t.Errorf("GET the archived type: got %v", got)
	}
	// Declared again: back.
	ts.declareType("invoice.paid", object{"description": "When an invoice is paid in full."})
	ts.registerEvent(eventIn(acme.companyID, "invoice.paid"))

	// A schema changed by PATCH applies at once.
	ts.must(200, "PATCH", "/v1/event_types/invoice.paid", adminKey, object{"schema": object{"type": "object", "required": []string{"paid_at"}}}, nil)
	msg = ts.wantError(422, "invalid_event_data", "POST", "/v1/events", adminKey, eventIn(acme.companyID, "invoice.paid"))
	wantMessage(t, "the new schema", msg, "missing property 'paid_at'")
	ts.must(200, "PATCH", "/v1/event_types/invoice.paid", adminKey, object{"schema": nil}, &got)
	if got["schema"] != nil {
		t.Errorf("the schema removed: got %v", got["schema"])
	}
	ts.registerEvent(eventIn(acme.companyID, "invoice.paid"))

	// The portal's endpoint form says the same.
	c := openPortalOn(ts, acme.accountID)
	status, body := c.post("/portal/endpoints/new", "/portal/endpoints", url.Values{
		"owner": {"company:" + acme.companyID}, "url": {s.URL}, "events": {"invoice.snet"}, "api_version": {"2026-09-23"}, "livemode": {"1"},
	})
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, `did you mean &#34;invoice.sent&#34;?`) {
		t.Errorf("the portal's form with a typo: got %d, want 422 with the suggestion; body: %s", status, clip([]byte(body)))
	}
	status, body = c.post("/portal/endpoints/new", "/portal/endpoints", url.Values{
		"owner": {"company:" + acme.companyID}, "url": {s.URL}, "event_type": {"invoice.sent", "invoice.paid"}, "api_version": {"2026-09-23"}, "livemode": {"1"},
	})
	if status != http.StatusCreated {
		t.Errorf("the portal's form with two catalog types ticked: got %d; body: %s", status, clip([]byte(body)))
	}
}

// openPortalOn opens a portal link of the account on a service whose
// public URL is not its listening address: the link's path, asked of the
// service itself.
func openPortalOn(ts *testService, accountID string) *portalClient {
	ts.t.Helper()
	var out struct {
		URL string `json:"url"`
	}
	ts.must(201, "POST", "/v1/accounts/"+accountID+"/portal_sessions", adminKey, nil, &out)
	return ts.openLink(out.URL)
}

// TestEventTypes_TwoProcesses: two processes on one PostgreSQL database
// hold the catalog in memory each, and never disagree: a type declared on
// one is taken by the other at once, one archived is refused at once, and
// a schema changed applies at once.
func TestEventTypes_TwoProcesses(t *testing.T) {
	db := withPostgres(t)
	a, b := startService(t, "", db), startService(t, "", db)
	acme := a.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	// Each process has read the (empty) catalog and holds it.
	a.registerEvent(eventIn(acme.companyID, "invoice.snet"))
	b.registerEvent(eventIn(acme.companyID, "invoice.snet"))

	a.declareType("invoice.sent", nil)
	b.registerEvent(eventIn(acme.companyID, "invoice.sent"))
	msg := b.wantError(422, "unknown_event_type", "POST", "/v1/events", adminKey, eventIn(acme.companyID, "invoice.snet"))
	wantMessage(t, "a typo on the other process", msg, `did you mean "invoice.sent"?`)
	// b now holds the catalog with invoice.sent; a declares another.
	a.declareType("invoice.paid", nil)
	b.registerEvent(eventIn(acme.companyID, "invoice.paid"))
	b.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.paid"}})

	b.must(200, "PATCH", "/v1/event_types/invoice.sent", adminKey, object{"schema": invoiceSentSchema}, nil)
	msg = a.wantError(422, "invalid_event_data", "POST", "/v1/events", adminKey,
		object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": object{"id": "inv_1"}}})
	wantMessage(t, "a schema set on the other process", msg, "missing properties")
	a.registerEvent(eventIn(acme.companyID, "invoice.sent"))

	b.must(200, "DELETE", "/v1/event_types/invoice.paid", adminKey, nil, nil)
	a.wantError(422, "unknown_event_type", "POST", "/v1/events", adminKey, eventIn(acme.companyID, "invoice.paid"))
	a.wantError(422, "unknown_event_type", "POST", "/v1/companies/"+acme.companyID+"/webhook_endpoints", acme.key,
		object{"url": s.URL, "enabled_events": []string{"invoice.paid"}})
}

// exerciseEventTypes calls every operation of the catalog, with its error
// paths, and the endpoints' 422, for TestContract; on a service of its
// own, so that the catalog it declares leaves the other calls free-form.
func exerciseEventTypes(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	big := `{"name": "` + strings.Repeat("x", 300<<10) + `"}`
	base := "/v1/event_types"

	ts.declareType("invoice.sent", object{"schema": invoiceSentSchema, "example": invoice})
	ts.declareType("invoice.paid", object{"schema": nil, "example": nil})
	ts.wantError(409, "event_type_exists", "POST", base, adminKey, object{"name": "invoice.sent", "description": "Again."})
	ts.wantError(400, "invalid_request", "POST", base, adminKey, object{"name": "Invoice Sent", "description": "x"})
	ts.wantError(400, "invalid_request", "POST", base, adminKey, object{"name": "invoice.created", "description": "x", "schema": object{"type": "nothing"}})
	ts.wantError(400, "invalid_json", "POST", base, adminKey, `{"name": `)
	ts.wantError(400, "unknown_field", "POST", base, adminKey, object{"name": "invoice.created", "description": "x", "version": 2})
	ts.wantError(401, "unauthorized", "POST", base, "", object{"name": "invoice.created", "description": "x"})
	ts.wantError(403, "forbidden", "POST", base, acme.key, object{"name": "invoice.created", "description": "x"})
	ts.wantError(413, "request_too_large", "POST", base, adminKey, big)
	ts.wantError(422, "invalid_event_data", "POST", base, adminKey,
		object{"name": "invoice.created", "description": "x", "schema": invoiceSentSchema, "example": object{"id": "inv_1"}})
	ts.wantError(405, "method_not_allowed", "PUT", base, adminKey, nil)

	ts.must(200, "GET", base, acme.key, nil, nil)
	ts.must(200, "GET", base+"?limit=1&starting_after=invoice.paid", adminKey, nil, nil)
	ts.wantError(400, "invalid_request", "GET", base+"?starting_after=invoice.unknown", acme.key, nil)
	ts.wantError(400, "unknown_field", "GET", base+"?archived=false", acme.key, nil)
	ts.wantError(401, "unauthorized", "GET", base, "", nil)

	one := base + "/invoice.sent"
	ts.must(200, "GET", one, acme.key, nil, nil)
	ts.wantError(404, "not_found", "GET", base+"/invoice.unknown", acme.key, nil)
	ts.wantError(400, "unknown_field", "GET", one+"?x=1", acme.key, nil)
	ts.wantError(401, "unauthorized", "GET", one, "", nil)
	ts.wantError(405, "method_not_allowed", "POST", one, adminKey, nil)

	ts.must(200, "PATCH", one, adminKey, object{"description": "When an invoice is sent to its customer."}, nil)
	ts.must(200, "PATCH", one, adminKey, object{}, nil)
	ts.wantError(400, "invalid_request", "PATCH", one, adminKey, object{"description": ""})
	ts.wantError(400, "unknown_field", "PATCH", one, adminKey, object{"name": "invoice.other"})
	ts.wantError(401, "unauthorized", "PATCH", one, "", object{})
	ts.wantError(403, "forbidden", "PATCH", one, acme.key, object{})
	ts.wantError(404, "not_found", "PATCH", base+"/invoice.unknown", adminKey, object{})
	ts.wantError(413, "request_too_large", "PATCH", one, adminKey, big)
	ts.wantError(422, "invalid_event_data", "PATCH", one, adminKey, object{"example": object{"id": 1}})

	// The endpoints' 422, on both scopes.
	for _, parent := range []string{"/v1/companies/" + acme.companyID, "/v1/accounts/" + acme.accountID} {
		ep := ts.newEndpoint(parent, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.sent"}})
		ts.wantError(422, "unknown_event_type", "POST", parent+"/webhook_endpoints", acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.snet"}})
		ts.wantError(422, "unknown_event_type", "PATCH", ep.path, acme.key, object{"enabled_events": []string{"invoice.snet"}})
	}
	ts.wantError(422, "unknown_event_type", "POST", "/v1/events", adminKey, eventIn(acme.companyID, "invoice.snet"))

	ts.wantError(401, "unauthorized", "DELETE", base+"/invoice.paid", "", nil)
	ts.wantError(403, "forbidden", "DELETE", base+"/invoice.paid", acme.key, nil)
	ts.wantError(404, "not_found", "DELETE", base+"/invoice.unknown", adminKey, nil)
	ts.wantError(400, "unknown_field", "DELETE", base+"/invoice.paid?force=1", adminKey, nil)
	ts.must(200, "DELETE", base+"/invoice.paid", adminKey, nil, nil)
}
