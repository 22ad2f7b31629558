package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/service"
)

// TestLifecycle: SPEC 19 over HTTP, on both backends: renames, the
// erasure of an event, the deletion of a company and of an account, and
// what each refuses without changing anything.
func TestLifecycle(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testLifecycleHTTP(t, startService(t, "", opts...))
		})
	}
}

func testLifecycleHTTP(t *testing.T, ts *testService) {
	acme := ts.newAccount("Acme", "", "B12345674")
	a, c := "/v1/accounts/"+acme.accountID, "/v1/companies/"+acme.companyID
	ok, failing := newSink(t), newSink(t)
	failing.setRespond(func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	ok.setRespond(func(n int, w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"received":"FAC-2026-00042"}`)) })
	companyEP := ts.newEndpoint(c, acme.key, object{"url": ok.URL, "enabled_events": []string{"*"}})
	accountEP := ts.newEndpoint(a, acme.key, object{"url": failing.URL, "enabled_events": []string{"*"}})
	body := object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}}
	var ev object
	st, raw := ts.raw("POST", "/v1/events", adminKey, body, http.Header{"Idempotency-Key": {"FAC-2026-00042-sent"}})
	if st != 201 {
		t.Fatalf("POST /v1/events: got %d %s", st, raw)
	}
	mustUnmarshal(t, raw, &ev)
	if ev["erased_at"] != nil {
		t.Errorf("a new event's erased_at: got %v, want null", ev["erased_at"])
	}
	evPath := "/v1/events/" + ev["id"].(string)
	ok.waitRequests(t, 1, 10*time.Second)
	failing.waitRequests(t, 1, 10*time.Second)
	ts.waitFor("both attempts recorded", 10*time.Second, func() bool { return ts.attempts() >= 2 })

	// Renames: the admin's alone, audited; a NIF never changes.
	var got object
	ts.must(200, "PATCH", a, adminKey, object{"name": "Acme Holdings"}, &got)
	if got["name"] != "Acme Holdings" {
		t.Errorf("PATCH account: name %v, want Acme Holdings", got["name"])
	}
	ts.must(200, "PATCH", c, adminKey, object{"name": "Acme Iberia SL"}, &got)
	if got["name"] != "Acme Iberia SL" || got["nif"] != "B12345674" {
		t.Errorf("PATCH company: got %v, want the new name and the NIF B12345674", got)
	}
	ts.wantError(400, "unknown_field", "PATCH", c, adminKey, object{"nif": "A58818501"})
	ts.wantError(400, "invalid_request", "PATCH", a, adminKey, object{"name": ""})
	ts.wantError(400, "invalid_request", "PATCH", c, adminKey, nil)
	ts.wantError(403, "forbidden", "PATCH", a, acme.key, object{"name": "Mine"})
	ts.wantError(403, "forbidden", "PATCH", c, acme.key, object{"name": "Mine"})
	ts.must(200, "GET", a, acme.key, nil, &got)
	if got["name"] != "Acme Holdings" {
		t.Errorf("account after refused renames: name %v, want Acme Holdings", got["name"])
	}
	ts.must(200, "GET", c, acme.key, nil, &got)
	if got["name"] != "Acme Iberia SL" || got["nif"] != "B12345674" {
		t.Errorf("company after refused renames: got %v", got)
	}

	// Erase: refused first, changing nothing.
	ts.wantError(403, "forbidden", "POST", evPath+"/erase", acme.key, nil)
	ts.wantError(404, "not_found", "POST", "/v1/events/"+webhookID()+"/erase", adminKey, nil)
	ts.must(200, "GET", evPath, acme.key, nil, &got)
	if got["data"] == nil || got["erased_at"] != nil {
		t.Fatalf("event after refused erasures: got %v, want its data", got)
	}
	var erased object
	ts.must(200, "POST", evPath+"/erase", adminKey, nil, &erased)
	for what, e := range map[string]object{"erase": erased, "GET": ts.getObject(evPath, acme.key)} {
		if e["data"] != nil || e["erased_at"] == nil || e["id"] != ev["id"] || e["type"] != ev["type"] || e["created"] != ev["created"] || e["company_id"] != ev["company_id"] {
			t.Errorf("%s of the erased event: got %v, want data null, erased_at set, the rest as %v", what, e, ev)
		}
	}
	// Its deliveries keep ids, states and attempts, without bodies.
	cds, ads := ts.deliveries(companyEP, acme.key), ts.deliveries(accountEP, acme.key)
	if len(cds) != 1 || len(ads) != 1 {
		t.Fatalf("deliveries after the erasure: got %d and %d, want 1 and 1", len(cds), len(ads))
	}
	var detail struct {
		Status       string `json:"status"`
		Reason       any    `json:"reason"`
		AttemptCount int    `json:"attempt_count"`
		Attempts     []struct {
			ResponseStatus any    `json:"response_status"`
			ResponseBody   string `json:"response_body"`
		} `json:"attempts"`
	}
	ts.must(200, "GET", companyEP.path+"/deliveries/"+cds[0]["id"].(string), acme.key, nil, &detail)
	if detail.Status != "delivered" || detail.AttemptCount != 1 || len(detail.Attempts) != 1 || detail.Attempts[0].ResponseBody != "" || detail.Attempts[0].ResponseStatus != float64(200) {
		t.Errorf("company endpoint's delivery after the erasure: got %+v, want delivered, one attempt (200) without its response body", detail)
	}
	ts.must(200, "GET", accountEP.path+"/deliveries/"+ads[0]["id"].(string), acme.key, nil, &detail)
	if detail.Status != "failed" || detail.Reason != "event_erased" || detail.AttemptCount != 1 {
		t.Errorf("account endpoint's pending delivery after the erasure: got %+v, want failed event_erased after 1 attempt", detail)
	}
	ts.wantError(409, "event_erased", "POST", companyEP.path+"/deliveries/"+cds[0]["id"].(string)+"/replay", acme.key, nil)
	ts.wantError(409, "event_erased", "POST", accountEP.path+"/deliveries/"+ads[0]["id"].(string)+"/retry", acme.key, nil)
	// The id still deduplicates.
	st, raw = ts.raw("POST", "/v1/events", adminKey, body, http.Header{"Idempotency-Key": {"FAC-2026-00042-sent"}})
	var repeat object
	mustUnmarshal(t, raw, &repeat)
	if st != 200 || repeat["id"] != ev["id"] || repeat["data"] != nil {
		t.Errorf("the erased event's Idempotency-Key again: got %d %s, want 200 with the erased event", st, raw)
	}

	// Delete the company.
	ev2 := ts.registerEvent(body)
	failing.waitRequests(t, 2, 10*time.Second)
	ts.waitFor("the second event's attempts", 10*time.Second, func() bool { return ts.attempts() >= 4 })
	ts.wantError(403, "forbidden", "DELETE", c, acme.key, nil)
	ts.must(200, "GET", c, acme.key, nil, nil)
	ts.must(204, "DELETE", c, adminKey, nil, nil)
	ts.wantError(404, "not_found", "GET", c, adminKey, nil)
	ts.wantError(404, "not_found", "GET", companyEP.path, acme.key, nil)
	ts.wantError(404, "not_found", "DELETE", c, adminKey, nil)
	ts.wantError(404, "not_found", "PATCH", c, adminKey, object{"name": "Back"})
	ts.wantError(422, "unknown_company", "POST", "/v1/events", adminKey, body)
	e2 := ts.getObject("/v1/events/"+ev2["id"].(string), acme.key)
	if e2["data"] != nil || e2["erased_at"] == nil {
		t.Errorf("the deleted company's event: got %v, want it erased", e2)
	}
	ads = ts.deliveries(accountEP, acme.key)
	if len(ads) != 2 {
		t.Errorf("the account endpoint's deliveries after the delete: got %d, want 2 (kept)", len(ads))
	}
	for _, d := range ads {
		if d["status"] != "failed" || d["reason"] != "event_erased" {
			t.Errorf("the account endpoint's delivery %v: got %v %v, want failed event_erased", d["id"], d["status"], d["reason"])
		}
	}
	var again object
	ts.must(201, "POST", "/v1/companies", adminKey, object{"account_id": acme.accountID, "nif": "B12345674", "name": "Acme Nova SL"}, &again)

	// Delete the account: not while an account it provisioned exists.
	client := ts.newAccount("Client", acme.accountID, "")
	ts.wantError(409, "account_has_managed_accounts", "DELETE", a, adminKey, nil)
	ts.must(200, "GET", a, acme.key, nil, nil)
	ts.must(200, "GET", accountEP.path, acme.key, nil, nil)
	ts.must(204, "DELETE", "/v1/accounts/"+client.accountID, adminKey, nil, nil)
	ts.wantError(401, "unauthorized", "GET", "/v1/accounts/"+client.accountID, client.key, nil)
	ts.must(204, "DELETE", a, adminKey, nil, nil)
	ts.wantError(401, "unauthorized", "GET", a, acme.key, nil)
	ts.wantError(404, "not_found", "GET", a, adminKey, nil)
	ts.wantError(404, "not_found", "GET", "/v1/companies/"+again["id"].(string), adminKey, nil)
	ts.wantError(422, "unknown_account", "POST", "/v1/companies", adminKey, object{"account_id": acme.accountID, "nif": "A58818501", "name": "X"})
	// Its audit log stays, for the admin.
	var audit struct {
		Data []struct {
			Action string `json:"action"`
			Target struct{ Type, ID string }
		} `json:"data"`
	}
	ts.must(200, "GET", a+"/audit_log?limit=100", adminKey, nil, &audit)
	actions := map[string]bool{}
	for _, e := range audit.Data {
		actions[e.Action] = true
	}
	for _, want := range []string{"account.deleted", "account.updated", "company.updated", "company.deleted", "event.erased", "webhook_endpoint.deleted"} {
		if !actions[want] {
			t.Errorf("audit log of the deleted account: no %s (got %v)", want, actions)
		}
	}
	if len(audit.Data) == 0 || audit.Data[0].Action != "account.deleted" {
		t.Errorf("audit log of the deleted account: newest %v, want account.deleted", audit.Data)
	}
}

func (ts *testService) getObject(path, key string) object {
	ts.t.Helper()
	var o object
	ts.must(200, "GET", path, key, nil, &o)
	return o
}

// TestErasedBytesLeaveTheFiles: a marker written into an event's payload
// and into a receiver's answer is in the SQLite files once the attempt
// is recorded, and in none of them (the database, the WAL) within a
// minute of the erasure's answer; the same for a deleted company's
// events, erased by the background job.
func TestErasedBytesLeaveTheFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "webhooks.db")
	ts := startService(t, path, func(c *service.Config) { c.ScrubInterval = time.Second })
	acme := ts.newAccount("Acme", "", "B12345674")
	marker := func() string {
		b := make([]byte, 16)
		rand.Read(b)
		return "MARK" + hex.EncodeToString(b)
	}
	eventMark, answerMark, companyMark := marker(), marker(), marker()
	s := newSink(t)
	s.setRespond(func(n int, w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"echo":"` + answerMark + `"}`)) })
	ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": s.URL, "enabled_events": []string{"*"}})
	ev := ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID,
		"data": object{"object": object{"object": "invoice", "customer": object{"name": eventMark}}}})
	s.waitRequests(t, 1, 10*time.Second)
	ts.waitFor("the attempt recorded", 10*time.Second, func() bool { return ts.attempts() >= 1 })
	other := ts.newAccount("Other", acme.accountID, "A58818501")
	ts.newEndpoint("/v1/companies/"+other.companyID, other.key, object{"url": s.URL, "enabled_events": []string{"*"}})
	for range 3 {
		ts.registerEvent(object{"type": "invoice.sent", "company_id": other.companyID,
			"data": object{"object": object{"object": "invoice", "customer": object{"name": companyMark}}}})
	}
	s.waitRequests(t, 1+3+3, 10*time.Second) // the account endpoint gets the managed company's events too
	ts.waitFor("the attempts recorded", 10*time.Second, func() bool { return ts.attempts() >= 7 })
	for _, m := range []string{eventMark, answerMark, companyMark} {
		if where := filesHolding(t, path, m); len(where) == 0 {
			t.Fatalf("marker %s: in none of the files before the erasure: the test cannot see what it looks for", m)
		}
	}

	ts.must(200, "POST", "/v1/events/"+ev["id"].(string)+"/erase", adminKey, nil, nil)
	ts.must(204, "DELETE", "/v1/companies/"+other.companyID, adminKey, nil, nil)
	answered := time.Now()
	for _, m := range []string{eventMark, answerMark, companyMark} {
		var where []string
		for {
			if where = filesHolding(t, path, m); len(where) == 0 {
				break
			}
			if time.Since(answered) > time.Minute {
				t.Fatalf("marker %s: still in %v a minute after the erasure", m, where)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("every marker gone from the files %s after the erasure's answer", time.Since(answered).Round(time.Millisecond))
	// The service goes on.
	ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
	s.waitRequests(t, 8, 10*time.Second)
}

// filesHolding returns the SQLite files of the database at path (the
// database, its WAL and shared memory) that contain marker.
func filesHolding(t *testing.T, path, marker string) []string {
	t.Helper()
	var out []string
	for _, f := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(marker)) {
			out = append(out, filepath.Base(f))
		}
	}
	return out
}

func mustUnmarshal(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
}
