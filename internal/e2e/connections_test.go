package e2e

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/service"
)

// TestConnectionsReused: the attempts in flight to one host, up to the
// engine's concurrency, go over kept-alive connections: a second wave of
// as many attempts as the first opens no new ones.
func TestConnectionsReused(t *testing.T) {
	const wave = 96 // above the transport's default of 64 idle connections per host
	ts := startService(t, "", func(c *service.Config) {
		c.Concurrency, c.PerEndpoint, c.AttemptTimeout = wave, wave, 10*time.Second
	})
	var opened, arrived atomic.Int32
	var mu sync.Mutex
	full := make(chan struct{}) // closed when a wave is all in flight
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ch := full
		mu.Unlock()
		if arrived.Add(1)%wave == 0 {
			close(ch)
		}
		// Each wave is answered once all of it is in flight, so that it
		// needs as many connections at once.
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	acme := ts.newAccount("Acme", "", "B12345674")
	ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": srv.URL, "enabled_events": []string{"invoice.sent"}})
	for w := 1; w <= 2; w++ {
		for range wave {
			ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
		}
		ts.waitFor("the wave delivered", 20*time.Second, func() bool { return ts.attempts() == w*wave })
		mu.Lock()
		full = make(chan struct{})
		mu.Unlock()
	}
	if n := opened.Load(); n > wave+wave/8 {
		t.Errorf("two waves of %d attempts opened %d connections, want about %d", wave, n, wave)
	}
}
