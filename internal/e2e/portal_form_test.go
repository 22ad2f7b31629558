package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// portalClient is a browser without JavaScript: a cookie jar, and forms
// posted with the CSRF token of the page they are on.
type portalClient struct {
	t    *testing.T
	base string
	http *http.Client
}

// openPortal opens a portal link of the account.
func (ts *testService) openPortal(accountID string) *portalClient {
	ts.t.Helper()
	return ts.openLink(ts.portalLink(accountID))
}

// openLink opens a portal link's path on ts (whatever public URL the link
// names) in a client that keeps the session's cookie.
func (ts *testService) openLink(link string) *portalClient {
	ts.t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		ts.t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &portalClient{t: ts.t, base: ts.url, http: &http.Client{Jar: jar}}
	if status, body := c.get(u.Path); status != http.StatusOK {
		ts.t.Fatalf("opening the portal link: got %d %s", status, clip([]byte(body)))
	}
	return c
}

func (c *portalClient) get(path string) (int, string) {
	c.t.Helper()
	resp, err := c.http.Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// post sends a form to path with the CSRF token of the page at from, as
// the browser does from that page; the answer is the page after any
// redirect.
func (c *portalClient) post(from, path string, form url.Values) (int, string) {
	c.t.Helper()
	_, page := c.get(from)
	m := csrfInput.FindStringSubmatch(page)
	if m == nil {
		c.t.Fatalf("GET %s: no CSRF token on the page", from)
	}
	form.Set("csrf", m[1])
	req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.base)
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestPortal_RefusalsAudited: a change the portal refuses is in the audit
// log with its error code, as the same change refused through the API is.
// The portal used to record only the changes it made.
func TestPortal_RefusalsAudited(t *testing.T) {
	ts := startPortalService(t)
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	ep := ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": s.URL, "enabled_events": []string{"*"}})
	c := ts.openPortal(acme.accountID)
	page := "/portal/endpoints/" + ep.id
	status, body := c.post(page+"/edit", page+"/edit", url.Values{"url": {"ftp://files.example.com/hooks"}, "events": {"*"},
		"api_version": {"2026-09-23"}, "own": {"on"}, "managed": {"on"}})
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "http") {
		t.Errorf("edit with an ftp URL: got %d, want 422 and the form saying why", status)
	}
	if status, _ := c.post(page, page+"/rotate", url.Values{"expires_in": {"99999999"}}); status != http.StatusOK {
		t.Errorf("rotation with a 3-year overlap: got %d, want the page again", status)
	}
	var l struct{ Data []object }
	ts.must(200, "GET", "/v1/accounts/"+acme.accountID+"/audit_log", acme.key, nil, &l)
	refused := map[string]string{}
	for _, e := range l.Data {
		actor, _ := e["actor"].(map[string]any)
		if e["outcome"] == "refused" && actor["type"] == "portal" {
			refused[str(e["action"])] = str(e["error_code"])
		}
	}
	for action, code := range map[string]string{"webhook_endpoint.updated": "url_not_allowed", "webhook_endpoint.secret_rotated": "invalid_request"} {
		if got, ok := refused[action]; !ok || (got != code && !(action == "webhook_endpoint.updated" && got == "invalid_request")) {
			t.Errorf("audit log: refused %s by the portal: got %q (found %t), want %s; log %v", action, got, ok, code, l.Data)
		}
	}
}

// TestPortal_AllOfAnAccount: the portal shows every endpoint and company of
// an account, and counts every delivery of the last 24 hours. It used to
// stop silently at 100 endpoints per owner, 500 companies and 500
// deliveries per endpoint.
func TestPortal_AllOfAnAccount(t *testing.T) {
	ts := startPortalService(t)
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	account := "/v1/accounts/" + acme.accountID
	var first endpoint
	for i := range 101 {
		ep := ts.newEndpoint(account, acme.key, object{"url": fmt.Sprintf("%s/hook-%03d", s.URL, i), "enabled_events": []string{"invoice.paid"}})
		if i == 0 {
			first = ep
		}
	}
	ts.must(200, "PATCH", first.path, acme.key, object{"enabled_events": []string{"invoice.sent"}}, nil)
	for i := range 500 {
		ts.must(201, "POST", "/v1/companies", adminKey, object{"account_id": acme.accountID, "nif": nifs(), "name": fmt.Sprintf("Client %03d SL", i)}, nil)
	}
	for range 501 {
		ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": object{"object": "invoice"}}})
	}
	s.waitRequests(t, 501, 30*time.Second)
	ts.waitFor("501 deliveries delivered", 10*time.Second, func() bool {
		return countDeliveries(ts, first, acme.key, "delivered") == 501
	})

	c := ts.openPortal(acme.accountID)
	_, page := c.get("/portal/")
	if n := len(endpointLink.FindAllString(page, -1)); n < 101 {
		t.Errorf("endpoints page: %d links to endpoints, want the 101", n)
	}
	if !strings.Contains(page, "Client 499 SL") {
		t.Errorf("endpoints page: the 501st company is missing")
	}
	if !strings.Contains(page, "Last 24 hours: 501 delivered to the endpoint") {
		t.Errorf("endpoints page: the first endpoint's figures do not count its 501 deliveries")
	}
	_, form := c.get("/portal/endpoints/new")
	if n := strings.Count(form, `value="company:`); n != 501 {
		t.Errorf("new endpoint form: %d companies to choose from, want 501", n)
	}
}

var endpointLink = regexp.MustCompile(`href="/portal/endpoints/[0-9a-f]{8}-[0-9a-f-]{27}"`)

// countDeliveries counts ep's deliveries in status, paging through the
// history.
func countDeliveries(ts *testService, ep endpoint, key, status string) int {
	ts.t.Helper()
	n, after := 0, ""
	for {
		var l struct {
			Data    []object
			HasMore bool `json:"has_more"`
		}
		path := ep.path + "/deliveries?status=" + status + "&limit=100"
		if after != "" {
			path += "&starting_after=" + after
		}
		ts.must(200, "GET", path, key, nil, &l)
		n += len(l.Data)
		if !l.HasMore || len(l.Data) == 0 {
			return n
		}
		after = str(l.Data[len(l.Data)-1]["id"])
	}
}
