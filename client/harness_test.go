package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/factuarea/webhooks/client"
	"github.com/factuarea/webhooks/internal/service"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

// The tests below run the client against the real service, started
// in-process as internal/e2e's harness does (service.Open and Run on a
// loopback listener, a temporary SQLite file), with a proxy between the
// two that counts the requests and injects the failures.

const adminKey = "test-admin-key"

// testService is a running service.
type testService struct {
	t   *testing.T
	url string
}

// migratedSQLite is a SQLite file that Open migrated once for the
// package's tests: each service starts on a copy of it (the migrations took
// most of a start under the race detector), and finds every migration
// applied, as on a restart.
var migratedSQLite = storetest.NewFileTemplate(sqlite.Migrate)

func startService(t *testing.T) *testService {
	t.Helper()
	path := filepath.Join(t.TempDir(), "webhooks.db")
	migratedSQLite.Copy(t, path)
	cfg := service.Config{
		Database:       path,
		AdminKey:       adminKey,
		AllowNetworks:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		AllowHTTP:      true,
		AttemptTimeout: 2 * time.Second,
		ShutdownGrace:  3 * time.Second,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	ctx, cancel := context.WithCancel(context.Background())
	svc, err := service.Open(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		svc.Close()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := svc.Run(ctx, ln); err != nil {
			t.Errorf("service: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		svc.Close()
	})
	return &testService{t: t, url: "http://" + ln.Addr().String()}
}

// eventIDs reads a company's event log straight from the service (not
// through the client), newest first.
func (ts *testService) eventIDs(companyID string) []string {
	ts.t.Helper()
	var ids []string
	after := ""
	for {
		q := url.Values{"limit": {"100"}}
		if after != "" {
			q.Set("starting_after", after)
		}
		req, _ := http.NewRequest("GET", ts.url+"/v1/companies/"+companyID+"/events?"+q.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+adminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ts.t.Fatal(err)
		}
		var l struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
			HasMore bool `json:"has_more"`
		}
		err = json.NewDecoder(resp.Body).Decode(&l)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil {
			ts.t.Fatalf("GET the event log: got %d (%v), want 200", resp.StatusCode, err)
		}
		for _, e := range l.Data {
			ids = append(ids, e.ID)
		}
		if !l.HasMore {
			return ids
		}
		after = ids[len(ids)-1]
	}
}

// accountCount counts the platform's accounts, straight from the service.
func (ts *testService) accountCount() int {
	ts.t.Helper()
	req, _ := http.NewRequest("GET", ts.url+"/v1/accounts?limit=100", nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		ts.t.Fatal(err)
	}
	return len(l.Data)
}

// proxied is one request the proxy got.
type proxied struct {
	method, path, query, key string
	body                     []byte
}

// proxy stands between the client and the service. It forwards each
// request, unless intercept (when set) handles it: intercept is given the
// request's number (from 1) and returns whether it answered.
type proxy struct {
	*httptest.Server
	target    string
	mu        sync.Mutex
	got       []proxied
	intercept func(n int, p proxied, w http.ResponseWriter, r *http.Request) bool
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{target: target}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		in := proxied{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, key: r.Header.Get("Idempotency-Key"), body: body}
		p.mu.Lock()
		p.got = append(p.got, in)
		n, intercept := len(p.got), p.intercept
		p.mu.Unlock()
		if intercept != nil && intercept(n, in, w, r) {
			return
		}
		resp, b, err := p.forward(r, body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(b)
	}))
	t.Cleanup(p.Close)
	return p
}

// forward sends r (with body) to the service and reads the answer whole:
// once it returns, the service has done what the request asked.
func (p *proxy) forward(r *http.Request, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequest(r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func (p *proxy) setIntercept(f func(n int, in proxied, w http.ResponseWriter, r *http.Request) bool) {
	p.mu.Lock()
	p.intercept = f
	p.mu.Unlock()
}

func (p *proxy) requests() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxied(nil), p.got...)
}

// reset forgets the requests seen so far.
func (p *proxy) reset() {
	p.mu.Lock()
	p.got = nil
	p.mu.Unlock()
}

// sleeps records the client's waits between attempts instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// newClient returns a client of url whose waits go to s, on a transport
// that opens a connection per request (so that the client's own retries
// are what is tested, not the transport's retry of a request on a reused
// connection).
func newClient(t *testing.T, url, key string, s *sleeps, opts ...client.Option) *client.Client {
	t.Helper()
	all := []client.Option{
		client.WithHTTPClient(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}),
		client.WithSleep(s.sleep),
	}
	c, err := client.New(url, key, append(all, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fixture creates an account and its company through c.
func fixture(t *testing.T, c *client.Client) (accountID, companyID string) {
	t.Helper()
	ctx := context.Background()
	a, err := c.CreateAccount(ctx, client.AccountInput{Name: "Acme Consulting"})
	if err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	co, err := c.CreateCompany(ctx, client.CompanyInput{AccountID: a.ID, NIF: "B12345674", Name: "Acme Consulting SL"})
	if err != nil {
		t.Fatalf("CreateCompany: %v", err)
	}
	return a.ID, co.ID
}

// invoice is an invoice.sent event of company, numbered n.
func invoice(companyID string, n int) client.EventInput {
	return client.EventInput{
		Type:      "invoice.sent",
		CompanyID: companyID,
		Data:      client.EventInputData{Object: json.RawMessage(fmt.Sprintf(`{"object":"invoice","number":"FAC-2026-%05d","n":%d}`, n, n))},
	}
}

// objectN reads the n of an invoice's object.
func objectN(t *testing.T, ev *client.Event) int {
	t.Helper()
	var o struct {
		N int `json:"n"`
	}
	if err := json.Unmarshal(ev.Data.Object, &o); err != nil {
		t.Fatalf("event %s: data.object %s: %v", ev.ID, ev.Data.Object, err)
	}
	return o.N
}
