package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/browsertest"
	"github.com/factuarea/webhooks/internal/service"
	"github.com/factuarea/webhooks/internal/storetest"
)

// browse runs steps in the browser, failing the test on an error.
func browse(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// read runs one action that returns a value.
func read[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// load runs steps that make the page navigate (a click on a link or a
// button), waits for the new page and returns its HTTP status.
func load(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, steps...)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return resp.Status
}

// mainText is the text of the page's main landmark.
func mainText(t *testing.T, ctx context.Context) string {
	t.Helper()
	return read(t, ctx, chromedp.Text(chromedp.CSS("main")))
}

// waitText reloads the page until its main landmark contains every want.
func waitText(t *testing.T, ctx context.Context, timeout time.Duration, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		text := mainText(t, ctx)
		missing := ""
		for _, w := range want {
			if !strings.Contains(text, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s the page still does not show %q:\n%s", timeout, missing, text)
		}
		time.Sleep(100 * time.Millisecond)
		browse(t, ctx, chromedp.Reload())
	}
}

// startPortalService runs the service as startService does, but listens
// first, so that the portal's links point at the real address.
func startPortalService(t *testing.T) *testService {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testService{t: t, signal: make(chan struct{}, 1), url: "http://" + ln.Addr().String()}
	cfg := service.Config{
		Database:       filepath.Join(t.TempDir(), "webhooks.db"),
		AdminKey:       adminKey,
		AllowNetworks:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		AllowHTTP:      true,
		PublicURL:      ts.url,
		AttemptTimeout: 2 * time.Second,
		ShutdownGrace:  3 * time.Second,
		// A first failure waits 4 minutes, longer than the test: the only
		// later attempts are the ones the test sends by hand.
		Policy: webhooks.RetryPolicy{Waits: []time.Duration{4 * time.Minute, 30 * time.Minute}},
		Recorded: func(rs []*webhooks.AttemptRecord) {
			ts.mu.Lock()
			ts.recorded = append(ts.recorded, rs...)
			ts.mu.Unlock()
			select {
			case ts.signal <- struct{}{}:
			default:
			}
		},
		Looked: ts.looked,
	}
	ts.now = time.Now
	ctx, cancel := context.WithCancel(context.Background())
	svc, err := service.Open(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := svc.Run(ctx, ln); err != nil {
			t.Errorf("service: %v", err)
		}
	}()
	ts.svc = svc
	var once sync.Once
	ts.stop = func() {
		once.Do(func() {
			cancel()
			<-done
			svc.Close()
		})
	}
	t.Cleanup(ts.stop)
	return ts
}

// portalLink asks the API for a portal link of the account.
func (ts *testService) portalLink(accountID string) string {
	ts.t.Helper()
	var out struct {
		Object    string `json:"object"`
		URL       string `json:"url"`
		ExpiresAt int64  `json:"expires_at"`
	}
	ts.must(201, "POST", "/v1/accounts/"+accountID+"/portal_sessions", adminKey, nil, &out)
	if out.Object != "portal_session" || !strings.HasPrefix(out.URL, ts.url+"/portal/sessions/") {
		ts.t.Fatalf("portal session: got %+v, want a portal_session whose url starts with %s/portal/sessions/", out, ts.url)
	}
	if d := time.Until(time.Unix(out.ExpiresAt, 0)); d < 59*time.Minute || d > time.Hour+time.Second {
		ts.t.Errorf("portal session expires in %s, want one hour", d)
	}
	return out.URL
}

// TestPortal_Browser drives the portal in Chromium: open a link, see a
// failed delivery with its response code and next attempt, and its
// endpoint failing; replay it while the receiver still fails (the page
// says how it failed), then, once the receiver answers 200, replay it
// (company endpoint: the original then links to the replay, and asks
// before another) and retry another (account endpoint); rotate a secret,
// and check the access rules and the CSRF protection.
func TestPortal_Browser(t *testing.T) {
	start := time.Now()
	ts := startPortalService(t)
	a := ts.newAccount("Gestoría Ribera", "", storetest.NewNIF())
	b := ts.newAccount("Another Account", "", storetest.NewNIF())

	// The receiver fails until fixed: 500 on the company endpoint (retried
	// on the schedule), 422 on the account endpoint (not retried).
	var fixed atomic.Bool
	sk := newSink(t)
	sk.setRespond(func(n int, w http.ResponseWriter, r *http.Request) {
		switch {
		case fixed.Load():
			io.WriteString(w, `{"received":true}`)
		case r.URL.Path == "/company":
			w.WriteHeader(500)
			io.WriteString(w, `{"error":"database unavailable"}`)
		default:
			w.WriteHeader(422)
			io.WriteString(w, `gone`)
		}
	})
	compEP := ts.newEndpoint("/v1/companies/"+a.companyID, a.key, object{"url": sk.URL + "/company", "enabled_events": []string{"invoice.*"}})
	acctEP := ts.newEndpoint("/v1/accounts/"+a.accountID, a.key, object{"url": sk.URL + "/account", "enabled_events": []string{"*"}})
	otherEP := ts.newEndpoint("/v1/companies/"+b.companyID, b.key, object{"url": sk.URL + "/other", "enabled_events": []string{"*"}})
	ev := ts.registerEvent(object{"type": "invoice.sent", "company_id": a.companyID,
		"data": object{"object": object{"object": "invoice", "id": "inv_0001", "total": "1210.00"}}})
	eventID := ev["id"].(string)
	ts.waitFor("the first attempts", 10*time.Second, func() bool { return ts.attempts() >= 2 })

	// The platform's admin key asks for the link; an account key cannot.
	if got := ts.call("POST", "/v1/accounts/"+a.accountID+"/portal_sessions", a.key, nil, nil); got != 403 {
		t.Errorf("portal session with an account key: got %d, want 403", got)
	}
	link := ts.portalLink(a.accountID)

	ctx := browsertest.New(t, 1280, 900)
	if status := load(t, ctx, chromedp.Navigate(link)); status != 200 {
		t.Fatalf("opening the link: got %d, want 200", status)
	}
	// The token has left the address bar.
	if loc := read(t, ctx, chromedp.Location()); loc != ts.url+"/portal/" {
		t.Errorf("address after opening the link: got %q, want %s/portal/", loc, ts.url)
	}
	text := mainText(t, ctx)
	for _, want := range []string{"Webhook endpoints", "Account endpoints", sk.URL + "/company", sk.URL + "/account", "delivered to endpoint"} {
		if !strings.Contains(text, want) {
			t.Errorf("endpoints page: no %q in:\n%s", want, text)
		}
	}
	// The company endpoint's delivery is being retried: it is failing.
	compCard := read(t, ctx, chromedp.Text(chromedp.CSS(`li.card:has(a[href="/portal/endpoints/`+compEP.id+`"]) .card-stats`)))
	if !strings.Contains(compCard, "0%") || !strings.Contains(compCard, "1 retrying · failing since") {
		t.Errorf("company endpoint's card: got %q, want 0%% and 1 retrying, failing since", compCard)
	}
	// Keyboard: the first Tab reaches the skip link.
	browse(t, ctx, chromedp.KeyEvent("\t"))
	if got := read(t, ctx, chromedp.Evaluate[string](`document.activeElement.textContent`)); got != "Skip to content" {
		t.Errorf("first Tab: focus on %q, want the skip link", got)
	}

	// The company endpoint's failed delivery: response code and next
	// attempt, on the endpoint's page and on the delivery's.
	compPath := "/portal/endpoints/" + compEP.id
	load(t, ctx, chromedp.Click(chromedp.CSS(`a[href="`+compPath+`"]`)))
	text = mainText(t, ctx)
	nextAttempt := regexp.MustCompile(`Next attempt in [34] min`)
	if !strings.Contains(text, "invoice.sent") || !strings.Contains(text, "500") || !nextAttempt.MatchString(text) {
		t.Errorf("deliveries page: want invoice.sent, 500 and the next attempt in 4 min:\n%s", text)
	}
	load(t, ctx, chromedp.Click(chromedp.CSS(`table.list th.ev a`)))
	text = mainText(t, ctx)
	for _, want := range []string{"Attempt 1", "500", `{"error":"database unavailable"}`, eventID, "Replay is not available"} {
		if !strings.Contains(text, want) {
			t.Errorf("delivery page: no %q in:\n%s", want, text)
		}
	}
	if !nextAttempt.MatchString(text) {
		t.Errorf("delivery page: the next attempt is not shown:\n%s", text)
	}
	firstDelivery := strings.TrimPrefix(read(t, ctx, chromedp.Location()), ts.url)

	// A form without its CSRF token is refused and changes nothing.
	browse(t, ctx, chromedp.Navigate(ts.url+compPath))
	browse(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('form[action$="/status"] input[name=csrf]').remove()`))
	if status := load(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/status"] button`))); status != 403 {
		t.Errorf("disable without the CSRF token: got %d, want 403", status)
	}
	if text := mainText(t, ctx); !strings.Contains(text, "This form has expired") {
		t.Errorf("403 page: got %q", text)
	}
	var got object
	ts.must(200, "GET", compEP.path, a.key, nil, &got)
	if got["status"] != "enabled" {
		t.Errorf("endpoint after a form without a token: got %v, want enabled", got["status"])
	}

	// The same from Go, with the browser's session cookie.
	cookies := read(t, ctx, func(ctx context.Context, tg *chromedp.Target) ([]*network.Cookie, error) {
		res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{ts.url + "/portal/"}})
		return res.Cookies, err
	})
	var session *network.Cookie
	for _, c := range cookies {
		if c.Name == "portal_session" {
			session = c
		}
	}
	if session == nil || !session.HTTPOnly || session.SameSite != network.CookieSameSiteStrict || session.Path != "/portal" {
		t.Fatalf("session cookie: got %+v, want HttpOnly, SameSite=Strict, Path=/portal", session)
	}
	for _, form := range []url.Values{{}, {"csrf": {"forged"}}} {
		form.Set("status", "disabled")
		req, _ := http.NewRequest("POST", ts.url+compPath+"/status", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: "portal_session", Value: session.Value})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("POST with csrf %q: got %d, want 403", form.Get("csrf"), resp.StatusCode)
		}
	}
	ts.must(200, "GET", compEP.path, a.key, nil, &got)
	if got["status"] != "enabled" {
		t.Errorf("endpoint after forms without a valid token: got %v, want enabled", got["status"])
	}

	// Another account's endpoint is "not found", as a missing one.
	for _, id := range []string{otherEP.id, webhooks.NewID()} {
		resp := read(t, ctx, chromedp.NavigateResponse(ts.url+"/portal/endpoints/"+id))
		if resp.Status != 404 {
			t.Errorf("endpoint %s: got %d, want 404", id, resp.Status)
		}
		if h := read(t, ctx, chromedp.Text(chromedp.CSS("h1"))); h != "Not found" {
			t.Errorf("endpoint %s: heading %q, want Not found", id, h)
		}
	}

	// Disabling ends the pending delivery failed; enabled again, with the
	// receiver fixed, Replay sends it: a new delivery, the same event.
	browse(t, ctx, chromedp.Navigate(ts.url+compPath))
	load(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/status"] button`)))
	waitText(t, ctx, 5*time.Second, "Endpoint disabled")
	load(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/status"] button`)))
	waitText(t, ctx, 5*time.Second, "Endpoint enabled")
	browse(t, ctx, chromedp.Navigate(ts.url+firstDelivery))
	text = mainText(t, ctx)
	if !strings.Contains(text, "Failed") || !strings.Contains(text, "The endpoint was disabled") {
		t.Errorf("delivery after disabling: want failed, endpoint disabled:\n%s", text)
	}
	// With the receiver still failing, Replay's one attempt fails: the
	// page says how, in the error style, and not "Replay sent" in green.
	before := len(sk.requests())
	load(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/resend"] button`)))
	sk.waitRequests(t, before+1, 10*time.Second)
	text = waitText(t, ctx, 10*time.Second, "Replay attempted: the endpoint answered 500 Internal Server Error.", "Attempt 1")
	if ok, failed := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('.flash-ok, .flash-info').length`)),
		read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('.flash-err').length`)); ok != 0 || failed != 1 || strings.Contains(text, "Replay sent") {
		t.Errorf("failed replay: %d success or info messages and %d errors, want the error alone:\n%s", ok, failed, text)
	}
	fixed.Store(true)
	browse(t, ctx, chromedp.Navigate(ts.url+firstDelivery))
	if text := mainText(t, ctx); !strings.Contains(text, "Replayed: the replay failed too") {
		t.Errorf("original after a failed replay: want it to say so:\n%s", text)
	}
	before = len(sk.requests())
	if status := load(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/resend"] button`))); status != 200 {
		t.Fatalf("Replay: got %d", status)
	}
	reqs := sk.waitRequests(t, before+1, 10*time.Second)
	replayed := reqs[before]
	if replayed.header.Get("Factuarea-Event-Id") != eventID || strings.Contains(firstDelivery, replayed.header.Get("Factuarea-Delivery-Id")) {
		t.Errorf("replay: event %q delivery %q, want event %s in a new delivery", replayed.header.Get("Factuarea-Event-Id"), replayed.header.Get("Factuarea-Delivery-Id"), eventID)
	}
	text = waitText(t, ctx, 10*time.Second, "Replay delivered to your endpoint: the endpoint answered 200 OK.", "Delivered to your endpoint", "Attempt 1", "200")
	if n := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('a[href="`+firstDelivery+`"]').length`)); n != 1 {
		t.Errorf("the replay's page links to its original %d times, want once", n)
	}
	if loc := read(t, ctx, chromedp.Location()); strings.Contains(loc, firstDelivery) {
		t.Errorf("after Replay the page is %s, want the new delivery's", loc)
	}
	if !strings.Contains(text, "reached your system") {
		t.Errorf("delivered page does not explain what 2xx means:\n%s", text)
	}
	delivered := strings.TrimPrefix(read(t, ctx, chromedp.Location()), ts.url)
	delivered = delivered[:strings.Index(delivered, "?")]

	// The original now says it was delivered by replay, and links to it;
	// replaying it again asks first.
	browse(t, ctx, chromedp.Navigate(ts.url+firstDelivery))
	if href := read(t, ctx, chromedp.Evaluate[string](`document.querySelector('a.replayed')?.getAttribute('href') ?? ''`)); href != delivered {
		t.Errorf("original after a delivered replay: link to %q, want %q", href, delivered)
	}
	if n := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('form[action$="/resend"]').length`)); n != 0 {
		t.Errorf("original after a delivered replay: %d forms replay it at once, want none", n)
	}
	load(t, ctx, chromedp.Click(chromedp.CSS(`a[href="`+firstDelivery+`/resend"]`)))
	if h := read(t, ctx, chromedp.Text(chromedp.CSS("h1"))); h != "Replay this event again?" {
		t.Errorf("Replay again…: heading %q, want the question", h)
	}
	before = len(sk.requests())
	load(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/resend"] button`)))
	if reqs := sk.waitRequests(t, before+1, 10*time.Second); reqs[before].header.Get("Factuarea-Event-Id") != eventID {
		t.Errorf("confirmed replay: got event %q, want %s", reqs[before].header.Get("Factuarea-Event-Id"), eventID)
	}
	waitText(t, ctx, 10*time.Second, "Replay delivered to your endpoint")

	// The account endpoint's 422 ended its delivery; Retry sends the same
	// delivery again and its second attempt appears.
	acctPath := "/portal/endpoints/" + acctEP.id
	browse(t, ctx, chromedp.Navigate(ts.url+acctPath))
	if text := mainText(t, ctx); !strings.Contains(text, "422") || !strings.Contains(text, "Failed permanently") ||
		!strings.Contains(text, "No more automatic attempts: retry or recover by hand") {
		t.Errorf("account endpoint page: want 422, failed permanently, what next:\n%s", text)
	}
	load(t, ctx, chromedp.Click(chromedp.CSS(`table.list th.ev a`)))
	retried := strings.TrimPrefix(read(t, ctx, chromedp.Location()), ts.url)
	before = len(sk.requests())
	load(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/resend"] button`)))
	reqs = sk.waitRequests(t, before+1, 10*time.Second)
	if p := reqs[before]; p.header.Get("Factuarea-Event-Id") != eventID || !strings.Contains(retried, p.header.Get("Factuarea-Delivery-Id")) {
		t.Errorf("retry: got event %q delivery %q, want event %s, delivery of %s", p.header.Get("Factuarea-Event-Id"), p.header.Get("Factuarea-Delivery-Id"), eventID, retried)
	}
	waitText(t, ctx, 10*time.Second, "Retry delivered to your endpoint", "Attempt 2", "Delivered to your endpoint", "sent by hand")
	if loc := strings.TrimPrefix(read(t, ctx, chromedp.Location()), ts.url); !strings.HasPrefix(loc, retried) {
		t.Errorf("after Retry the page is %s, want the same delivery %s", loc, retried)
	}

	// Rotate the secret with a one-hour overlap: the new secret is shown,
	// with when the old one stops.
	browse(t, ctx, chromedp.Navigate(ts.url+compPath))
	browse(t, ctx, chromedp.SetValue(chromedp.ID("expires_in"), "3600"))
	load(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/rotate"] button`)))
	secret := read(t, ctx, chromedp.Value(chromedp.ID("secret")))
	var api struct {
		Secret string `json:"secret"`
	}
	ts.must(200, "GET", compEP.path+"/secret", a.key, nil, &api)
	if secret != api.Secret || secret == compEP.secret || !strings.HasPrefix(secret, "whsec_") {
		t.Errorf("rotated secret: page %q, API %q, old %q", secret, api.Secret, compEP.secret)
	}
	if text := read(t, ctx, chromedp.Text(chromedp.ID("old-secret"))); !strings.Contains(text, "The old secret keeps signing until") || !strings.Contains(text, "in 1 h") {
		t.Errorf("rotation: the old secret's end is not shown: %q", text)
	}

	// Every change was audited with the portal session as actor.
	var audit struct {
		Data []struct {
			Actor  struct{ Type, ID string } `json:"actor"`
			Action string                    `json:"action"`
		} `json:"data"`
	}
	ts.must(200, "GET", "/v1/accounts/"+a.accountID+"/audit_log?limit=100", a.key, nil, &audit)
	portalActions := map[string]bool{}
	for _, e := range audit.Data {
		if e.Actor.Type == "portal" && webhooks.ValidID(e.Actor.ID) {
			portalActions[e.Action] = true
		}
	}
	for _, want := range []string{"webhook_endpoint.disabled", "webhook_endpoint.enabled", "webhook_delivery.replayed", "webhook_delivery.retried", "webhook_endpoint.secret_rotated"} {
		if !portalActions[want] {
			t.Errorf("audit log: no %s by the portal (got %v)", want, portalActions)
		}
	}

	// The events log shows the event and its deliveries.
	load(t, ctx, chromedp.Click(chromedp.CSS(`nav a[href="/portal/events"]`)))
	text = mainText(t, ctx)
	if !strings.Contains(text, eventID) || strings.Count(text, "Delivered to your endpoint") < 2 {
		t.Errorf("events log: want the event and its delivered copies:\n%s", text)
	}
	t.Logf("browser test ran in %s", time.Since(start).Round(time.Millisecond))
}

// TestPortal_ExpiredLink: a tampered link, and the portal without a
// session, show the page that says to ask for a new link: the tampered
// one says it is not valid, the other that the session expired.
func TestPortal_ExpiredLink(t *testing.T) {
	ts := startPortalService(t)
	a := ts.newAccount("Expired", "", "")
	if got := ts.call("POST", "/v1/accounts/"+webhooks.NewID()+"/portal_sessions", adminKey, nil, nil); got != 404 {
		t.Errorf("portal session of a missing account: got %d, want 404", got)
	}
	link := ts.portalLink(a.accountID)
	ctx := browsertest.New(t, 800, 600)
	tampered := link[:len(link)-3] + "AAA"
	if tampered == link {
		tampered = link[:len(link)-3] + "BBB"
	}
	for u, want := range map[string]string{tampered: "This link is not valid", ts.url + "/portal/": "Your session has expired"} {
		resp := read(t, ctx, chromedp.NavigateResponse(u))
		if resp.Status != 401 {
			t.Errorf("%s: got %d, want 401", u, resp.Status)
		}
		if text := mainText(t, ctx); !strings.Contains(text, want) || !strings.Contains(text, "new link") {
			t.Errorf("%s: got %q, want %q and to ask for a new link", u, text, want)
		}
	}
}
