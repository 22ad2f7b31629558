package delivery

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// TestNewRequest_NotResentByTheTransport: a request whose reused
// connection breaks after the receiver read it is not sent again by
// net/http's Transport (which it would do for a request with an
// Idempotency-Key and a rewindable body): one attempt is one request at
// the receiver, and the failure is the attempt's.
func TestNewRequest_NotResentByTheTransport(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			// Read the request, then drop the connection without an
			// answer.
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	client := NewClient(http.DefaultTransport.(*http.Transport).Clone())
	ep := &webhooks.Endpoint{ID: webhooks.NewID(), URL: srv.URL, Secret: "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}
	d := &webhooks.Delivery{ID: webhooks.NewID(), EventID: webhooks.NewID(), EventType: "invoice.sent", Body: []byte(`{}`)}
	send := func() error {
		req, err := NewRequest(context.Background(), d, ep, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := send(); err != nil {
		t.Fatalf("first attempt: %v", err)
	}
	if err := send(); err == nil {
		t.Errorf("second attempt: want the broken connection's error")
	}
	if got := n.Load(); got != 2 {
		t.Errorf("the receiver got %d requests for 2 attempts, want 2", got)
	}
}
