package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/pgtest"
	"github.com/factuarea/webhooks/internal/postgres"
	"github.com/factuarea/webhooks/internal/service"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

const adminKey = "test-admin-key"

// testService is a running service and what a test needs to drive it.
type testService struct {
	t    *testing.T
	svc  *service.Service
	url  string
	stop func()

	mu       sync.Mutex
	recorded []*webhooks.AttemptRecord
	looks    []look // the engine's looks for due deliveries
	signal   chan struct{}
	now      func() time.Time // the service's clock
}

// look is one of the engine's looks for due deliveries.
type look struct {
	at      time.Time
	claimed int
}

// options adjust a test service's configuration.
type options func(*service.Config)

// backends returns the options of each backend a test runs on: SQLite
// (the default) and PostgreSQL.
func backends(t *testing.T) map[string][]options {
	return map[string][]options{"SQLite": nil, "PostgreSQL": {withPostgres(t)}}
}

// withPostgres runs the service on a PostgreSQL database of the test's own,
// a copy of migratedPostgres.
func withPostgres(t *testing.T) options {
	url := migratedPostgres.URL(t)
	return func(c *service.Config) { c.Database = url }
}

// migratedPostgres is a database that postgres.Open migrated, made once for
// the package (TestMain drops it): migrating a new schema took most of a
// PostgreSQL service's start, most of it PostgreSQL's. The service finds
// every migration applied, as on a restart.
var migratedPostgres = pgtest.NewTemplate(postgres.Migrate)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := migratedPostgres.Drop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: drop the template database:", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// startService runs the service on a fresh SQLite file (or path, to reopen
// one) with loopback exempt from the SSRF guard.
func startService(t *testing.T, path string, opts ...options) *testService {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "webhooks.db")
	}
	ts := &testService{t: t, signal: make(chan struct{}, 1)}
	cfg := service.Config{
		Database:       path,
		AdminKey:       adminKey,
		AllowNetworks:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		AllowHTTP:      true,
		AttemptTimeout: 2 * time.Second,
		ShutdownGrace:  3 * time.Second,
		Recorded: func(rs []*webhooks.AttemptRecord) {
			ts.mu.Lock()
			ts.recorded = append(ts.recorded, rs...)
			ts.mu.Unlock()
			select {
			case ts.signal <- struct{}{}:
			default:
			}
		},
	}
	cfg.Looked = ts.looked
	for _, o := range opts {
		o(&cfg)
	}
	ts.now = cfg.Now
	if ts.now == nil {
		ts.now = time.Now
	}
	if cfg.Database == path {
		seedSQLite(t, path)
	}
	ctx, cancel := context.WithCancel(context.Background())
	svc, err := service.Open(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := svc.Run(ctx, ln); err != nil {
			t.Errorf("service: %v", err)
		}
	}()
	ts.svc, ts.url = svc, "http://"+ln.Addr().String()
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

// migratedSQLite is a database file that sqlite.Open created and migrated,
// once for the package (storetest.FileTemplate).
var migratedSQLite = storetest.NewFileTemplate(sqlite.Migrate)

// seedSQLite makes the new SQLite file at path a copy of migratedSQLite,
// unless a file is there already (a test that reopens a database). The
// migrations took most of a service's start under the race detector, and
// the tests start one or more services each; the service then finds every
// migration applied, as on a restart.
func seedSQLite(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	migratedSQLite.Copy(t, path)
}

// waitFor waits until cond holds, re-checking after each stored batch of
// attempts (and at least every 50 ms, for conditions about other things).
func (ts *testService) waitFor(what string, timeout time.Duration, cond func() bool) {
	ts.t.Helper()
	deadline := time.After(timeout)
	for !cond() {
		select {
		case <-ts.signal:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			ts.t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
	}
}

// looked records one of the engine's looks.
func (ts *testService) looked(at time.Time, claimed int) {
	ts.mu.Lock()
	ts.looks = append(ts.looks, look{at, claimed})
	ts.mu.Unlock()
	select {
	case ts.signal <- struct{}{}:
	default:
	}
}

// idle wakes the engine and waits until it has looked for due deliveries at
// the service's time now, or later, and found none, and until what it
// claimed since then (nothing, if the test is right) has been attempted and
// recorded. An assertion that nothing went out is then one about the
// engine, not about how long the test waited.
func (ts *testService) idle() {
	ts.t.Helper()
	mark := ts.now()
	ts.mu.Lock()
	recordedBefore, seen := len(ts.recorded), len(ts.looks)
	ts.mu.Unlock()
	ts.svc.Engine.Wake()
	ts.waitFor("the engine to find nothing due", 10*time.Second, func() bool {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		claimed, quiet := 0, false
		for _, l := range ts.looks[seen:] {
			if !l.at.Before(mark) {
				claimed += l.claimed
				quiet = quiet || l.claimed == 0
			}
		}
		if !quiet {
			ts.svc.Engine.Wake()
		}
		return quiet && len(ts.recorded) >= recordedBefore+claimed && ts.outboxEmpty()
	})
}

// outboxEmpty reports whether the outbox is drained: every operational
// event the records stored so far call for is registered.
func (ts *testService) outboxEmpty() bool {
	st, err := ts.svc.Store.QueueStats(context.Background(), ts.now())
	return err == nil && st.Outbox == 0
}

// attempts returns how many attempt records were stored.
func (ts *testService) attempts() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.recorded)
}

// call makes an API request and decodes the JSON answer into out (if not
// nil). It returns the status.
func (ts *testService) call(method, path, key string, body any, out any) int {
	ts.t.Helper()
	status, raw := ts.raw(method, path, key, body, nil)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			ts.t.Fatalf("%s %s: decoding %s: %v", method, path, raw, err)
		}
	}
	return status
}

// raw makes an API request and returns the status and the body.
func (ts *testService) raw(method, path, key string, body any, header http.Header) (int, []byte) {
	ts.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = bytes.NewBufferString(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		r = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, ts.url+path, r)
	if err != nil {
		ts.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// must makes a call that must answer want.
func (ts *testService) must(want int, method, path, key string, body any, out any) {
	ts.t.Helper()
	var raw json.RawMessage
	if got := ts.call(method, path, key, body, &raw); got != want {
		ts.t.Fatalf("%s %s: got %d %s, want %d", method, path, got, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			ts.t.Fatal(err)
		}
	}
}

type object = map[string]any

// fixture is an account with a company, made through the API.
type fixture struct {
	accountID, companyID, key string
}

// newAccount creates an account (managed when provisionedBy is set), an
// API key for it, and a company with nif (when not empty).
func (ts *testService) newAccount(name, provisionedBy, nif string) fixture {
	ts.t.Helper()
	in := object{"name": name}
	if provisionedBy != "" {
		in["provisioned_by"] = provisionedBy
	}
	var a, k, c object
	ts.must(201, "POST", "/v1/accounts", adminKey, in, &a)
	f := fixture{accountID: a["id"].(string)}
	ts.must(201, "POST", "/v1/accounts/"+f.accountID+"/api_keys", adminKey, nil, &k)
	f.key = k["key"].(string)
	if nif != "" {
		ts.must(201, "POST", "/v1/companies", adminKey, object{"account_id": f.accountID, "nif": nif, "name": name + " SL"}, &c)
		f.companyID = c["id"].(string)
	}
	return f
}

// endpoint is a created endpoint: its API path and secret.
type endpoint struct {
	id, path, secret string
	object           object // as created
}

// newEndpoint creates an endpoint under parent ("/v1/companies/…" or
// "/v1/accounts/…").
func (ts *testService) newEndpoint(parent, key string, in object) endpoint {
	ts.t.Helper()
	var out object
	ts.must(201, "POST", parent+"/webhook_endpoints", key, in, &out)
	id := out["id"].(string)
	return endpoint{id: id, path: parent + "/webhook_endpoints/" + id, secret: out["secret"].(string), object: out}
}

// registerEvent registers an event with the admin key and returns it.
func (ts *testService) registerEvent(in any) object {
	ts.t.Helper()
	var ev object
	ts.must(201, "POST", "/v1/events", adminKey, in, &ev)
	return ev
}

// deliveries lists an endpoint's deliveries (first page of 100).
func (ts *testService) deliveries(ep endpoint, key string) []object {
	ts.t.Helper()
	var l struct {
		Data []object `json:"data"`
	}
	ts.must(200, "GET", ep.path+"/deliveries?limit=100", key, nil, &l)
	return l.Data
}

// received is one request a sink got.
type received struct {
	path   string
	header http.Header
	body   []byte
	at     time.Time
}

// sink is a loopback receiver that records requests and answers with
// whatever respond says (200 by default).
type sink struct {
	*httptest.Server
	mu       sync.Mutex
	got      []received
	respond  func(n int, w http.ResponseWriter, r *http.Request)
	arrivals chan struct{}
}

func newSink(t *testing.T) *sink {
	s := &sink{arrivals: make(chan struct{}, 1<<16)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.got = append(s.got, received{path: r.URL.Path, header: r.Header.Clone(), body: body, at: time.Now()})
		n, respond := len(s.got), s.respond
		s.mu.Unlock()
		s.arrivals <- struct{}{}
		if respond != nil {
			respond(n, w, r)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sink) requests() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.got...)
}

func (s *sink) setRespond(f func(n int, w http.ResponseWriter, r *http.Request)) {
	s.mu.Lock()
	s.respond = f
	s.mu.Unlock()
}

// waitRequests waits until the sink has had n requests.
func (s *sink) waitRequests(t *testing.T, n int, timeout time.Duration) []received {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if got := s.requests(); len(got) >= n {
			return got
		}
		select {
		case <-s.arrivals:
		case <-deadline:
			t.Fatalf("sink: got %d requests after %s, want %d", len(s.requests()), timeout, n)
		}
	}
}

// fakeClock is a settable clock for schedule tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func str(v any) string { return fmt.Sprint(v) }
