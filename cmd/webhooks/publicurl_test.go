package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDefaultPublicURL: without WEBHOOKS_PUBLIC_URL, links point at the
// port the service listens on, and at the host -addr names, or localhost.
func TestDefaultPublicURL(t *testing.T) {
	for addr, want := range map[string]string{
		":8090":            "http://localhost:8090",
		"0.0.0.0:8090":     "http://localhost:8090",
		"[::]:8090":        "http://localhost:8090",
		"127.0.0.1:8090":   "http://127.0.0.1:8090",
		"[::1]:8090":       "http://[::1]:8090",
		"hooks.lan:8090":   "http://hooks.lan:8090",
		"localhost:8080":   "http://localhost:8080",
		"10.0.0.7:8080":    "http://10.0.0.7:8080",
		"[fe80::1%2]:8080": "http://[fe80::1%252]:8080",
	} {
		_, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		bound := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p}
		got := defaultPublicURL(addr, bound)
		if got != want {
			t.Errorf("-addr %s: got %s, want %s", addr, got, want)
		}
		// The service must take it as its public URL.
		if u, err := url.Parse(got); err != nil || u.Scheme != "http" || u.Host == "" {
			t.Errorf("-addr %s: %s is not a URL the service takes: %v", addr, got, err)
		}
	}
	// Port 0: the port bound.
	if got := defaultPublicURL(":0", &net.TCPAddr{Port: 43210}); got != "http://localhost:43210" {
		t.Errorf("-addr :0 bound at 43210: got %s", got)
	}
}

// syncBuffer is a log destination the test reads while serve writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveInProcess runs `webhooks serve` with args and env in this process
// until the test ends, and returns its base URL, its data folder and its
// logs.
func serveInProcess(t *testing.T, env map[string]string, args ...string) (string, string, *syncBuffer) {
	t.Helper()
	data := t.TempDir()
	logs := &syncBuffer{}
	addr := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cmd := &ServeCommand{Out: &syncBuffer{}, Stderr: logs, Getenv: func(k string) string { return env[k] },
		Listening: func(a string) { addr <- a }}
	go func() { done <- cmd.Run(ctx, append([]string{"-data", data}, args...)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case a := <-addr:
		return "http://" + a, data, logs
	case err := <-done:
		t.Fatalf("serve: %v\n%s", err, logs)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start:\n%s", logs)
	}
	return "", "", nil
}

// TestServe_PublicURLFollowsAddress: started with -addr and no public URL,
// the service hands out portal links on the address it listens on, which
// open; its start-up line says where it listens and is reached, on which
// store, and which security settings are relaxed.
func TestServe_PublicURLFollowsAddress(t *testing.T) {
	base, data, logs := serveInProcess(t, nil, "-addr", "localhost:0")
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	raw, err := os.ReadFile(filepath.Join(data, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	p := &process{url: base}
	key := strings.TrimSpace(string(raw))
	id := p.api(t, key, "POST", "/v1/accounts", map[string]any{"name": "Acme"}, 201)["id"].(string)
	link := p.api(t, key, "POST", "/v1/accounts/"+id+"/portal_sessions", nil, 201)["url"].(string)
	if want := "http://localhost:" + port + "/portal/sessions/"; !strings.HasPrefix(link, want) {
		t.Fatalf("portal link: got %s, want it on the address serve listens on, %s…", link, want)
	}
	c := portalClient(t)
	if got := get(t, c, link); got != http.StatusSeeOther {
		t.Errorf("GET %s: got %d, want 303 to the portal", link, got)
	}
	if got := get(t, c, "http://localhost:"+port+"/portal/"); got != 200 {
		t.Errorf("the portal after the link: got %d, want 200", got)
	}

	line := startupLine(t, logs.String())
	for _, want := range []string{"addr=127.0.0.1:" + port, "public_url=http://localhost:" + port, "store=sqlite", "database=" + filepath.Join(data, "webhooks.db"), "version="} {
		if !strings.Contains(line, want) {
			t.Errorf("start-up line %q: no %s", line, want)
		}
	}
	for _, relaxed := range []string{"allow_http", "allow_networks"} {
		if strings.Contains(line, relaxed) {
			t.Errorf("start-up line %q names %s, which is not relaxed", line, relaxed)
		}
	}

	// Relaxed settings are named; a public URL given is used as it is.
	_, _, logs = serveInProcess(t, map[string]string{"WEBHOOKS_ALLOW_HTTP": "true", "WEBHOOKS_ALLOW_NETWORKS": "127.0.0.0/8,::1/128"},
		"-addr", "127.0.0.1:0", "-public-url", "https://hooks.example.com")
	line = startupLine(t, logs.String())
	for _, want := range []string{"public_url=https://hooks.example.com", "allow_http=true", `allow_networks=127.0.0.0/8,::1/128`} {
		if !strings.Contains(line, want) {
			t.Errorf("start-up line %q: no %s", line, want)
		}
	}
}

// startupLine returns serve's one start-up line.
func startupLine(t *testing.T, logs string) string {
	t.Helper()
	var found []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, `msg="webhooks: serving"`) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("got %d start-up lines, want 1:\n%s", len(found), logs)
	}
	return found[0]
}
