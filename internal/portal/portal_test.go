package portal_test

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/portal"
	"github.com/factuarea/webhooks/internal/session"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

// t0 is storetest's clock; the portal's now is an hour later.
var t0 = time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// tenant is an account with a company, an account endpoint, a company
// endpoint, and one event delivered to both: failed permanently on the
// company endpoint, pending on the account endpoint.
type tenant struct {
	account           *webhooks.Account
	company           *webhooks.Company
	accountEP, compEP *webhooks.Endpoint
	event             *webhooks.Event
	failed, pending   *webhooks.Delivery
}

type bundle struct {
	store    storetest.Store
	sessions *session.Signer
	clock    *clock
	server   *httptest.Server
	a, b     tenant
}

// migratedSQLite is a SQLite file that Open migrated once for the
// package's tests; each fresh store opens a copy of it (the migrations take
// most of an Open under the race detector).
var migratedSQLite = storetest.NewFileTemplate(sqlite.Migrate)

func setup(t *testing.T) *bundle {
	t.Helper()
	t.Parallel()
	path := filepath.Join(t.TempDir(), "portal.db")
	migratedSQLite.Copy(t, path)
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := &bundle{store: storetest.Stack(t, st), sessions: session.NewSigner("test-admin-key"), clock: &clock{now: t0.Add(time.Hour)}}
	h, err := portal.New(portal.Config{App: b.app(), Sessions: b.sessions, Now: b.clock.Now, AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	b.server = httptest.NewServer(h)
	t.Cleanup(b.server.Close)
	b.a, b.b = newTenant(t, b.store), newTenant(t, b.store)
	return b
}

// app is the use-case layer the portal calls, on the bundle's store and
// clock.
func (b *bundle) app() *app.App {
	return app.New(app.Config{Store: b.store, Registrar: b.store, AllowHTTP: true, Now: b.clock.Now})
}

func newTenant(t *testing.T, st storetest.Store) tenant {
	t.Helper()
	var tn tenant
	tn.account = storetest.MustCreateAccount(t, st, "")
	tn.company = storetest.MustCreateCompany(t, st, tn.account.ID)
	tn.accountEP = storetest.MustCreateEndpoint(t, st, storetest.NewAccountEndpoint(tn.account.ID, nil, "*"))
	tn.compEP = storetest.MustCreateEndpoint(t, st, storetest.NewCompanyEndpoint(tn.company.ID, "invoice.*"))
	tn.event = storetest.NewEvent(t, "invoice.sent", tn.company.ID, t0.Add(time.Minute))
	for _, d := range storetest.MustRegisterEvent(t, st, tn.event) {
		switch d.EndpointID {
		case tn.compEP.ID:
			storetest.MustFailPermanently(t, st, d.ID, t0.Add(2*time.Minute))
			tn.failed = storetest.MustFindDelivery(t, st, d.ID)
		case tn.accountEP.ID:
			tn.pending = d
		}
	}
	if tn.failed == nil || tn.pending == nil {
		t.Fatal("the event did not reach both endpoints")
	}
	return tn
}

// client is a browser: a cookie jar, no redirects followed.
type client struct {
	t    *testing.T
	b    *bundle
	http *http.Client
}

func (b *bundle) anonymous(t *testing.T) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, b: b, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// signIn opens a portal link of the account and returns the client with
// its session cookie.
func (b *bundle) signIn(t *testing.T, accountID string) *client {
	t.Helper()
	c := b.anonymous(t)
	token, _ := b.sessions.Issue(accountID, b.clock.Now())
	resp := c.do("GET", "/portal/sessions/"+token, nil)
	if resp.status != http.StatusSeeOther || resp.header.Get("Location") != "/portal/" {
		t.Fatalf("opening the link: got %d to %q, want 303 to /portal/", resp.status, resp.header.Get("Location"))
	}
	return c
}

type response struct {
	status int
	header http.Header
	body   string
}

func (c *client) do(method, path string, form url.Values) response {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.b.server.URL+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// get fetches a page that must answer want.
func (c *client) get(path string, want int) string {
	c.t.Helper()
	r := c.do("GET", path, nil)
	if r.status != want {
		c.t.Fatalf("GET %s: got %d, want %d\n%s", path, r.status, want, r.body)
	}
	return r.body
}

var csrfPattern = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the form token from a page of the session.
func (c *client) csrf() string {
	c.t.Helper()
	m := csrfPattern.FindStringSubmatch(c.get("/portal/", 200))
	if m == nil {
		c.t.Fatal("no CSRF token on the endpoints page")
	}
	return m[1]
}

// post sends a form with the session's CSRF token.
func (c *client) post(path string, form url.Values) response {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", c.csrf())
	return c.do("POST", path, form)
}

func TestOpenLink(t *testing.T) {
	b := setup(t)
	c := b.anonymous(t)
	token, _ := b.sessions.Issue(b.a.account.ID, b.clock.Now())
	r := c.do("GET", "/portal/sessions/"+token, nil)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/portal/" {
		t.Fatalf("got %d to %q, want 303 to /portal/", r.status, r.header.Get("Location"))
	}
	cookies := (&http.Response{Header: r.header}).Cookies()
	if len(cookies) != 1 {
		t.Fatalf("got %d cookies, want 1", len(cookies))
	}
	ck := cookies[0]
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/portal" || ck.Secure {
		t.Errorf("cookie: got HttpOnly %t SameSite %v Path %q Secure %t, want HttpOnly, Strict, /portal, not Secure on http",
			ck.HttpOnly, ck.SameSite, ck.Path, ck.Secure)
	}
	if ck.MaxAge != 3600 {
		t.Errorf("cookie Max-Age: got %d, want 3600 (the link's hour)", ck.MaxAge)
	}
	if ck.Value == token {
		t.Error("the cookie is the link's token")
	}
	if got := r.header.Get("Referrer-Policy"); got != "no-referrer" {
		t.Errorf("Referrer-Policy: got %q, want no-referrer", got)
	}
	page := c.get("/portal/", 200)
	if !strings.Contains(page, b.a.account.Name) {
		t.Errorf("endpoints page does not name the account %q", b.a.account.Name)
	}
}

func TestOpenLink_Secure(t *testing.T) {
	b := setup(t)
	h, err := portal.New(portal.Config{App: b.app(), Sessions: b.sessions, Now: b.clock.Now, PublicURL: "https://hooks.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	token, _ := b.sessions.Issue(b.a.account.ID, b.clock.Now())
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/portal/sessions/"+token, nil))
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || !cookies[0].Secure {
		t.Errorf("https public URL: got cookies %v, want one Secure cookie", cookies)
	}
}

func TestSession_Refused(t *testing.T) {
	b := setup(t)
	token, _ := b.sessions.Issue(b.a.account.ID, b.clock.Now())
	expired, _ := b.sessions.Issue(b.a.account.ID, b.clock.Now().Add(-time.Hour))
	otherKey, _ := session.NewSigner("another-admin-key").Issue(b.a.account.ID, b.clock.Now())
	// An hour that is over is an expired session; a token this service did
	// not sign as it is (another key's, cut short, changed, the wrong kind)
	// is not valid, which the page says instead of "expired".
	const expiredPage, invalidLink, invalidSession = "Your session has expired", "This link is not valid", "Your session is not valid"
	for _, tc := range []struct{ name, path, cookie, want string }{
		{"no cookie", "/portal/", "", expiredPage},
		{"expired link", "/portal/sessions/" + expired, "", expiredPage},
		{"tampered link", "/portal/sessions/" + token[:len(token)-2] + "AA", "", invalidLink},
		{"link cut short", "/portal/sessions/" + token[:len(token)-10], "", invalidLink},
		{"another admin key's link", "/portal/sessions/" + otherKey, "", invalidLink},
		{"link as cookie", "/portal/", token, invalidSession},
		{"garbage cookie", "/portal/events", "garbage", invalidSession},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := b.anonymous(t)
			if tc.cookie != "" {
				u, _ := url.Parse(b.server.URL + "/portal/")
				c.http.Jar.SetCookies(u, []*http.Cookie{{Name: "portal_session", Value: tc.cookie, Path: "/portal"}})
			}
			body := c.get(tc.path, http.StatusUnauthorized)
			if !strings.Contains(body, tc.want) || !strings.Contains(body, "new link") {
				t.Errorf("the 401 page does not say %q and to ask for a new link:\n%s", tc.want, body)
			}
			for _, other := range []string{expiredPage, invalidLink, invalidSession} {
				if other != tc.want && strings.Contains(body, other) {
					t.Errorf("the 401 page says %q, want %q", other, tc.want)
				}
			}
		})
	}

	// A cookie of a genuine session stops working when its hour is over.
	c := b.signIn(t, b.a.account.ID)
	c.get("/portal/", 200)
	b.clock.Set(b.clock.Now().Add(time.Hour))
	c.get("/portal/", http.StatusUnauthorized)
}

// Every page answers another account's ids exactly as missing ids: 404.
func TestPages_OtherAccount(t *testing.T) {
	b := setup(t)
	c := b.signIn(t, b.a.account.ID)
	own, other := b.a, b.b
	missing := webhooks.NewID()
	pages := func(tn tenant) []string {
		return []string{
			"/portal/endpoints/" + tn.compEP.ID,
			"/portal/endpoints/" + tn.accountEP.ID,
			"/portal/endpoints/" + tn.compEP.ID + "/edit",
			"/portal/endpoints/" + tn.accountEP.ID + "/delete",
			"/portal/endpoints/" + tn.compEP.ID + "/deliveries/" + tn.failed.ID,
			"/portal/endpoints/" + tn.accountEP.ID + "/deliveries/" + tn.pending.ID,
		}
	}
	for _, p := range pages(own) {
		c.get(p, 200)
	}
	notFound := c.get("/portal/endpoints/"+missing, 404)
	for _, p := range append(pages(other),
		"/portal/endpoints/"+missing,
		"/portal/endpoints/not-an-id",
		// Own endpoint, another account's delivery.
		"/portal/endpoints/"+own.compEP.ID+"/deliveries/"+other.failed.ID,
		"/portal/endpoints/"+own.compEP.ID+"/deliveries/"+own.pending.ID,
		"/portal/endpoints/"+other.compEP.ID+"/deliveries/"+other.failed.ID+"/resend",
		"/portal/nothing-here",
	) {
		if body := c.get(p, 404); body != notFound {
			t.Errorf("GET %s: the 404 page differs from a missing endpoint's", p)
		}
	}
	// Lists show the account's objects only.
	for _, p := range []string{"/portal/", "/portal/events", "/portal/endpoints/new"} {
		body := c.get(p, 200)
		for _, id := range []string{other.compEP.ID, other.accountEP.ID, other.event.ID, other.company.ID, other.company.Name} {
			if strings.Contains(body, id) {
				t.Errorf("GET %s shows %s of another account", p, id)
			}
		}
	}
	body := c.get("/portal/events", 200)
	if !strings.Contains(body, own.event.ID) || !strings.Contains(body, own.failed.ID) {
		t.Errorf("the events log does not show the account's event %s and its delivery %s", own.event.ID, own.failed.ID)
	}
}

// Every action on another account's ids answers 404 and changes nothing.
func TestActions_OtherAccount(t *testing.T) {
	b := setup(t)
	c := b.signIn(t, b.a.account.ID)
	other := b.b
	before := storetest.MustFindEndpoint(t, b.store, other.compEP.ID)
	auditBefore := len(storetest.MustListAudit(t, b.store, other.account.ID))
	for _, a := range []struct {
		path string
		form url.Values
	}{
		{"/portal/endpoints/" + other.compEP.ID + "/edit", url.Values{"url": {"https://attacker.example.com"}, "events": {"*"}, "api_version": {webhooks.LatestAPIVersion}}},
		{"/portal/endpoints/" + other.compEP.ID + "/status", url.Values{"status": {"disabled"}}},
		{"/portal/endpoints/" + other.compEP.ID + "/delete", url.Values{"confirm": {"yes"}}},
		{"/portal/endpoints/" + other.compEP.ID + "/rotate", url.Values{"expires_in": {"0"}}},
		{"/portal/endpoints/" + other.compEP.ID + "/reveal", nil},
		{"/portal/endpoints/" + other.compEP.ID + "/test", nil},
		{"/portal/endpoints/" + other.compEP.ID + "/recover", url.Values{"since": {"2026-09-23T09:00"}}},
		{"/portal/endpoints/" + other.compEP.ID + "/deliveries/" + other.failed.ID + "/resend", nil},
		{"/portal/endpoints/" + b.a.compEP.ID + "/deliveries/" + other.failed.ID + "/resend", nil},
		{"/portal/endpoints", url.Values{"owner": {"company:" + other.company.ID}, "url": {"https://x.example.com"}, "events": {"*"}, "livemode": {"1"}}},
	} {
		r := c.post(a.path, a.form)
		want := http.StatusNotFound
		if a.path == "/portal/endpoints" {
			want = http.StatusUnprocessableEntity // the form says: no such company
		}
		if r.status != want {
			t.Errorf("POST %s: got %d, want %d", a.path, r.status, want)
		}
		if strings.Contains(r.body, "whsec_") {
			t.Errorf("POST %s shows a secret", a.path)
		}
	}
	after := storetest.MustFindEndpoint(t, b.store, other.compEP.ID)
	if after.URL != before.URL || after.Status != before.Status || after.Secret != before.Secret {
		t.Errorf("another account's endpoint changed: got %+v, want %+v", after, before)
	}
	if got := storetest.MustFindDelivery(t, b.store, other.failed.ID); got.Status != webhooks.DeliveryFailedPermanently {
		t.Errorf("another account's delivery: got %s, want failed_permanently", got.Status)
	}
	if n := len(storetest.MustListAudit(t, b.store, other.account.ID)); n != auditBefore {
		t.Errorf("another account's audit log: got %d entries, want %d", n, auditBefore)
	}
	if l := storetest.MustListDeliveries(t, b.store, webhooks.DeliveryFilter{EndpointID: other.compEP.ID}); len(l) != 1 {
		t.Errorf("another account's endpoint: got %d deliveries, want 1", len(l))
	}
}

// A form without the session's CSRF token is refused with 403 and
// changes nothing.
func TestCSRF(t *testing.T) {
	b := setup(t)
	c := b.signIn(t, b.a.account.ID)
	other := b.signIn(t, b.a.account.ID) // another session of the same account
	ep := b.a.compEP
	for _, tc := range []struct {
		name string
		csrf string
	}{
		{"missing", ""},
		{"another session's", other.csrf()},
		{"wrong", "AAAA"},
	} {
		form := url.Values{"status": {"disabled"}}
		if tc.csrf != "" {
			form.Set("csrf", tc.csrf)
		}
		r := c.do("POST", "/portal/endpoints/"+ep.ID+"/status", form)
		if r.status != http.StatusForbidden {
			t.Errorf("%s token: got %d, want 403", tc.name, r.status)
		}
		r = c.do("POST", "/portal/endpoints/"+ep.ID+"/deliveries/"+b.a.failed.ID+"/resend", form)
		if r.status != http.StatusForbidden {
			t.Errorf("%s token, resend: got %d, want 403", tc.name, r.status)
		}
	}
	if got := storetest.MustFindEndpoint(t, b.store, ep.ID); got.Status != webhooks.EndpointEnabled {
		t.Errorf("endpoint status after refused forms: got %s, want enabled", got.Status)
	}
	if l := storetest.MustListDeliveries(t, b.store, webhooks.DeliveryFilter{EndpointID: ep.ID}); len(l) != 1 {
		t.Errorf("deliveries after refused resends: got %d, want 1", len(l))
	}
	// A cross-site POST is refused before the token is even looked at.
	req, _ := http.NewRequest("POST", b.server.URL+"/portal/endpoints/"+ep.ID+"/status",
		strings.NewReader(url.Values{"status": {"disabled"}, "csrf": {c.csrf()}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site POST: got %d, want 403", resp.StatusCode)
	}
	// With the token, the same form works.
	r := c.post("/portal/endpoints/"+ep.ID+"/status", url.Values{"status": {"disabled"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("with the token: got %d, want 303", r.status)
	}
	if got := storetest.MustFindEndpoint(t, b.store, ep.ID); got.Status != webhooks.EndpointDisabled {
		t.Errorf("endpoint status: got %s, want disabled", got.Status)
	}
}

// lastAudit returns the account's newest audit entry.
func lastAudit(t *testing.T, b *bundle, accountID string) *webhooks.AuditEntry {
	t.Helper()
	l := storetest.MustListAudit(t, b.store, accountID)
	if len(l) == 0 {
		t.Fatal("no audit entry")
	}
	return l[0]
}

func checkAudit(t *testing.T, e *webhooks.AuditEntry, action, targetID, outcome string) {
	t.Helper()
	if e.Actor.Type != webhooks.ActorPortal || !webhooks.ValidID(e.Actor.ID) || e.Action != action || e.TargetID != targetID || e.Outcome != outcome {
		t.Errorf("audit entry: got %+v, want actor portal with a session id, %s on %s, %s", e, action, targetID, outcome)
	}
}

func TestActions(t *testing.T) {
	b := setup(t)
	c := b.signIn(t, b.a.account.ID)
	a := b.a

	t.Run("resend", func(t *testing.T) {
		// Replay on the company endpoint's failed delivery.
		r := c.post("/portal/endpoints/"+a.compEP.ID+"/deliveries/"+a.failed.ID+"/resend", nil)
		if r.status != http.StatusSeeOther {
			t.Fatalf("replay: got %d, want 303", r.status)
		}
		l := storetest.MustListDeliveries(t, b.store, webhooks.DeliveryFilter{EndpointID: a.compEP.ID})
		if len(l) != 2 || l[0].ReplayOf != a.failed.ID || !strings.Contains(r.header.Get("Location"), l[0].ID) {
			t.Fatalf("replay: got %d deliveries, redirect %q, want a new replay of %s", len(l), r.header.Get("Location"), a.failed.ID)
		}
		// The store audits a replay on the delivery it creates.
		checkAudit(t, lastAudit(t, b, a.account.ID), webhooks.AuditDeliveryReplayed, l[0].ID, webhooks.AuditSucceeded)
		page := c.get(r.header.Get("Location"), 200)
		if !strings.Contains(page, "Replay sent") {
			t.Error("the replay's page has no notice")
		}
		// A pending delivery cannot be sent again: no button, a reason,
		// and a forced POST is refused and audited.
		page = c.get("/portal/endpoints/"+a.accountEP.ID+"/deliveries/"+a.pending.ID, 200)
		if strings.Contains(page, "/resend\"") || !strings.Contains(page, "Only failed deliveries can be sent again") {
			t.Error("a pending delivery's page offers Retry or gives no reason")
		}
		r = c.post("/portal/endpoints/"+a.accountEP.ID+"/deliveries/"+a.pending.ID+"/resend", nil)
		if r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "error=delivery_not_resendable") {
			t.Errorf("retry of a pending delivery: got %d to %q, want a redirect with the error", r.status, r.header.Get("Location"))
		}
		checkAudit(t, lastAudit(t, b, a.account.ID), webhooks.AuditDeliveryRetried, a.pending.ID, webhooks.AuditRefused)
	})

	t.Run("rotate", func(t *testing.T) {
		old := storetest.MustFindEndpoint(t, b.store, a.accountEP.ID).Secret
		r := c.post("/portal/endpoints/"+a.accountEP.ID+"/rotate", url.Values{"expires_in": {"3600"}})
		ep := storetest.MustFindEndpoint(t, b.store, a.accountEP.ID)
		if r.status != 200 || ep.Secret == old || ep.PreviousSecret != old || !shows(r.body, ep.Secret) {
			t.Fatalf("rotate: got %d, new secret shown %t", r.status, shows(r.body, ep.Secret))
		}
		if want := b.clock.Now().Add(time.Hour); !ep.PreviousSecretExpires.Equal(want) {
			t.Errorf("old secret expires: got %s, want %s", ep.PreviousSecretExpires, want)
		}
		if !strings.Contains(r.body, "keeps signing until") || !strings.Contains(r.body, "in 1 h") {
			t.Error("the rotation page does not say when the old secret stops")
		}
		if strings.Contains(r.body, old) {
			t.Error("the rotation page shows the old secret")
		}
		checkAudit(t, lastAudit(t, b, a.account.ID), webhooks.AuditEndpointSecretRotated, ep.ID, webhooks.AuditSucceeded)
		r = c.post("/portal/endpoints/"+a.accountEP.ID+"/rotate", url.Values{"expires_in": {"999999999"}})
		if r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "error=invalid_overlap") {
			t.Errorf("overlap too long: got %d to %q", r.status, r.header.Get("Location"))
		}
	})

	t.Run("reveal", func(t *testing.T) {
		r := c.post("/portal/endpoints/"+a.compEP.ID+"/reveal", nil)
		if r.status != 200 || !shows(r.body, a.compEP.Secret) {
			t.Fatalf("reveal: got %d, secret shown %t", r.status, shows(r.body, a.compEP.Secret))
		}
		if r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("reveal: Cache-Control %q, want no-store", r.header.Get("Cache-Control"))
		}
		checkAudit(t, lastAudit(t, b, a.account.ID), webhooks.AuditEndpointSecretRevealed, a.compEP.ID, webhooks.AuditSucceeded)
		// No page shows a secret otherwise.
		for _, p := range []string{"/portal/", "/portal/endpoints/" + a.compEP.ID, "/portal/endpoints/" + a.compEP.ID + "/edit"} {
			if strings.Contains(c.get(p, 200), "whsec_") {
				t.Errorf("GET %s shows a secret", p)
			}
		}
	})

	t.Run("test event", func(t *testing.T) {
		r := c.post("/portal/endpoints/"+a.compEP.ID+"/test", nil)
		if r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "notice=test_sent") {
			t.Fatalf("test: got %d to %q", r.status, r.header.Get("Location"))
		}
		page := c.get(r.header.Get("Location"), 200)
		if !strings.Contains(page, "ping") || !strings.Contains(page, "Test event sent") {
			t.Error("the test delivery's page does not show the ping and the notice")
		}
		checkAudit(t, lastAudit(t, b, a.account.ID), webhooks.AuditEndpointTestSent, a.compEP.ID, webhooks.AuditSucceeded)
	})

	t.Run("edit", func(t *testing.T) {
		path := "/portal/endpoints/" + a.accountEP.ID + "/edit"
		r := c.post(path, url.Values{"url": {"https://new.example.com/hook"}, "events": {"invoice.sent, account.*"},
			"api_version": {"2025-06-01"}, "description": {"Books"}, "own": {"1"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("edit: got %d, want 303\n%s", r.status, r.body)
		}
		ep := storetest.MustFindEndpoint(t, b.store, a.accountEP.ID)
		if ep.URL != "https://new.example.com/hook" || !slices.Equal(ep.EnabledEvents, []string{"invoice.sent", "account.*"}) ||
			ep.APIVersion != "2025-06-01" || ep.Description != "Books" || !slices.Equal(ep.Relationships, []webhooks.Relationship{"own"}) {
			t.Errorf("edited endpoint: got %+v", ep)
		}
		checkAudit(t, lastAudit(t, b, a.account.ID), webhooks.AuditEndpointUpdated, ep.ID, webhooks.AuditSucceeded)
		// A bad value re-renders the form with the message, and changes
		// nothing.
		r = c.post(path, url.Values{"url": {"https://new.example.com/hook"}, "events": {"Not A Type"}, "api_version": {"2025-06-01"}, "own": {"1"}})
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "is not an event type") {
			t.Errorf("bad events: got %d", r.status)
		}
	})

	t.Run("disable and enable", func(t *testing.T) {
		for _, status := range []string{"disabled", "enabled"} {
			r := c.post("/portal/endpoints/"+a.accountEP.ID+"/status", url.Values{"status": {status}})
			if r.status != http.StatusSeeOther {
				t.Fatalf("%s: got %d", status, r.status)
			}
			if got := storetest.MustFindEndpoint(t, b.store, a.accountEP.ID).Status; got != status {
				t.Errorf("status: got %s, want %s", got, status)
			}
			checkAudit(t, lastAudit(t, b, a.account.ID), "webhook_endpoint."+status, a.accountEP.ID, webhooks.AuditSucceeded)
		}
	})

	t.Run("recover", func(t *testing.T) {
		r := c.post("/portal/endpoints/"+a.accountEP.ID+"/recover", url.Values{"since": {"2026-09-23T09:00"}})
		if r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "notice=recovered") {
			t.Fatalf("recover: got %d to %q", r.status, r.header.Get("Location"))
		}
		if !strings.Contains(c.get(r.header.Get("Location"), 200), "Recover is sending 1 failed delivery again") {
			t.Error("recover: the page does not say how many")
		}
		checkAudit(t, lastAudit(t, b, a.account.ID), webhooks.AuditEndpointRecovered, a.accountEP.ID, webhooks.AuditSucceeded)
		r = c.post("/portal/endpoints/"+a.accountEP.ID+"/recover", url.Values{"since": {"soon"}})
		if !strings.Contains(r.header.Get("Location"), "error=invalid_since") {
			t.Errorf("recover with a bad since: got %q", r.header.Get("Location"))
		}
	})

	t.Run("create", func(t *testing.T) {
		r := c.post("/portal/endpoints", url.Values{"owner": {"company:" + a.company.ID}, "url": {"https://created.example.com/x"},
			"events": {"invoice.paid"}, "api_version": {webhooks.LatestAPIVersion}, "livemode": {"1"}})
		if r.status != http.StatusCreated || !strings.Contains(r.body, "whsec_") {
			t.Fatalf("create: got %d, secret shown %t\n%s", r.status, strings.Contains(r.body, "whsec_"), r.body)
		}
		e := lastAudit(t, b, a.account.ID)
		checkAudit(t, e, webhooks.AuditEndpointCreated, e.TargetID, webhooks.AuditSucceeded)
		ep := storetest.MustFindEndpoint(t, b.store, e.TargetID)
		if ep.Scope != webhooks.ScopeCompany || ep.CompanyID != a.company.ID || !shows(r.body, ep.Secret) {
			t.Errorf("created endpoint: got %+v", ep)
		}
		r = c.post("/portal/endpoints", url.Values{"owner": {"account"}, "url": {"https://created.example.com/y"},
			"events": {"*"}, "api_version": {webhooks.LatestAPIVersion}, "managed": {"1"}})
		if r.status != http.StatusCreated {
			t.Fatalf("create an account endpoint: got %d\n%s", r.status, r.body)
		}
		ep = storetest.MustFindEndpoint(t, b.store, lastAudit(t, b, a.account.ID).TargetID)
		if ep.Scope != webhooks.ScopeAccount || ep.AccountID != a.account.ID || ep.Livemode || !slices.Equal(ep.Relationships, []webhooks.Relationship{"managed"}) {
			t.Errorf("created account endpoint: got %+v", ep)
		}
	})

	t.Run("delete", func(t *testing.T) {
		path := "/portal/endpoints/" + a.compEP.ID + "/delete"
		if body := c.get(path, 200); !strings.Contains(body, "Delete this endpoint?") {
			t.Error("no confirmation step")
		}
		if r := c.post(path, nil); r.status != http.StatusSeeOther || storetest.MustFindEndpoint(t, b.store, a.compEP.ID) == nil {
			t.Fatalf("delete without confirm: got %d", r.status)
		}
		r := c.post(path, url.Values{"confirm": {"yes"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/portal/?notice=deleted" {
			t.Fatalf("delete: got %d to %q", r.status, r.header.Get("Location"))
		}
		if _, err := b.store.FindEndpoint(t.Context(), a.compEP.ID); webhooks.ErrorCode(err) != webhooks.ENOTFOUND {
			t.Errorf("deleted endpoint: got %v, want not found", err)
		}
		checkAudit(t, lastAudit(t, b, a.account.ID), webhooks.AuditEndpointDeleted, a.compEP.ID, webhooks.AuditSucceeded)
	})
}

func TestPages_Content(t *testing.T) {
	b := setup(t)
	c := b.signIn(t, b.a.account.ID)
	a := b.a
	page := c.get("/portal/", 200)
	for _, want := range []string{a.company.Name, a.compEP.URL, a.accountEP.URL, "delivered to endpoint", "<svg", "0 delivered", "1 failed", "1 pending"} {
		if !strings.Contains(page, want) {
			t.Errorf("endpoints page: no %q", want)
		}
	}
	page = c.get("/portal/endpoints/"+a.compEP.ID, 200)
	for _, want := range []string{a.failed.ID, "410", "Failed permanently", "No more automatic attempts: replay or recover by hand"} {
		if !strings.Contains(page, want) {
			t.Errorf("deliveries page: no %q", want)
		}
	}
	page = c.get("/portal/endpoints/"+a.accountEP.ID, 200)
	// The texts say the retry policy: the spec's when none is configured.
	if !strings.Contains(page, "the whole retry schedule, 8 attempts, compressed") {
		t.Error("deliveries page: the rehearsal does not say the schedule's attempts")
	}
	if !strings.Contains(page, "Next attempt: due now") {
		t.Error("deliveries page: the pending delivery's next attempt is not shown")
	}
	if !strings.Contains(c.get("/portal/endpoints/"+a.accountEP.ID+"?status=delivered", 200), "No deliveries in this state") {
		t.Error("the status filter does not filter")
	}
	page = c.get("/portal/endpoints/"+a.compEP.ID+"/deliveries/"+a.failed.ID, 200)
	for _, want := range []string{"Attempt 1", "410", "{&#34;status&#34;:410}", "Factuarea-Signature: t=", "Factuarea-Event-Id: " + a.event.ID,
		"Idempotency-Key: " + a.event.ID, "Factuarea-Delivery-Id: " + a.failed.ID, ">Replay</button>", "250 ms"} {
		if !strings.Contains(page, want) {
			t.Errorf("delivery page: no %q", want)
		}
	}
	if strings.Contains(strings.ToLower(page), "processed") && !strings.Contains(page, "processed it") {
		t.Error("the delivery page says processed")
	}
}

func TestDeliveries_Pagination(t *testing.T) {
	b := setup(t)
	c := b.signIn(t, b.a.account.ID)
	ep := b.a.compEP
	for i := range 30 {
		storetest.MustRegisterEvent(t, b.store, storetest.NewEvent(t, "invoice.created", b.a.company.ID, t0.Add(time.Duration(10+i)*time.Second)))
	}
	page := c.get("/portal/endpoints/"+ep.ID, 200)
	m := regexp.MustCompile(`href="(/portal/endpoints/[^"]+starting_after=[^"]+)" rel="next">Older`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no Older link on a page of 31 deliveries")
	}
	older := c.get(strings.ReplaceAll(m[1], "&amp;", "&"), 200)
	if strings.Count(older, "<tr>") != 1+6 || !strings.Contains(older, ">Newest<") {
		t.Errorf("older page: got %d rows, want 6 and a Newest link", strings.Count(older, "<tr>")-1)
	}
	c.get("/portal/endpoints/"+ep.ID+"?starting_after="+b.b.failed.ID, 404)
}

// A link opened from another site: the browser holds the SameSite=Strict
// cookie back on the redirected request, so the page loads itself again
// from this site, where the cookie is sent.
func TestCrossSiteNavigation(t *testing.T) {
	b := setup(t)
	req, _ := http.NewRequest("GET", b.server.URL+"/portal/events?type=invoice.sent", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Sec-Fetch-Mode", "navigate")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `<meta http-equiv="refresh" content="0; url=/portal/events?type=invoice.sent">`
	if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
		t.Errorf("cross-site navigation without a cookie: got %d, want 200 with %s\n%s", resp.StatusCode, want, body)
	}
	// From this site, without a cookie: the expired-session page.
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("same-origin navigation without a cookie: got %d, want 401", resp.StatusCode)
	}
}

// shows reports whether a page shows text as a reader sees it: the template
// escapes characters such as the "+" of a base64 secret.
func shows(page, text string) bool {
	return strings.Contains(html.UnescapeString(page), text)
}
