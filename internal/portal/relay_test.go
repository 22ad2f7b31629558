package portal_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/portal"
	"github.com/factuarea/webhooks/internal/relay"
	"github.com/factuarea/webhooks/internal/storetest"
)

// TestRelay_Pages: a relay endpoint (SPEC 20) shows, where an endpoint's
// URL would be, "relay: connected" while a webhooks listen holds it and
// "relay: not connected" otherwise, on the endpoints page and its own;
// its edit form has no URL field, and saving it keeps it a relay
// endpoint.
func TestRelay_Pages(t *testing.T) {
	b := setup(t)
	hub := relay.New(relay.Config{Store: b.store, Now: b.clock.Now})
	h, err := portal.New(portal.Config{
		App:      app.New(app.Config{Store: b.store, Registrar: b.store, AllowHTTP: true, Now: b.clock.Now, Relay: hub}),
		Sessions: b.sessions, Now: b.clock.Now, AllowHTTP: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	b.server = httptest.NewServer(h)
	t.Cleanup(b.server.Close)
	ep := storetest.MustCreateEndpoint(t, b.store, storetest.NewRelayEndpoint(b.a.account.ID, "*"))
	c := b.signIn(t, b.a.account.ID)

	check := func(state string) {
		t.Helper()
		for _, p := range []string{"/portal/", "/portal/endpoints/" + ep.ID} {
			page := c.get(p, 200)
			if !strings.Contains(page, state) || !strings.Contains(page, "Relay endpoint "+ep.ID[len(ep.ID)-8:]) {
				t.Errorf("GET %s: no %q and the relay endpoint's label", p, state)
			}
		}
	}
	check("relay: not connected")

	ctx, cancel := context.WithCancel(t.Context())
	connected := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		first := true
		done <- hub.Serve(ctx, ep.ID, func(*webhooks.RelayRequest) error {
			if first {
				first = false
				close(connected)
			}
			return nil
		})
	}()
	<-connected
	check("relay: connected")
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not end with its context")
	}
	check("relay: not connected")

	form := c.get("/portal/endpoints/"+ep.ID+"/edit", 200)
	if strings.Contains(form, `name="url"`) {
		t.Error("the relay endpoint's edit form has a URL field")
	}
	r := c.post("/portal/endpoints/"+ep.ID+"/edit", url.Values{"events": {"invoice.*"}, "api_version": {webhooks.LatestAPIVersion}, "own": {"1"}, "managed": {"1"}})
	if r.status != 303 {
		t.Fatalf("saving the relay endpoint's form: got %d\n%s", r.status, r.body)
	}
	got := storetest.MustFindEndpoint(t, b.store, ep.ID)
	if !got.Relay || got.URL != "" || len(got.EnabledEvents) != 1 || got.EnabledEvents[0] != "invoice.*" {
		t.Errorf("after the edit: got relay %t url %q events %v, want a relay endpoint with invoice.*", got.Relay, got.URL, got.EnabledEvents)
	}
}
