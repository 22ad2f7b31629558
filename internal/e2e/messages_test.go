package e2e

import (
	"strings"
	"testing"
)

// TestErrorMessages: the errors a new user meets say what to do, through
// HTTP: where the JSON breaks, which field a NIF is, that data wants its
// object, and that a time looks like milliseconds.
func TestErrorMessages(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	want := func(message, wantText string) {
		t.Helper()
		if !strings.Contains(message, wantText) {
			t.Errorf("got message %q, want it to contain %q", message, wantText)
		}
	}
	want(ts.wantError(400, "invalid_json", "POST", "/v1/events", adminKey, "{\"type\": \"invoice.sent\",\n \"data\": {\"object\": {\"total\": 12,}}}"),
		"at line 2, column 34 (byte 58)")
	want(ts.wantError(400, "invalid_json", "POST", "/v1/accounts", adminKey, `{"name": "Acme"`), "it ends at line 1, column 16 (byte 15)")
	want(ts.wantError(422, "invalid_nif", "POST", "/v1/companies", adminKey, object{"account_id": acme.accountID, "nif": "B12345675", "name": "Acme"}),
		`nif "B12345675" is a CIF with a wrong control character`)
	want(ts.wantError(422, "company_required", "POST", "/v1/events", adminKey, object{"type": "invoice.sent", "data": object{"object": object{}}}),
		"An event of type invoice.sent must name a company in company_id")
	want(ts.wantError(400, "unknown_field", "POST", "/v1/events", adminKey, object{"type": "invoice.sent", "company_id": acme.companyID,
		"data": object{"object": "invoice", "id": "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42", "number": "FAC-2026-00042"}}),
		`data must be {"object": {…}}: found "id" directly in data.`)

	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": "http://127.0.0.1:9/x", "enabled_events": []string{"*"}})
	for _, body := range []object{{"since": 1790590561000}, {"since": 1790590561000, "until": 1790676961000}, {"since": 1790590561, "until": 1790676961000}} {
		want(ts.wantError(400, "invalid_request", "POST", ep.path+"/recover", acme.key, body), "(it looks like milliseconds)")
	}
	want(ts.wantError(400, "invalid_request", "GET", "/v1/companies/"+acme.companyID+"/events?created_gte=1790590561000", acme.key, nil), "(it looks like milliseconds)")
}
