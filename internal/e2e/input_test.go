package e2e

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The refusals of malformed input that used to slip through: each is a
// clear error that changes nothing, on every backend.

// TestInput_UncleanPath: a path with an empty, . or .. segment names no
// route and answers the API's JSON 404, not the router's redirect (a 307
// or 301 with an HTML body).
func TestInput_UncleanPath(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	a := "/v1/accounts/" + acme.accountID
	for _, path := range []string{
		"/v1//accounts/" + acme.accountID,
		a + "/",
		a + "/./api_keys",
		a + "/../" + acme.accountID,
		"/v1/companies/" + acme.companyID + "//events",
	} {
		status, raw := ts.raw("GET", path, adminKey, nil, nil)
		if e := replyError(raw); status != http.StatusNotFound || e.Error.Code != "not_found" {
			t.Errorf("GET %s: got %d %s, want 404 not_found", path, status, clip(raw))
		}
	}
	ts.must(200, "GET", a, adminKey, nil, nil)
}

// TestInput_QueryOnRouteWithout: a route that is not a list takes no query
// parameters; one it is sent is refused (400 unknown_field), as the API
// reference says, and the request does nothing.
func TestInput_QueryOnRouteWithout(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	a := "/v1/accounts/" + acme.accountID
	ts.wantError(400, "unknown_field", "GET", a+"?expand=companies", acme.key, nil)
	ts.wantError(400, "unknown_field", "GET", "/v1/companies/"+acme.companyID+"?limit=1", acme.key, nil)
	ts.wantError(400, "unknown_field", "POST", "/v1/accounts/"+acme.accountID+"/api_keys?name=ci", adminKey, nil)
	ev := object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": object{"object": "invoice"}}}
	ts.wantError(400, "unknown_field", "POST", "/v1/events?dry_run=true", adminKey, ev)
	var l struct{ Data []object }
	ts.must(200, "GET", "/v1/companies/"+acme.companyID+"/events", acme.key, nil, &l)
	if len(l.Data) != 0 {
		t.Errorf("events after a refused registration: got %d, want 0", len(l.Data))
	}
	// A list still takes its own, and refuses a malformed query string.
	ts.must(200, "GET", "/v1/companies/"+acme.companyID+"/events?limit=5&type=invoice.sent", acme.key, nil, nil)
	ts.wantError(400, "invalid_request", "GET", "/v1/companies/"+acme.companyID+"/events?limit=%zz", acme.key, nil)
}

// TestInput_FieldNameCase: JSON field names are matched exactly. encoding/
// json matches them whatever their case, so {"NAME": …} used to be taken
// as name while a truly unknown field was refused; and a field given twice
// used to keep its last value.
func TestInput_FieldNameCase(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	msg := ts.wantError(400, "unknown_field", "POST", "/v1/accounts", adminKey, `{"NAME": "Shouting SL"}`)
	if !strings.Contains(msg, `"name"`) {
		t.Errorf("message %q does not name the field meant", msg)
	}
	ts.wantError(400, "unknown_field", "POST", "/v1/companies", adminKey,
		`{"account_id": "`+acme.accountID+`", "Nif": "A58818501", "name": "Talleres Norte SA"}`)
	ts.wantError(400, "unknown_field", "POST", "/v1/events", adminKey,
		`{"type": "invoice.sent", "company_id": "`+acme.companyID+`", "data": {"Object": {"object": "invoice"}}}`)
	ts.wantError(400, "invalid_request", "POST", "/v1/accounts", adminKey, `{"name": "First", "name": "Second"}`)
	// data.object is the producer's own JSON: its names are kept as they are.
	ts.must(201, "POST", "/v1/events", adminKey,
		`{"type": "invoice.sent", "company_id": "`+acme.companyID+`", "data": {"object": {"Object": "Invoice", "ID": "A", "id": "a"}}}`, nil)
}

// TestInput_Text runs TestInput_TextOn on SQLite and PostgreSQL.
func TestInput_Text(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testInputText(t, startService(t, "")) })
	t.Run("PostgreSQL", func(t *testing.T) { testInputText(t, startService(t, "", withPostgres(t))) })
}

// testInputText: text that is not valid UTF-8, or holds a NUL, is refused
// with 400 on every backend. SQLite used to store it (201), and then sent
// invalid JSON, while PostgreSQL refused it.
func testInputText(t *testing.T, ts *testService) {
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"*"}})
	event := func(object string) string {
		return `{"type": "invoice.sent", "company_id": "` + acme.companyID + `", "data": {"object": ` + object + `}}`
	}
	for name, tc := range map[string]struct{ method, path, body string }{
		"invalid UTF-8 in data.object": {"POST", "/v1/events", event("{\"note\": \"\xff\xfe\"}")},
		"invalid UTF-8 in a type":      {"POST", "/v1/events", "{\"type\": \"invoice.sent\xff\", \"data\": {\"object\": {}}}"},
		"invalid UTF-8 in a name":      {"POST", "/v1/accounts", "{\"name\": \"Caf\xe9 SL\"}"},
		"NUL in a name":                {"POST", "/v1/accounts", `{"name": "Nul\u0000SL"}`},
		"NUL in a company's name":      {"POST", "/v1/companies", `{"account_id": "` + acme.accountID + `", "nif": "A58818501", "name": "A\u0000"}`},
		"NUL in a correlation_id":      {"POST", "/v1/events", `{"type": "invoice.sent", "company_id": "` + acme.companyID + `", "correlation_id": "op\u0000", "data": {"object": {}}}`},
		"NUL in a description":         {"PATCH", ep.path, `{"description": "ERP\u0000"}`},
		"invalid UTF-8 in a URL":       {"PATCH", ep.path, "{\"url\": \"https://hooks.example.com/\xff\"}"},
	} {
		key := adminKey
		if tc.method == "PATCH" {
			key = acme.key
		}
		status, raw := ts.raw(tc.method, tc.path, key, tc.body, nil)
		if e := replyError(raw); status != http.StatusBadRequest || (e.Error.Code != "invalid_request" && e.Error.Code != "invalid_json") {
			t.Errorf("%s: got %d %s, want 400 invalid_request or invalid_json", name, status, clip(raw))
		}
	}
	var l struct{ Data []object }
	ts.must(200, "GET", "/v1/companies/"+acme.companyID+"/events", acme.key, nil, &l)
	if len(l.Data) != 0 {
		t.Errorf("events after the refusals: got %d, want 0", len(l.Data))
	}
	var got object
	ts.must(200, "GET", ep.path, acme.key, nil, &got)
	if got["description"] != "" || got["url"] != s.URL {
		t.Errorf("endpoint after refused changes: got description %q url %q", got["description"], got["url"])
	}
	// Text that is valid, however far from ASCII, is kept as sent.
	ts.must(201, "POST", "/v1/events", adminKey, event(`{"note": "Cafè, 寿司 and 🍣 \\u00e9"}`), nil)
	s.waitRequests(t, 1, 5*time.Second)
}

// TestInput_Overflow: a number of seconds is checked before anything is
// computed with it. A huge expires_in used to overflow into an overlap of
// 290 ms, or into an old secret that stops at once, with a 200; a huge
// since wrapped around in time.Unix and recovered every failed delivery.
func TestInput_Overflow(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	s.setRespond(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnprocessableEntity) })
	ep := ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": s.URL, "enabled_events": []string{"*"}})
	ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": object{"object": "invoice"}}})
	ts.waitFor("the delivery to fail permanently", 5*time.Second, func() bool {
		ds := ts.deliveries(ep, acme.key)
		return len(ds) == 1 && ds[0]["status"] == "failed_permanently"
	})
	huge := []string{strconv.FormatInt(math.MaxInt64, 10), "18446744074", strconv.FormatInt(math.MinInt64, 10), "604801", "-1"}
	for _, n := range huge {
		ts.wantError(400, "invalid_request", "POST", ep.path+"/rotate_secret", acme.key, `{"expires_in": `+n+`}`)
	}
	var secret object
	ts.must(200, "GET", ep.path+"/secret", acme.key, nil, &secret)
	if secret["secret"] != ep.secret {
		t.Errorf("secret after refused rotations: got %v, want the first one", secret["secret"])
	}
	for _, body := range []string{
		`{"since": ` + strconv.FormatInt(math.MaxInt64, 10) + `}`,
		`{"since": ` + strconv.FormatInt(math.MinInt64, 10) + `}`,
		`{"since": 0, "until": ` + strconv.FormatInt(math.MaxInt64, 10) + `}`,
		`{"since": 1790590561000}`, // milliseconds
	} {
		ts.wantError(400, "invalid_request", "POST", ep.path+"/recover", acme.key, body)
	}
	if ds := ts.deliveries(ep, acme.key); len(ds) != 1 || ds[0]["status"] != "failed_permanently" {
		t.Errorf("deliveries after refused recoveries: got %v, want the one failed_permanently", ds)
	}
	ts.wantError(400, "invalid_request", "GET", "/v1/accounts/"+acme.accountID+"/events?created_gte="+strconv.FormatInt(math.MaxInt64, 10), acme.key, nil)
}
