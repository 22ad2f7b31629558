package e2e

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// openLinkOn opens a portal link's path on ts, without following the
// redirect, and returns the status and the page.
func openLinkOn(t *testing.T, ts *testService, link string) (int, string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(ts.url + u.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestPortal_LinkRefused: a portal link another service signed (another
// database: another portal key) is refused as not valid, and one whose
// hour is over as expired; each page says which, through HTTP.
func TestPortal_LinkRefused(t *testing.T) {
	clock, opt := stepClock(time.Now())
	a := startService(t, "", opt)
	b := startService(t, "")
	acct := a.newAccount("Acme", "", "")
	var out struct {
		URL string `json:"url"`
	}
	a.must(201, "POST", "/v1/accounts/"+acct.accountID+"/portal_sessions", adminKey, nil, &out)

	if status, _ := openLinkOn(t, a, out.URL); status != http.StatusSeeOther {
		t.Fatalf("the link on the service that signed it: got %d, want 303", status)
	}
	status, page := openLinkOn(t, b, out.URL)
	if status != http.StatusUnauthorized || !strings.Contains(page, "This link is not valid") || strings.Contains(page, "expired") {
		t.Errorf("another service's link: got %d, want 401 saying the link is not valid, not that it expired:\n%s", status, page)
	}
	clock.Set(clock.Now().Add(time.Hour))
	status, page = openLinkOn(t, a, out.URL)
	if status != http.StatusUnauthorized || !strings.Contains(page, "Your session has expired") || strings.Contains(page, "not valid") {
		t.Errorf("a link whose hour is over: got %d, want 401 saying it expired:\n%s", status, page)
	}
}
