package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/service"
)

// syncBuffer is a buffer the service's goroutines may log to at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestLogHygiene runs a full scenario with the service logging at Debug
// level, and checks that no line holds a secret, an API key, the admin
// key, a payload, a response body, or a password or token of an endpoint
// URL.
func TestLogHygiene(t *testing.T) {
	logs := &syncBuffer{}
	var lookups atomic.Int32
	ts := startService(t, "", func(c *service.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c.Lookup = func(ctx context.Context, network, host string) ([]netip.Addr, error) {
			if host == "metadata.example" {
				if lookups.Add(1) == 1 {
					return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
				}
				return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
	})
	never := []string{adminKey, "whsec_"} // what must not appear in any line

	acme := ts.newAccount("Acme", "", "B12345674")
	var spare object
	ts.must(201, "POST", "/v1/accounts/"+acme.accountID+"/api_keys", adminKey, nil, &spare)
	never = append(never, acme.key, str(spare["key"]))

	respond := func(status int, body string) func(int, http.ResponseWriter, *http.Request) {
		never = append(never, body)
		return func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	ok, failing, rejecting := newSink(t), newSink(t), newSink(t)
	ok.setRespond(respond(200, "SINK-OK-BODY-7777"))
	failing.setRespond(respond(503, "SINK-FAIL-BODY-8888"))
	rejecting.setRespond(respond(400, "SINK-REJECT-BODY-9999"))
	const urlToken = "URL-TOKEN-5150"
	never = append(never, urlToken)
	cp, ap := "/v1/companies/"+acme.companyID, "/v1/accounts/"+acme.accountID
	eps := []endpoint{
		ts.newEndpoint(cp, acme.key, object{"url": ok.URL + "/hook?token=" + urlToken, "enabled_events": []string{"*"}}),
		ts.newEndpoint(cp, acme.key, object{"url": rejecting.URL + "/hook?token=" + urlToken, "enabled_events": []string{"*"}}),
		ts.newEndpoint(ap, acme.key, object{"url": failing.URL + "/hook?token=" + urlToken, "enabled_events": []string{"*"}}),
		ts.newEndpoint(ap, acme.key, object{"url": rejecting.URL + "/hook?token=" + urlToken, "enabled_events": []string{"*"}}),
		ts.newEndpoint(cp, acme.key, object{"url": "http://metadata.example/hook?token=" + urlToken, "enabled_events": []string{"*"}}),
	}
	for _, ep := range eps {
		never = append(never, ep.secret)
	}
	var rotated object
	ts.must(200, "POST", eps[0].path+"/rotate_secret", acme.key, object{"expires_in": 3600}, &rotated)
	never = append(never, str(rotated["secret"]))
	var revealed object
	ts.must(200, "GET", eps[1].path+"/secret", acme.key, nil, &revealed)

	payload := object{
		"object": "invoice", "id": "in_PAYLOAD-ID-1111", "number": "PAYLOAD-NUMBER-2222", "total": "31337.00",
		"customer": object{"email": "payload-person@example.com", "name": "PAYLOAD-NAME-3333"},
	}
	never = append(never, "PAYLOAD-ID-1111", "PAYLOAD-NUMBER-2222", "31337.00", "payload-person@example.com", "PAYLOAD-NAME-3333")
	ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "correlation_id": "op-42", "data": object{"object": payload}})
	ts.waitFor("an attempt per endpoint", 10*time.Second, func() bool { return ts.attempts() >= len(eps) })

	// Retry, replay, test, recover; a refused resend.
	last := func(ep endpoint) string { return str(ts.deliveries(ep, acme.key)[0]["id"]) }
	ts.must(200, "POST", eps[3].path+"/deliveries/"+last(eps[3])+"/retry", acme.key, nil, nil)
	ts.must(201, "POST", eps[1].path+"/deliveries/"+last(eps[1])+"/replay", acme.key, nil, nil)
	ts.must(201, "POST", eps[0].path+"/test", acme.key, nil, nil)
	ts.waitFor("the manual attempts", 10*time.Second, func() bool { return ts.attempts() >= len(eps)+3 })
	var recovery struct{ Count int }
	ts.must(200, "POST", eps[1].path+"/recover", acme.key, object{"since": 1}, &recovery)
	ts.waitFor("the recovered attempts", 10*time.Second, func() bool { return ts.attempts() >= len(eps)+3+recovery.Count })
	ts.mustRefuse(409, "delivery_not_resendable", "POST", eps[0].path+"/deliveries/"+str(ts.deliveries(eps[0], acme.key)[1]["id"])+"/replay", acme.key, nil)

	// Hostile and mistaken requests.
	ts.must(204, "DELETE", "/v1/accounts/"+acme.accountID+"/api_keys/"+str(spare["id"]), adminKey, nil, nil)
	ts.mustRefuse(401, "unauthorized", "GET", "/v1/accounts/"+acme.accountID, str(spare["key"]), nil)
	ts.mustRefuse(401, "unauthorized", "GET", "/v1/accounts/"+acme.accountID, "WRONG-KEY-4444", nil)
	never = append(never, "WRONG-KEY-4444", "PASSWORD-6666")
	ts.mustRefuse(400, "invalid_request", "PATCH", eps[0].path, acme.key, object{"url": "https://user:PASSWORD-6666@example.com/"})
	ts.mustRefuse(400, "invalid_request", "POST", cp+"/webhook_endpoints", acme.key, object{"url": "https://user:PASSWORD-6666@example.com/", "enabled_events": []string{"*"}})
	ts.raw("POST", "/v1/events", adminKey, `{"type":"invoice.sent","data":{"object":{"secret_field":"PAYLOAD-NAME-3333"}},"extra":"PAYLOAD-NAME-3333"}`, nil)
	ts.must(204, "DELETE", eps[4].path, acme.key, nil, nil)

	ts.stop() // every line written
	out := logs.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 20 || !strings.Contains(out, "http: request") || !strings.Contains(out, "delivery: attempt failed") {
		t.Fatalf("the scenario logged %d lines, without the expected ones:\n%s", len(lines), out)
	}
	for _, s := range never {
		for i, line := range lines {
			if strings.Contains(line, s) {
				t.Errorf("log line %d contains %q: %s", i+1, s, line)
			}
		}
	}
}

// buildWebhooks builds the webhooks command into a temporary folder.
func buildWebhooks(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build webhooks: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "webhooks")
	if out, err := exec.Command(gobin, "build", "-o", bin, "github.com/factuarea/webhooks/cmd/webhooks").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serveOnce runs `webhooks serve` with env until it logs that it serves,
// then stops it, and returns its standard output and error.
func serveOnce(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var outBuf bytes.Buffer
	cmd.Stdout = &outBuf
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var errBuf bytes.Buffer
	serving := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(errPipe)
		once := sync.Once{}
		for sc.Scan() {
			errBuf.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "webhooks: serving") {
				once.Do(func() { close(serving) })
			}
		}
	}()
	select {
	case <-serving:
	case <-done:
	case <-ctx.Done():
	}
	cmd.Process.Signal(os.Interrupt)
	<-done
	cmd.Wait()
	if !strings.Contains(errBuf.String(), "webhooks: serving") {
		t.Fatalf("webhooks serve did not start:\n%s%s", outBuf.String(), errBuf.String())
	}
	return outBuf.String(), errBuf.String()
}

// TestLogHygiene_Serve: `webhooks serve` never writes the admin key (or a
// database password) to its log, neither at startup nor in its help; the
// key it generates at the first start is printed once to standard output,
// not logged.
func TestLogHygiene_Serve(t *testing.T) {
	bin := buildWebhooks(t)
	const key = "ADMIN-KEY-SECRET-1234"
	data := t.TempDir()
	env := []string{"WEBHOOKS_ADMIN_KEY=" + key, "WEBHOOKS_DATA=" + data, "WEBHOOKS_LOG_LEVEL=debug", "WEBHOOKS_ADDR=127.0.0.1:0"}
	stdout, stderr := serveOnce(t, bin, env)
	if strings.Contains(stdout+stderr, key) {
		t.Errorf("serve with WEBHOOKS_ADMIN_KEY wrote the key:\n%s%s", stdout, stderr)
	}
	stdout, stderr = serveOnce(t, bin, []string{"WEBHOOKS_DATA=" + data, "WEBHOOKS_ADDR=127.0.0.1:0"}, "-admin-key", key, "-log-format", "json", "-log-level", "debug")
	if strings.Contains(stdout+stderr, key) {
		t.Errorf("serve -admin-key wrote the key:\n%s%s", stdout, stderr)
	}

	// The help, and the usage printed after a bad flag, show defaults: not
	// the key or the password the environment holds.
	const dsn = "postgres://webhooks:DB-PASSWORD-5678@127.0.0.1:1/webhooks"
	for _, args := range [][]string{{"serve", "-h"}, {"serve", "-no-such-flag"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "WEBHOOKS_ADMIN_KEY="+key, "WEBHOOKS_DATABASE="+dsn)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "-admin-key") {
			t.Errorf("webhooks %s: no usage:\n%s", strings.Join(args, " "), out)
		}
		for _, s := range []string{key, "DB-PASSWORD-5678"} {
			if strings.Contains(string(out), s) {
				t.Errorf("webhooks %s shows %q:\n%s", strings.Join(args, " "), s, out)
			}
		}
	}

	// First start without a key: generated, printed once on standard
	// output, never logged; the next start reads it without showing it.
	fresh := t.TempDir()
	env = []string{"WEBHOOKS_DATA=" + fresh, "WEBHOOKS_LOG_LEVEL=debug", "WEBHOOKS_ADDR=127.0.0.1:0"}
	stdout, stderr = serveOnce(t, bin, env)
	b, err := os.ReadFile(filepath.Join(fresh, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	generated := strings.TrimSpace(string(b))
	if generated == "" || !strings.Contains(stdout, generated) {
		t.Errorf("the first start did not print the generated key on standard output:\n%s", stdout)
	}
	if strings.Contains(stderr, generated) {
		t.Errorf("the first start logged the generated key:\n%s", stderr)
	}
	stdout, stderr = serveOnce(t, bin, env)
	if strings.Contains(stdout+stderr, generated) {
		t.Errorf("the second start showed the key:\n%s%s", stdout, stderr)
	}
}
