package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/pgtest"
)

// serveFails runs `webhooks serve` with env, which must exit with an error
// before it serves, and returns what it printed.
func serveFails(t *testing.T, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "serve")
	cmd.Env = append(os.Environ(), append([]string{"WEBHOOKS_TEST_MAIN=1", "WEBHOOKS_ADDR=127.0.0.1:0"}, env...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err == nil || ctx.Err() != nil || strings.Contains(out.String(), "webhooks: serving") {
		t.Fatalf("serve with %v: got %v, want it to refuse to start:\n%s", env, err, out.String())
	}
	return out.String()
}

// portalClient is a browser of the portal: it keeps cookies (by host, so
// one cookie reaches every process on 127.0.0.1) and follows no redirect.
func portalClient(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// openLink opens a portal link's path on p and returns the status.
func openLink(t *testing.T, c *http.Client, p *process, link string) int {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return get(t, c, p.url+u.Path)
}

func get(t *testing.T, c *http.Client, u string) int {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitStatus calls until the answer is want (a process follows a rotation
// at its next read of the keys, within 5 s).
func waitStatus(t *testing.T, what string, want int, call func() int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := call()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: got %d, want %d", what, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCluster_OneAdminKey: processes on one PostgreSQL database share one
// admin key. The first one started without a key makes it; another given
// that key serves the same admin calls and the same portal links; one
// with no key, or another key, refuses to start and says why; and a
// rotation (the new key, and the previous one) moves every running process
// to the new key.
func TestCluster_OneAdminKey(t *testing.T) {
	db := pgtest.SchemaURL(t)
	base := []string{"WEBHOOKS_DATABASE=" + db, "WEBHOOKS_LOG_LEVEL=info"}
	dataA := t.TempDir()
	a := startServe(t, append(base, "WEBHOOKS_DATA="+dataA)...)
	raw, err := os.ReadFile(filepath.Join(dataA, "admin.key"))
	if err != nil {
		t.Fatalf("the first process made no admin key: %v", err)
	}
	key := strings.TrimSpace(string(raw))
	b := startServe(t, append(base, "WEBHOOKS_DATA="+t.TempDir(), "WEBHOOKS_ADMIN_KEY="+key)...)

	// Admin calls and portal links work on both.
	acct := a.api(t, key, "POST", "/v1/accounts", map[string]any{"name": "Cluster"}, 201)
	id := acct["id"].(string)
	b.api(t, key, "GET", "/v1/accounts/"+id, nil, 200)
	linkB := b.api(t, key, "POST", "/v1/accounts/"+id+"/portal_sessions", nil, 201)["url"].(string)
	linkA := a.api(t, key, "POST", "/v1/accounts/"+id+"/portal_sessions", nil, 201)["url"].(string)
	browser := portalClient(t)
	if got := openLink(t, browser, a, linkB); got != http.StatusSeeOther {
		t.Fatalf("a link of the second process, opened on the first: got %d, want 303", got)
	}
	for _, p := range []*process{a, b} {
		if got := get(t, browser, p.url+"/portal/"); got != 200 {
			t.Errorf("%s: the portal with the session the other process opened: got %d, want 200", p.url, got)
		}
	}
	if got := openLink(t, portalClient(t), b, linkA); got != http.StatusSeeOther {
		t.Errorf("a link of the first process, opened on the second: got %d, want 303", got)
	}

	// Without a key, or with another, a process refuses to start.
	dataC := t.TempDir()
	out := serveFails(t, append(base, "WEBHOOKS_DATA="+dataC)...)
	if !strings.Contains(out, "this database already has an admin key") || !strings.Contains(out, "WEBHOOKS_ADMIN_KEY") {
		t.Errorf("serve without a key on a database that has one: got\n%s\nwant it to say the database has a key and to set WEBHOOKS_ADMIN_KEY", out)
	}
	if _, err := os.Stat(filepath.Join(dataC, "admin.key")); err == nil {
		t.Errorf("the refused process left an admin key in its data folder")
	}
	out = serveFails(t, append(base, "WEBHOOKS_DATA="+t.TempDir(), "WEBHOOKS_ADMIN_KEY=fadmin_another")...)
	if !strings.Contains(out, "is not this database's admin key") || !strings.Contains(out, "WEBHOOKS_PREVIOUS_ADMIN_KEY") {
		t.Errorf("serve with another key: got\n%s\nwant it to say the key is not the database's, and how to rotate it", out)
	}
	out = serveFails(t, append(base, "WEBHOOKS_DATA="+t.TempDir(), "WEBHOOKS_ADMIN_KEY=fadmin_new", "WEBHOOKS_PREVIOUS_ADMIN_KEY=fadmin_wrong")...)
	if !strings.Contains(out, "neither is the previous key") {
		t.Errorf("serve rotating from a key that is not the database's: got\n%s", out)
	}
	a.api(t, key, "GET", "/v1/accounts/"+id, nil, 200)

	// A rotation: one process starts with the new key and the previous
	// one; the running processes follow, and the sessions of the previous
	// key end.
	const newKey = "fadmin_rotated-key-of-the-cluster-test"
	c := startServe(t, append(base, "WEBHOOKS_DATA="+t.TempDir(), "WEBHOOKS_ADMIN_KEY="+newKey, "WEBHOOKS_PREVIOUS_ADMIN_KEY="+key)...)
	c.api(t, newKey, "GET", "/v1/accounts/"+id, nil, 200)
	c.api(t, key, "GET", "/v1/accounts/"+id, nil, 401)
	for _, p := range []*process{a, b} {
		waitStatus(t, p.url+": the new key", 200, func() int { return status(t, p, newKey, "/v1/accounts/"+id) })
		if got := status(t, p, key, "/v1/accounts/"+id); got != 401 {
			t.Errorf("%s: the previous key after the rotation: got %d, want 401", p.url, got)
		}
		if got := get(t, browser, p.url+"/portal/"); got != 401 {
			t.Errorf("%s: a session of the previous key: got %d, want 401", p.url, got)
		}
	}
	linkC := c.api(t, newKey, "POST", "/v1/accounts/"+id+"/portal_sessions", nil, 201)["url"].(string)
	if got := openLink(t, portalClient(t), a, linkC); got != http.StatusSeeOther {
		t.Errorf("a link of the rotating process, opened on the first: got %d, want 303", got)
	}
	// A restart with the previous key alone is refused now.
	serveFails(t, append(base, "WEBHOOKS_DATA="+t.TempDir(), "WEBHOOKS_ADMIN_KEY="+key)...)
}

// status makes a GET with key and returns the status.
func status(t *testing.T, p *process, key, path string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", p.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
