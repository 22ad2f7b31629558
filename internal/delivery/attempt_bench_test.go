package delivery

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// BenchmarkAttempt makes attempts to a loopback receiver that answers 204,
// as the engine does, with tracing off (the default): what an attempt
// costs this process, its request and answer included.
func BenchmarkAttempt(b *testing.B) {
	benchmarkAttempt(b, Config{})
}

func benchmarkAttempt(b *testing.B, cfg Config) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	cfg.Client = NewClient(srv.Client().Transport)
	e := New(cfg)
	ep := &webhooks.Endpoint{ID: webhooks.NewID(), Scope: webhooks.ScopeCompany, URL: srv.URL + "/hooks", Secret: "whsec_test", Status: webhooks.EndpointEnabled}
	c := &webhooks.Claim{
		Delivery: &webhooks.Delivery{ID: webhooks.NewID(), EndpointID: ep.ID, EventID: webhooks.NewID(), EventType: "invoice.sent",
			Status: webhooks.DeliveryPending, Body: []byte(`{"id":"evt","type":"invoice.sent","data":{"object":{"id":"inv_1"}}}`), Created: time.Now()},
		Endpoint:    ep,
		Token:       webhooks.NewID(),
		Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	}
	b.ReportAllocs()
	for b.Loop() {
		if rec := e.attempt(b.Context(), c); rec == nil || rec.Attempt.ResponseStatus != http.StatusNoContent {
			b.Fatalf("attempt: got %+v", rec)
		}
	}
}
