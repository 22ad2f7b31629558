package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPortal_ErasedEvent: the portal shows an erased event as erased
// (SPEC 19): the events log marks it, and its delivery's page has no
// payload, no answer's body and no button to send it again, where the
// same page had all three before the erasure.
func TestPortal_ErasedEvent(t *testing.T) {
	ts := startPortalService(t)
	acme := ts.newAccount("Acme", "", "B12345674")
	s, _ := statusSink(t, 400)
	s.setRespond(func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		w.Write([]byte(`{"refused":"ANSWER-7f3a"}`))
	})
	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"*"}})
	ev := ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID,
		"data": object{"object": object{"object": "invoice", "customer": "PAYLOAD-2c9d"}}})
	s.waitRequests(t, 1, 10*time.Second)
	ts.waitFor("the attempt recorded", 10*time.Second, func() bool { return ts.attempts() >= 1 })
	ds := ts.deliveries(ep, acme.key)
	if len(ds) != 1 || ds[0]["status"] != "failed_permanently" {
		t.Fatalf("deliveries: %v", ds)
	}
	page := "/portal/endpoints/" + ep.id + "/deliveries/" + str(ds[0]["id"])
	p := ts.openPortal(acme.accountID)
	_, before := p.get(page)
	for _, want := range []string{"PAYLOAD-2c9d", "ANSWER-7f3a", `/resend"`} {
		if !strings.Contains(before, want) {
			t.Fatalf("the delivery's page before the erasure: no %q: the test cannot see what it looks for", want)
		}
	}
	ts.must(200, "POST", "/v1/events/"+str(ev["id"])+"/erase", adminKey, nil, nil)
	status, after := p.get(page)
	if status != 200 {
		t.Fatalf("the delivery's page after the erasure: got %d", status)
	}
	for _, gone := range []string{"PAYLOAD-2c9d", "ANSWER-7f3a", `/resend"`} {
		if strings.Contains(after, gone) {
			t.Errorf("the delivery's page after the erasure: still has %q", gone)
		}
	}
	if !strings.Contains(after, "payload was erased") || !strings.Contains(after, "The event was erased") {
		t.Errorf("the delivery's page after the erasure: it does not say the event was erased:\n%s", clip([]byte(after)))
	}
	_, events := p.get("/portal/events")
	if !strings.Contains(events, `badge-erased`) {
		t.Errorf("the events log after the erasure: no erased badge")
	}
}
