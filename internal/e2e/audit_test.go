package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// auditEntry is an entry of GET /v1/accounts/{account}/audit_log.
type auditEntry struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Actor  struct {
		Type string  `json:"type"`
		ID   *string `json:"id"`
	} `json:"actor"`
	Action string `json:"action"`
	Target struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"target"`
	Outcome   string  `json:"outcome"`
	ErrorCode *string `json:"error_code"`
	Created   int64   `json:"created"`
}

func (e auditEntry) String() string {
	id, code := "null", "null"
	if e.Actor.ID != nil {
		id = *e.Actor.ID
	}
	if e.ErrorCode != nil {
		code = *e.ErrorCode
	}
	return fmt.Sprintf("%s by %s %s on %s %s: %s %s", e.Action, e.Actor.Type, id, e.Target.Type, e.Target.ID, e.Outcome, code)
}

// auditLog reads an account's whole audit log, newest first, and its raw
// pages.
func (ts *testService) auditLog(accountID, key string) ([]auditEntry, []byte) {
	ts.t.Helper()
	return ts.auditPages("/v1/accounts/"+accountID+"/audit_log", 100, key)
}

// auditPages reads the whole audit log at base (an account's or the
// platform's), newest first, in pages of limit, and its raw pages.
func (ts *testService) auditPages(base string, limit int, key string) ([]auditEntry, []byte) {
	ts.t.Helper()
	var all []auditEntry
	var raws []byte
	after := ""
	for {
		path := fmt.Sprintf("%s?limit=%d", base, limit)
		if after != "" {
			path += "&starting_after=" + after
		}
		status, raw := ts.raw("GET", path, key, nil, nil)
		if status != 200 {
			ts.t.Fatalf("GET %s: got %d %s", path, status, raw)
		}
		raws = append(raws, raw...)
		var page struct {
			Data    []auditEntry `json:"data"`
			HasMore bool         `json:"has_more"`
		}
		if err := jsonUnmarshal(raw, &page); err != nil {
			ts.t.Fatal(err)
		}
		all = append(all, page.Data...)
		if !page.HasMore || len(page.Data) == 0 {
			return all, raws
		}
		after = page.Data[len(page.Data)-1].ID
	}
}

// wantAudit is an entry a test expects.
type wantAudit struct {
	action     string
	actorType  string
	actorID    string // "" for null
	targetType string
	targetID   string
	outcome    string
	errorCode  string // "" for null
}

// checkAudit says what of want log lacks, what it has beyond want, and
// whether it is newest first.
func checkAudit(t *testing.T, log string, entries []auditEntry, want []wantAudit) {
	t.Helper()
	used := make([]bool, len(entries))
	for _, w := range want {
		found := -1
		for j, e := range entries {
			if !used[j] && w.matches(e) {
				found = j
				break
			}
		}
		if found < 0 {
			t.Errorf("no entry %+v in %s", w, log)
			continue
		}
		used[found] = true
	}
	for j, e := range entries {
		if !used[j] {
			t.Errorf("unexpected entry in %s: %s", log, e)
		}
	}
	for j := 1; j < len(entries); j++ {
		if entries[j].Created > entries[j-1].Created || entries[j].ID > entries[j-1].ID {
			t.Errorf("%s is not newest first at %d: %s then %s", log, j, entries[j-1], entries[j])
			break
		}
	}
}

func (w wantAudit) matches(e auditEntry) bool {
	actorID, code := "", ""
	if e.Actor.ID != nil {
		actorID = *e.Actor.ID
	}
	if e.ErrorCode != nil {
		code = *e.ErrorCode
	}
	return e.Object == "audit_entry" && e.Action == w.action && e.Actor.Type == w.actorType && actorID == w.actorID &&
		e.Target.Type == w.targetType && e.Target.ID == w.targetID && e.Outcome == w.outcome && code == w.errorCode
}

// TestAuditLog does each action of SPEC section 8's list through the API,
// and some that are refused, and finds each in the owner account's audit
// log with its actor, action, target and outcome.
func TestAuditLog(t *testing.T) {
	ts := startService(t, "")
	// An account with a key made by the admin: api_key.created.
	var acct, k, spare, company object
	ts.must(201, "POST", "/v1/accounts", adminKey, object{"name": "Acme"}, &acct)
	accountID := str(acct["id"])
	ts.must(201, "POST", "/v1/accounts/"+accountID+"/api_keys", adminKey, nil, &k)
	key, keyID := str(k["key"]), str(k["id"])
	ts.must(201, "POST", "/v1/accounts/"+accountID+"/api_keys", adminKey, nil, &spare)
	ts.must(201, "POST", "/v1/companies", adminKey, object{"account_id": accountID, "nif": "B12345674", "name": "Acme SL"}, &company)
	companyID := str(company["id"])
	other := ts.newAccount("Bravo", "", "12345678Z")

	failing, ok := newSink(t), newSink(t)
	failing.setRespond(func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		w.Write([]byte("SINK-RESPONSE-BODY-4242"))
	})
	ok.setRespond(func(_ int, w http.ResponseWriter, _ *http.Request) { w.Write([]byte("SINK-RESPONSE-BODY-4243")) })
	cp, ap := "/v1/companies/"+companyID, "/v1/accounts/"+accountID
	ce := ts.newEndpoint(cp, key, object{"url": failing.URL, "enabled_events": []string{"invoice.*"}})
	ae := ts.newEndpoint(ap, key, object{"url": failing.URL, "enabled_events": []string{"invoice.*"}})
	okCE := ts.newEndpoint(cp, key, object{"url": ok.URL, "enabled_events": []string{"invoice.*"}})
	okAE := ts.newEndpoint(ap, key, object{"url": ok.URL, "enabled_events": []string{"invoice.*"}})

	var want []wantAudit
	byKey := func(action, targetType, targetID string) {
		want = append(want, wantAudit{action, "api_key", keyID, targetType, targetID, "succeeded", ""})
	}
	refused := func(action, targetType, targetID, code string) {
		want = append(want, wantAudit{action, "api_key", keyID, targetType, targetID, "refused", code})
	}
	byAdmin := func(action, targetType, targetID string) {
		want = append(want, wantAudit{action, "admin", "", targetType, targetID, "succeeded", ""})
	}
	byAdmin("api_key.created", "api_key", keyID)
	byAdmin("api_key.created", "api_key", str(spare["id"]))
	for _, ep := range []endpoint{ce, ae, okCE, okAE} {
		byKey("webhook_endpoint.created", "webhook_endpoint", ep.id)
	}

	// Updates: each PATCH records what it changed.
	ts.must(200, "PATCH", ce.path, key, object{"description": "orders"}, nil)
	byKey("webhook_endpoint.updated", "webhook_endpoint", ce.id)
	ts.must(200, "PATCH", ce.path, key, object{"status": "disabled"}, nil)
	byKey("webhook_endpoint.disabled", "webhook_endpoint", ce.id)
	ts.must(200, "PATCH", ce.path, key, object{"status": "enabled"}, nil)
	byKey("webhook_endpoint.enabled", "webhook_endpoint", ce.id)
	ts.must(200, "PATCH", ae.path, key, object{"enabled_events": []string{"invoice.*", "credit_note.*"}, "status": "disabled"}, nil)
	byKey("webhook_endpoint.updated", "webhook_endpoint", ae.id)
	byKey("webhook_endpoint.disabled", "webhook_endpoint", ae.id)
	// The admin may change an account's endpoint too.
	ts.must(200, "PATCH", ae.path, adminKey, object{"status": "enabled"}, nil)
	byAdmin("webhook_endpoint.enabled", "webhook_endpoint", ae.id)

	// Secrets.
	ts.must(200, "POST", ce.path+"/rotate_secret", key, object{"expires_in": 60}, nil)
	byKey("webhook_endpoint.secret_rotated", "webhook_endpoint", ce.id)
	ts.must(200, "GET", ce.path+"/secret", key, nil, nil)
	byKey("webhook_endpoint.secret_revealed", "webhook_endpoint", ce.id)
	ts.must(200, "GET", ae.path+"/secret", adminKey, nil, nil)
	byAdmin("webhook_endpoint.secret_revealed", "webhook_endpoint", ae.id)

	// A test event.
	ts.must(201, "POST", okAE.path+"/test", key, nil, nil)
	byKey("webhook_endpoint.test_sent", "webhook_endpoint", okAE.id)

	// An event: failed deliveries to retry and replay, delivered ones that
	// cannot be sent again.
	ts.registerEvent(object{"type": "invoice.sent", "company_id": companyID, "data": object{"object": invoice}})
	failing.waitRequests(t, 2, 5*time.Second)
	ok.waitRequests(t, 3, 5*time.Second)
	ts.waitFor("the deliveries to end", 5*time.Second, func() bool {
		for _, ep := range []endpoint{ce, ae, okCE, okAE} {
			for _, d := range ts.deliveries(ep, key) {
				if d["status"] == "pending" {
					return false
				}
			}
		}
		return true
	})
	only := func(ep endpoint) string {
		ds := ts.deliveries(ep, key)
		if len(ds) == 0 {
			t.Fatalf("%s has no delivery", ep.path)
		}
		return str(ds[len(ds)-1]["id"]) // the oldest: the event's, not the test's
	}
	ceD, aeD, okCED, okAED := only(ce), only(ae), only(okCE), only(okAE)
	ts.must(200, "POST", ae.path+"/deliveries/"+aeD+"/retry", key, nil, nil)
	byKey("webhook_delivery.retried", "webhook_delivery", aeD)
	var replay object
	ts.must(201, "POST", ce.path+"/deliveries/"+ceD+"/replay", key, nil, &replay)
	// A replay's target is the delivery it creates (a refused one's, the
	// delivery it was asked to replay).
	byKey("webhook_delivery.replayed", "webhook_delivery", str(replay["id"]))
	ts.must(200, "POST", okCE.path+"/recover", key, object{"since": 1}, nil)
	byKey("webhook_endpoint.recovered", "webhook_endpoint", okCE.id)

	// Refused changes.
	for _, c := range []struct {
		status          int
		method, path    string
		key             string
		body            any
		action, target  string
		targetID, code  string
		alsoForTheAdmin bool
	}{
		{409, "POST", okAE.path + "/deliveries/" + okAED + "/retry", key, nil, "webhook_delivery.retried", "webhook_delivery", okAED, "delivery_not_resendable", false},
		{409, "POST", okCE.path + "/deliveries/" + okCED + "/replay", key, nil, "webhook_delivery.replayed", "webhook_delivery", okCED, "delivery_not_resendable", false},
		{400, "POST", ce.path + "/deliveries/" + ceD + "/retry", key, nil, "webhook_delivery.retried", "webhook_delivery", ceD, "wrong_resend_action", false},
		{400, "POST", ce.path + "/rotate_secret", key, object{"expires_in": 604801}, "webhook_endpoint.secret_rotated", "webhook_endpoint", ce.id, "invalid_request", false},
		{400, "PATCH", ce.path, key, object{"url": "http://10.0.0.1/hook"}, "webhook_endpoint.updated", "webhook_endpoint", ce.id, "url_not_allowed", false},
		{400, "PATCH", ce.path, key, object{"enabled_events": []string{"account.*"}}, "webhook_endpoint.updated", "webhook_endpoint", ce.id, "invalid_request", false},
	} {
		if status, raw := ts.raw(c.method, c.path, c.key, c.body, nil); status != c.status {
			t.Errorf("%s %s: got %d %s, want %d", c.method, c.path, status, raw, c.status)
		}
		refused(c.action, c.target, c.targetID, c.code)
	}
	ts.must(200, "PATCH", okAE.path, key, object{"status": "disabled"}, nil)
	byKey("webhook_endpoint.disabled", "webhook_endpoint", okAE.id)
	ts.mustRefuse(409, "endpoint_disabled", "POST", okAE.path+"/test", key, nil)
	refused("webhook_endpoint.test_sent", "webhook_endpoint", okAE.id, "endpoint_disabled")
	ts.mustRefuse(409, "endpoint_disabled", "POST", okAE.path+"/recover", key, object{"since": 1})
	refused("webhook_endpoint.recovered", "webhook_endpoint", okAE.id, "endpoint_disabled")

	// Deletion, and a key revoked.
	ts.must(204, "DELETE", ae.path, key, nil, nil)
	byKey("webhook_endpoint.deleted", "webhook_endpoint", ae.id)
	ts.must(204, "DELETE", "/v1/accounts/"+accountID+"/api_keys/"+str(spare["id"]), adminKey, nil, nil)
	byAdmin("api_key.revoked", "api_key", str(spare["id"]))

	// Requests that change nothing record nothing: reads, and what is
	// refused before the change is understood (a missing object,
	// malformed JSON).
	ts.raw("GET", ce.path, key, nil, nil)
	ts.raw("POST", ce.path+"/rotate_secret", key, "{", nil)
	ts.raw("POST", ce.path+"/deliveries/"+webhooks.NewID()+"/replay", key, nil, nil)

	entries, raw := ts.auditLog(accountID, key)
	checkAudit(t, "the account's audit log", entries, want)
	// The company's endpoints are audited under the company's owner, and
	// nothing of it appears in another account's log.
	otherEntries, otherRaw := ts.auditLog(other.accountID, other.key)
	for _, e := range otherEntries {
		if e.Actor.ID != nil && *e.Actor.ID == keyID {
			t.Errorf("Bravo's audit log has Acme's entry %s", e)
		}
	}
	for _, id := range []string{ce.id, ae.id, okCE.id, okAE.id, keyID} {
		if bytes.Contains(otherRaw, []byte(id)) {
			t.Errorf("Bravo's audit log names Acme's %s", id)
		}
	}
	// No secret, payload or key.
	for _, secret := range []string{"whsec_", ce.secret, ae.secret, key, str(spare["key"]), adminKey, "FAC-2026-00042", "1210.00", "SINK-RESPONSE-BODY"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the audit log contains %q", secret)
		}
	}
	if strings.Count(string(raw), `"object":"audit_entry"`) != len(entries) {
		t.Errorf("audit log objects: %s", clip(raw))
	}
}

// TestAuditLog_Platform: the changes to platform endpoints (SPEC 14),
// which belong to no account, are in the platform's own log, GET
// /v1/audit_log (SPEC 8): each action of the admin key on them, a refused
// one with its code, and the service's own disable (actor system), newest
// first and paged as every list. Only the admin key reads it (an account
// key is refused 403, as on the other admin routes), and no account's log
// holds a platform entry.
func TestAuditLog_Platform(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ts := startService(t, "", opts...)
			acme := ts.newAccount("Acme", "", "B12345674")
			ok, gone := newSink(t), newSink(t)
			gone.setRespond(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) })
			var want []wantAudit
			byAdmin := func(action, targetID string) {
				want = append(want, wantAudit{action, "admin", "", "webhook_endpoint", targetID, "succeeded", ""})
			}

			pe := ts.newEndpoint("/v1", adminKey, object{"url": ok.URL, "enabled_events": []string{"*"}})
			byAdmin("webhook_endpoint.created", pe.id)
			ts.must(200, "PATCH", pe.path, adminKey, object{"description": "ops"}, nil)
			byAdmin("webhook_endpoint.updated", pe.id)
			ts.must(200, "PATCH", pe.path, adminKey, object{"status": "disabled"}, nil)
			byAdmin("webhook_endpoint.disabled", pe.id)
			ts.must(200, "PATCH", pe.path, adminKey, object{"status": "enabled"}, nil)
			byAdmin("webhook_endpoint.enabled", pe.id)
			ts.must(200, "POST", pe.path+"/rotate_secret", adminKey, object{"expires_in": 0}, nil)
			byAdmin("webhook_endpoint.secret_rotated", pe.id)
			ts.must(200, "GET", pe.path+"/secret", adminKey, nil, nil)
			byAdmin("webhook_endpoint.secret_revealed", pe.id)
			ts.must(201, "POST", pe.path+"/test", adminKey, nil, nil)
			byAdmin("webhook_endpoint.test_sent", pe.id)
			ts.must(201, "POST", pe.path+"/rehearsals", adminKey, nil, nil)
			byAdmin("webhook_endpoint.rehearsal_started", pe.id)
			ts.mustRefuse(400, "url_not_allowed", "PATCH", pe.path, adminKey, object{"url": "http://10.0.0.1/hook"})
			want = append(want, wantAudit{"webhook_endpoint.updated", "admin", "", "webhook_endpoint", pe.id, "refused", "url_not_allowed"})
			ts.must(200, "POST", pe.path+"/recover", adminKey, object{"since": 0}, nil)
			byAdmin("webhook_endpoint.recovered", pe.id)

			// A platform endpoint that answers 410 Gone: the service
			// disables it, as the system.
			dead := ts.newEndpoint("/v1", adminKey, object{"url": gone.URL, "enabled_events": []string{"*"}})
			byAdmin("webhook_endpoint.created", dead.id)
			ts.must(201, "POST", dead.path+"/test", adminKey, nil, nil)
			byAdmin("webhook_endpoint.test_sent", dead.id)
			ts.waitFor("the dead endpoint disabled", 10*time.Second, func() bool {
				var ep object
				ts.must(200, "GET", dead.path, adminKey, nil, &ep)
				return ep["status"] == "disabled"
			})
			want = append(want, wantAudit{"webhook_endpoint.disabled", "system", "", "webhook_endpoint", dead.id, "succeeded", ""})
			ts.must(204, "DELETE", pe.path, adminKey, nil, nil)
			byAdmin("webhook_endpoint.deleted", pe.id)

			// The account's own changes stay in its log.
			ae := ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": ok.URL, "enabled_events": []string{"invoice.*"}})
			ts.must(200, "PATCH", ae.path, adminKey, object{"description": "erp"}, nil)

			entries, raw := ts.auditPages("/v1/audit_log", 3, adminKey)
			checkAudit(t, "the platform's audit log", entries, want)
			for _, secret := range []string{"whsec_", pe.secret, dead.secret, adminKey} {
				if bytes.Contains(raw, []byte(secret)) {
					t.Errorf("the platform's audit log contains %q", secret)
				}
			}

			// The admin's alone.
			ts.wantError(403, "forbidden", "GET", "/v1/audit_log", acme.key, nil)
			ts.wantError(401, "unauthorized", "GET", "/v1/audit_log", "", nil)

			// No account's log holds a platform entry.
			acmeEntries, acmeRaw := ts.auditLog(acme.accountID, acme.key)
			for _, id := range []string{pe.id, dead.id} {
				if bytes.Contains(acmeRaw, []byte(id)) {
					t.Errorf("Acme's audit log names the platform endpoint %s", id)
				}
			}
			if len(acmeEntries) != 3 { // api_key.created, the endpoint's creation, its update
				t.Errorf("Acme's audit log: %v, want its key's creation and its endpoint's creation and update", acmeEntries)
			}
		})
	}
}
