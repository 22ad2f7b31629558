package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/factuarea/webhooks/signature"
)

// listener is a `webhooks listen --forward-to` child process.
type listener struct {
	cmd      *exec.Cmd
	mu       sync.Mutex
	out      strings.Builder
	lines    chan string
	exited   chan struct{}
	endpoint string
	secret   string
}

var (
	relayEndpointLine = regexp.MustCompile(`^Relay endpoint (\S+) `)
	relaySecretLine   = regexp.MustCompile(`^Signing secret: (\S+)$`)
)

// startListen starts `webhooks listen` with args and waits until it is
// connected.
func startListen(t *testing.T, args ...string) *listener {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"listen"}, args...)...)
	cmd.Env = append(os.Environ(), "WEBHOOKS_TEST_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l := &listener{cmd: cmd, lines: make(chan string, 1000), exited: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			l.mu.Lock()
			l.out.WriteString(sc.Text() + "\n")
			l.mu.Unlock()
			select {
			case l.lines <- sc.Text():
			default:
			}
		}
		cmd.Wait()
		close(l.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-l.exited
		if t.Failed() {
			t.Logf("output of listen %s:\n%s", strings.Join(args, " "), l.output())
		}
	})
	deadline := time.After(30 * time.Second)
	for {
		select {
		case line := <-l.lines:
			if m := relayEndpointLine.FindStringSubmatch(line); m != nil {
				l.endpoint = m[1]
			}
			if m := relaySecretLine.FindStringSubmatch(line); m != nil {
				l.secret = m[1]
			}
			if strings.HasPrefix(line, "Connected") {
				return l
			}
		case <-l.exited:
			t.Fatalf("listen exited before it connected:\n%s", l.output())
		case <-deadline:
			t.Fatalf("listen did not connect:\n%s", l.output())
		}
	}
}

func (l *listener) output() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out.String()
}

// target is the developer's local receiver: it checks each request's
// signature and counts the arrivals of each delivery.
type target struct {
	*httptest.Server
	mu       sync.Mutex
	secret   string
	arrivals map[string]int // by delivery id
	bad      []string       // what failed the checks
	hold     chan struct{}  // when set, requests wait on it
	held     chan string    // delivery ids of requests waiting
}

func newTarget(t *testing.T) *target {
	tg := &target{arrivals: map[string]int{}, held: make(chan string, 100)}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := r.Header.Get("Factuarea-Delivery-Id")
		tg.mu.Lock()
		if err := signature.Verify(r.Header.Get(signature.HeaderName), body, time.Now(), 0, tg.secret); err != nil {
			tg.bad = append(tg.bad, fmt.Sprintf("%s: %v", id, err))
		}
		if r.Header.Get("Factuarea-Event-Id") == "" || r.Header.Get("Idempotency-Key") != r.Header.Get("Factuarea-Event-Id") ||
			r.Header.Get("Content-Type") != "application/json" || !strings.HasPrefix(r.Header.Get("User-Agent"), "Factuarea-Webhooks/") {
			tg.bad = append(tg.bad, fmt.Sprintf("%s: headers %v", id, r.Header))
		}
		tg.arrivals[id]++
		hold := tg.hold
		tg.mu.Unlock()
		if hold != nil {
			tg.held <- id
			<-hold
		}
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "got "+id)
	}))
	t.Cleanup(tg.Close)
	return tg
}

func (tg *target) distinct() int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return len(tg.arrivals)
}

// relaySetUp makes an account with a key and a company on p.
func relaySetUp(t *testing.T, p *process, adminKey, nif string) (accountID, key, companyID string) {
	t.Helper()
	a := p.api(t, adminKey, "POST", "/v1/accounts", map[string]any{"name": "Dev"}, 201)
	k := p.api(t, adminKey, "POST", "/v1/accounts/"+a["id"].(string)+"/api_keys", nil, 201)
	c := p.api(t, adminKey, "POST", "/v1/companies", map[string]any{"account_id": a["id"], "nif": nif, "name": "Dev SL"}, 201)
	return a["id"].(string), k["key"].(string), c["id"].(string)
}

// attemptsOf returns the attempts of every delivery of the endpoint, by
// delivery id, and each delivery's status.
func attemptsOf(t *testing.T, p *process, key, epPath string) (map[string][]map[string]any, map[string]string) {
	t.Helper()
	attempts, status := map[string][]map[string]any{}, map[string]string{}
	after := ""
	for {
		q := "?limit=100"
		if after != "" {
			q += "&starting_after=" + after
		}
		list := p.api(t, key, "GET", epPath+"/deliveries"+q, nil, 200)
		data := list["data"].([]any)
		for _, d := range data {
			id := d.(map[string]any)["id"].(string)
			detail := p.api(t, key, "GET", epPath+"/deliveries/"+id, nil, 200)
			status[id] = detail["status"].(string)
			for _, a := range detail["attempts"].([]any) {
				attempts[id] = append(attempts[id], a.(map[string]any))
			}
			after = id
		}
		if !list["has_more"].(bool) {
			return attempts, status
		}
	}
}

// TestRelay_KillAndResume runs `webhooks listen --forward-to` against a
// real serve at its default SSRF settings (no network exempted, no plain
// http allowed), with the forward target on loopback over plain http:
// the service never dials it, the listener does. It kills the listener
// with SIGKILL while a delivery is being forwarded, registers more events
// while it is down, and starts it again on the same endpoint: every
// event arrives, signed by the service; every delivery's attempts are
// recorded, relay_not_connected among them; a delivery arrived twice
// only if it has an attempt for each arrival (at least once, never more);
// and a clean exit deletes the endpoint.
func TestRelay_KillAndResume(t *testing.T) {
	const adminKey = "relay-test-admin-key"
	p := startServe(t, "WEBHOOKS_DATABASE="+filepath.Join(t.TempDir(), "webhooks.db"), "WEBHOOKS_ADMIN_KEY="+adminKey,
		"WEBHOOKS_RETRY_SCHEDULE=1s,2s,2s,3s,5s,5s,5s", "WEBHOOKS_LOG_LEVEL=info")
	accountID, key, companyID := relaySetUp(t, p, adminKey, "B12345674")
	tg := newTarget(t)
	args := []string{"--api", p.url, "--key", key, "--company", companyID, "--forward-to", tg.URL + "/webhooks", "--events", "invoice.*"}
	l := startListen(t, args...)
	if l.endpoint == "" || !strings.HasPrefix(l.secret, "whsec_") {
		t.Fatalf("listen printed endpoint %q secret %q, want both:\n%s", l.endpoint, l.secret, l.output())
	}
	tg.mu.Lock()
	tg.secret = l.secret
	tg.mu.Unlock()
	epPath := "/v1/companies/" + companyID + "/webhook_endpoints/" + l.endpoint
	ep := p.api(t, key, "GET", epPath, nil, 200)
	if ep["relay"] != true || ep["url"] != nil {
		t.Fatalf("the endpoint listen made: got relay %v url %v, want true and null", ep["relay"], ep["url"])
	}
	register := func(n int) {
		for i := range n {
			p.api(t, adminKey, "POST", "/v1/events", map[string]any{"type": "invoice.sent", "company_id": companyID,
				"data": map[string]any{"object": map[string]any{"object": "invoice", "n": i}}}, 201)
		}
	}
	register(20)
	waitUntil(t, "the first 20 deliveries arrive", 30*time.Second, func() bool { return tg.distinct() >= 20 })

	// The next delivery is held at the target, and the listener killed
	// while it forwards it.
	hold := make(chan struct{})
	tg.mu.Lock()
	tg.hold = hold
	tg.mu.Unlock()
	register(1)
	select {
	case <-tg.held:
	case <-time.After(30 * time.Second):
		t.Fatal("the held delivery did not reach the target")
	}
	if err := l.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-l.exited
	tg.mu.Lock()
	tg.hold = nil
	tg.mu.Unlock()
	close(hold)
	// While no listener is connected, attempts fail relay_not_connected.
	register(9)
	relayWait(t, "relay_not_connected is recorded", 30*time.Second, func() bool {
		attempts, _ := attemptsOf(t, p, key, epPath)
		for _, as := range attempts {
			for _, a := range as {
				if a["error"] == "relay_not_connected" {
					return true
				}
			}
		}
		return false
	})
	// Those failures count in the endpoint's health like any other.
	if ep := p.api(t, key, "GET", epPath, nil, 200); ep["failing_since"] == nil {
		t.Errorf("after relay_not_connected attempts: failing_since is null, want the episode's start")
	}
	// The killed listener left its endpoint: resume it.
	l2 := startListen(t, append(args, "--endpoint", l.endpoint)...)
	if l2.endpoint != l.endpoint || l2.secret != l.secret {
		t.Fatalf("resumed: got endpoint %s secret %q, want %s and the same secret", l2.endpoint, l2.secret, l.endpoint)
	}
	waitUntil(t, "all 30 deliveries arrive", 60*time.Second, func() bool { return tg.distinct() >= 30 })
	var attempts map[string][]map[string]any
	relayWait(t, "every delivery is delivered", 30*time.Second, func() bool {
		var status map[string]string
		attempts, status = attemptsOf(t, p, key, epPath)
		delivered := 0
		for _, s := range status {
			if s == "delivered" {
				delivered++
			}
		}
		return len(status) == 30 && delivered == 30
	})
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if len(tg.bad) > 0 {
		t.Errorf("requests that failed the receiver's checks: %v", tg.bad)
	}
	notConnected, repeats := 0, 0
	for id, as := range attempts {
		last := as[len(as)-1]
		if last["response_status"] != float64(202) || last["response_body"] != "got "+id || last["error"] != nil {
			t.Errorf("delivery %s: last attempt %v, want the target's 202 and body", id, last)
		}
		for _, a := range as[:len(as)-1] {
			if a["error"] == nil {
				t.Errorf("delivery %s: a failed attempt without an error: %v", id, a)
			}
			if a["error"] == "relay_not_connected" {
				notConnected++
			}
		}
		if n := tg.arrivals[id]; n > len(as) {
			t.Errorf("delivery %s arrived %d times with %d attempts recorded: the relay doubled it", id, n, len(as))
		}
		if tg.arrivals[id] > 1 {
			repeats++
		}
	}
	if len(tg.arrivals) != 30 {
		t.Errorf("the target got %d distinct deliveries, want 30", len(tg.arrivals))
	}
	if notConnected == 0 {
		t.Errorf("no attempt recorded relay_not_connected while the listener was down")
	}
	if repeats > 1 {
		t.Errorf("%d deliveries arrived twice; only the one in flight at the kill may", repeats)
	}
	t.Logf("%d attempts failed relay_not_connected; %d delivery arrived twice (in flight at the kill)", notConnected, repeats)

	// A clean exit deletes the endpoint.
	if err := l2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l2.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("listen did not exit on SIGTERM")
	}
	if code := l2.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("listen exited %d after SIGTERM, want 0", code)
	}
	p.api(t, key, "GET", epPath, nil, 404)
	_ = accountID
}

// relayWait is waitUntil for conditions that read the API: it asks less
// often.
func relayWait(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestRelay_BadFlags: flags that cannot work are refused before anything
// is asked of the service, each with an error that says what to give.
func TestRelay_BadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--forward-to", "ftp://localhost/x", "--api", "http://127.0.0.1:1", "--key", "k", "--company", "c"}, "--forward-to must be an http or https URL"},
		{[]string{"--forward-to", "http://localhost:3000", "--api", "localhost:8080", "--key", "k", "--company", "c"}, "--api must be the service's http or https URL"},
		{[]string{"--forward-to", "http://localhost:3000", "--api", "http://127.0.0.1:1", "--company", "c"}, "--key (or $WEBHOOKS_API_KEY) is required"},
		{[]string{"--forward-to", "http://localhost:3000", "--api", "http://127.0.0.1:1", "--key", "k"}, "give one of --company or --account"},
		{[]string{"--forward-to", "http://localhost:3000", "--api", "http://127.0.0.1:1", "--key", "k", "--company", "c", "--account", "a"}, "give one of --company or --account"},
		{[]string{"--api", "http://127.0.0.1:1", "--key", "k", "--company", "c"}, "--forward-to must be"},
	} {
		t.Setenv("WEBHOOKS_API_KEY", "")
		var out strings.Builder
		err := run(t.Context(), append([]string{"listen"}, tc.args...), &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("listen %v: got %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}

// TestRelay_EndpointDeleted: deleting a relay endpoint while its listen
// runs (from the API, the portal…) ends the connection, and the command
// stops with the service's answer instead of reconnecting for ever.
func TestRelay_EndpointDeleted(t *testing.T) {
	const adminKey = "relay-delete-admin-key"
	p := startServe(t, "WEBHOOKS_DATABASE="+filepath.Join(t.TempDir(), "webhooks.db"), "WEBHOOKS_ADMIN_KEY="+adminKey)
	accountID, key, _ := relaySetUp(t, p, adminKey, "B12345674")
	tg := newTarget(t)
	l := startListen(t, "--api", p.url, "--key", key, "--account", accountID, "--forward-to", tg.URL)
	p.api(t, key, "DELETE", "/v1/accounts/"+accountID+"/webhook_endpoints/"+l.endpoint, nil, 204)
	select {
	case <-l.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("listen goes on after its endpoint was deleted:\n%s", l.output())
	}
	if code := l.cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(l.output(), "not_found") || !strings.Contains(l.output(), "was deleted meanwhile") {
		t.Errorf("listen exited %d, want an error that names the missing endpoint:\n%s", code, l.output())
	}
}
