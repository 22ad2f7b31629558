package portal_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/browsertest"
	"github.com/factuarea/webhooks/internal/portal"
	"github.com/factuarea/webhooks/internal/session"
	"github.com/factuarea/webhooks/internal/storetest"
)

// TestBrowser_Health opens the demo account in Chromium as its user would
// at 3 a.m.: the firm's receiver refuses connections since 80 minutes ago,
// a company's answers 503 since three and a half hours, and the bakery's
// refused invoice was replayed and delivered. The pages say so.
func TestBrowser_Health(t *testing.T) {
	d := newDemo(t)
	sessions := session.NewSigner("demo-admin-key")
	now := func() time.Time { return demoNow }
	h, err := portal.New(portal.Config{App: app.New(app.Config{Store: d.store, Now: now}), Sessions: sessions, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	token, _ := sessions.Issue(d.account.ID, demoNow)
	ctx := browsertest.New(t, 1280, 900)
	do(t, ctx, chromedp.Navigate(srv.URL+"/portal/sessions/"+token))

	// The endpoints page: the firm's endpoint is failing, not "100 %".
	firmCard := text(t, ctx, `li.card:has(a[href="/portal/endpoints/`+d.firm.ID+`"]) .card-stats`)
	for _, want := range []string{"94.4%", "4 retrying · failing since 1 h 19 min ago", "68 delivered", "0 failed", "0 pending"} {
		if !strings.Contains(firmCard, want) {
			t.Errorf("firm's card: no %q in %q", want, firmCard)
		}
	}
	if strings.Contains(firmCard, "100%") {
		t.Errorf("firm's card says 100%%: %q", firmCard)
	}
	if card := text(t, ctx, `li.card:has(a[href="/portal/endpoints/`+d.workshop.ID+`"]) .card-stats`); !strings.Contains(card, "4 retrying · failing since") {
		t.Errorf("workshop's card: got %q, want 4 retrying and since when it fails", card)
	}
	if card := text(t, ctx, `li.card:has(a[href="/portal/endpoints/`+d.bakery.ID+`"]) .card-stats`); strings.Contains(card, "failing") {
		t.Errorf("bakery's card: got %q, want it not failing", card)
	}

	// The firm's page: since when, and why each retry got no answer.
	load(t, ctx, chromedp.Click(chromedp.CSS(`a[href="/portal/endpoints/`+d.firm.ID+`"]`)))
	if got := text(t, ctx, ".health-callout"); !strings.Contains(got, "Failing since 14 Oct 2026, 09:11:30 UTC (1 h 19 min ago).") ||
		!strings.Contains(got, "4 deliveries of the last 24 hours are being retried on the schedule.") {
		t.Errorf("firm's page: callout %q", got)
	}
	rows := text(t, ctx, "table.list tbody")
	if n := strings.Count(rows, "connection refused"); n != 4 {
		t.Errorf("firm's page: %d rows say connection refused, want 4", n)
	}
	if n := strings.Count(rows, "Retrying"); n != 4 {
		t.Errorf("firm's page: %d rows say Retrying, want 4", n)
	}

	// The bakery's refused invoice: replayed and delivered, with a link;
	// replaying it again asks first.
	original := "/portal/endpoints/" + d.bakery.ID + "/deliveries/" + d.refused.ID
	do(t, ctx, chromedp.Navigate(srv.URL+original))
	lede := text(t, ctx, ".page-head .lede")
	if !strings.Contains(lede, "Failed permanently") || !strings.Contains(lede, "Replayed: delivered to your endpoint") {
		t.Errorf("original's page: got %q, want failed permanently and replayed, delivered", lede)
	}
	if n := count(t, ctx, `form[action$="/resend"]`); n != 0 {
		t.Errorf("original's page: %d forms replay it at once, want none", n)
	}
	if count(t, ctx, "a.replayed") != 1 || count(t, ctx, `a[href="`+original+`/resend"]`) != 1 {
		t.Fatal("original's page: no link to the replay, or none to Replay again…")
	}
	load(t, ctx, chromedp.Click(chromedp.CSS("a.replayed")))
	if got := text(t, ctx, ".page-head .lede"); !strings.Contains(got, "Delivered to your endpoint") {
		t.Errorf("the replay's page: got %q, want delivered", got)
	}
	do(t, ctx, chromedp.Navigate(srv.URL+original))
	load(t, ctx, chromedp.Click(chromedp.CSS(`a[href="`+original+`/resend"]`)))
	if got := text(t, ctx, "h1"); got != "Replay this event again?" {
		t.Fatalf("Replay again…: got %q, want the question", got)
	}
	before := replays(t, d)
	load(t, ctx, chromedp.Click(chromedp.CSS("a.btn-quiet")))
	if got := replays(t, d); got != before {
		t.Errorf("declining replayed it: %d replays, want %d", got, before)
	}
	load(t, ctx, chromedp.Click(chromedp.CSS(`a[href="`+original+`/resend"]`)))
	load(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/resend"] button`)))
	if got := replays(t, d); got != before+1 {
		t.Errorf("confirming: %d replays, want %d", got, before+1)
	}
	// No engine here: the replay waits for its attempt, which the page
	// says in the style of what is under way.
	if got := text(t, ctx, ".flash"); !strings.HasPrefix(got, "Replay sent:") || count(t, ctx, ".flash-info") != 1 {
		t.Errorf("after confirming: flash %q, want the info that it is under way", got)
	}
}

// load runs steps that make the page navigate (a click on a link or a
// button) and waits for the new page.
func load(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if _, err := chromedp.RunResponse(ctx, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// text is the visible text of the first element sel matches, empty if
// none does (a query would wait for one to appear).
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(`+"`"+sel+"`"+`)?.innerText ?? ""`))
	if err != nil {
		t.Fatalf("browser: text of %s: %v", sel, err)
	}
	return strings.Join(strings.Fields(s), " ")
}

func count(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+"`"+sel+"`"+`).length`))
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return n
}

// replays counts the replays of the bakery's refused invoice.
func replays(t *testing.T, d *demo) int {
	t.Helper()
	n := 0
	for _, dl := range storetest.MustListDeliveries(t, d.store, webhooks.DeliveryFilter{EndpointID: d.bakery.ID, EventID: d.refused.EventID}) {
		if dl.ReplayOf == d.refused.ID {
			n++
		}
	}
	return n
}
