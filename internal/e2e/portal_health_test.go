package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/factuarea/webhooks/internal/service"
)

// TestPortal_DisabledEndpoint drives, in Chromium, what a customer sees of
// an endpoint the service disabled (SPEC 14): a 410 Gone disables it; its
// page says since when and why, and one action enables it and recovers
// what it missed; the events registered meanwhile then arrive.
func TestPortal_DisabledEndpoint(t *testing.T) {
	clock := &fakeClock{now: time.Now().Truncate(time.Second)}
	ts := startService(t, "", func(c *service.Config) { c.Now = clock.Now })
	acme := ts.newAccount("Acme", "", "B12345674")
	s, status := statusSink(t, 410)
	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
	ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
	ts.waitFor("the 410", 5*time.Second, func() bool { return ts.attempts() >= 1 })
	ts.idle()
	// While it is off, an event gets a failed delivery; nothing is sent.
	clock.Set(clock.Now().Add(time.Minute))
	ts.registerEvent(object{"type": "invoice.paid", "company_id": acme.companyID, "data": object{"object": invoice}})
	ts.idle()
	status.Store(200)

	ctx := ts.browsePortal(acme.accountID)
	load(t, ctx, chromedp.Navigate(ts.url+"/portal/endpoints/"+ep.id))
	callout := read(t, ctx, chromedp.Text(chromedp.CSS(".disabled-callout")))
	if !strings.Contains(callout, "Disabled since") || !strings.Contains(callout, "410 Gone") || !strings.Contains(callout, "Nothing is lost") {
		t.Errorf("the disabled endpoint's callout: %q", callout)
	}
	clock.Set(clock.Now().Add(time.Minute))
	load(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/enable_recover"] button`)))
	if text := mainText(t, ctx); !strings.Contains(text, "Recover is sending 2 failed deliveries again") || strings.Contains(text, "Disabled since") {
		t.Errorf("after Enable and recover: want the endpoint enabled and 2 recovered:\n%s", text)
	}
	ts.settle(clock, ep.id)
	delivered := 0
	for _, d := range ts.deliveries(ep, acme.key) {
		if d["status"] == "delivered" {
			delivered++
		}
	}
	if delivered != 2 {
		t.Errorf("after Enable and recover: %d events delivered, want 2", delivered)
	}
}
