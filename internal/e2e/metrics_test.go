package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestMetrics: /metrics exposes the registrations, attempts by outcome,
// final states, latency, the backlog and the in-flight gauge.
func TestMetrics(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	ok, gone := newSink(t), newSink(t)
	gone.setRespond(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnprocessableEntity) })
	ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": ok.URL, "enabled_events": []string{"invoice.*"}})
	ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": gone.URL, "enabled_events": []string{"invoice.*"}})
	ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
	ts.waitFor("both attempts stored", 5*time.Second, func() bool { return ts.attempts() >= 2 })

	status, body := ts.raw("GET", "/metrics", "", nil, nil)
	if status != 200 {
		t.Fatalf("GET /metrics: %d", status)
	}
	for _, want := range []string{
		"webhooks_events_registered_total 1",
		`webhooks_attempts_total{outcome="delivered"} 1`,
		`webhooks_attempts_total{outcome="rejected"} 1`,
		`webhooks_deliveries_finished_total{reason="",status="delivered"} 1`,
		`webhooks_deliveries_finished_total{reason="non_retryable_status",status="failed_permanently"} 1`,
		"webhooks_attempt_duration_seconds_count 2",
		"webhooks_deliveries_due 0",
		"webhooks_oldest_due_seconds 0",
		"webhooks_attempts_in_flight 0",
		`webhooks_http_requests_total{code="201",route="POST /v1/events"} 1`,
	} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
