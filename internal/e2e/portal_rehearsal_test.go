package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/factuarea/webhooks/internal/browsertest"
	"github.com/factuarea/webhooks/internal/service"
)

// TestPortal_Rehearsal drives an outage rehearsal (SPEC 17) from the
// portal in Chromium, on a fake clock that starts now: the endpoint's
// "Start rehearsal" leads to the rehearsal's delivery, which says what it
// is; with the receiver down its 8 attempts pass in about ten minutes and
// the page shows it failed permanently, with each attempt.
func TestPortal_Rehearsal(t *testing.T) {
	clock := &fakeClock{now: time.Now().Truncate(time.Second)}
	ts := startService(t, "", func(c *service.Config) { c.Now = clock.Now })
	acme := ts.newAccount("Acme", "", "B12345674")
	s, _ := statusSink(t, 503)
	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})

	ctx := ts.browsePortal(acme.accountID)
	load(t, ctx, chromedp.Navigate(ts.url+"/portal/endpoints/"+ep.id))
	if text := mainText(t, ctx); !strings.Contains(text, "Rehearse an outage") {
		t.Fatalf("endpoint page: no rehearsal action:\n%s", text)
	}
	load(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/rehearse"] button`)))
	text := mainText(t, ctx)
	if !strings.Contains(text, "outage rehearsal") || !strings.Contains(text, "Outage rehearsal started") {
		t.Errorf("the rehearsal's page: want its badge and notice:\n%s", text)
	}
	deliveryPage := read(t, ctx, chromedp.Location())

	// The receiver stays down: the compressed schedule runs out.
	ds := ts.deliveries(ep, acme.key)
	if len(ds) != 1 || ds[0]["rehearsal"] != true {
		t.Fatalf("deliveries: %v", ds)
	}
	id := str(ds[0]["id"])
	for attempt := 1; attempt <= 8; attempt++ {
		ts.waitFor("the rehearsal's next attempt", 5*time.Second, func() bool { return ts.storeDelivery(id).AttemptCount >= attempt })
		ts.idle()
		if next := ts.storeDelivery(id).NextAttemptAt; !next.IsZero() {
			clock.Set(next)
			ts.svc.Engine.Wake()
		}
	}
	if took := clock.Now().Sub(time.Unix(int64(ds[0]["created"].(float64)), 0)); took > 10*time.Minute {
		t.Errorf("the rehearsal took %s, want at most 10 min", took)
	}
	load(t, ctx, chromedp.Navigate(deliveryPage))
	text = mainText(t, ctx)
	attempts := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('ol.attempts li.attempt').length`))
	if !strings.Contains(text, "Failed permanently") || attempts != 8 || strings.Count(text, "503") < 8 {
		t.Errorf("the rehearsal's page after 8 failed attempts: want failed permanently and eight attempts with a 503, got %d attempts:\n%s", attempts, text)
	}
}

// browsePortal opens, in Chromium, a portal session of the account on this
// service (whatever public URL its links carry) and returns the browser.
func (ts *testService) browsePortal(accountID string) context.Context {
	t := ts.t
	t.Helper()
	var session object
	ts.must(201, "POST", "/v1/accounts/"+accountID+"/portal_sessions", adminKey, nil, &session)
	u, err := url.Parse(str(session["url"]))
	if err != nil {
		t.Fatal(err)
	}
	ctx := browsertest.New(t, 1280, 900)
	if status := load(t, ctx, chromedp.Navigate(ts.url+u.Path)); status != 200 {
		t.Fatalf("opening the portal link: got %d", status)
	}
	return ctx
}
