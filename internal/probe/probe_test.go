package probe_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/probe"
	"github.com/factuarea/webhooks/receiver"
	"github.com/factuarea/webhooks/signature"
)

const testSecret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

// correctReceiver is a receiver built with the kit on SQLite, as a customer
// would build it. effects counts the handler's runs per event id.
type correctReceiver struct {
	db *sql.DB
	h  *receiver.Handler

	mu      sync.Mutex
	effects map[string]int
	events  []*receiver.Event
}

func newCorrectReceiver(t *testing.T) *correctReceiver {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "receiver.db") + "?_txlock=immediate&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := receiver.CreateTable(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	r := &correctReceiver{db: db, effects: map[string]int{}}
	r.h, err = receiver.New(receiver.Config{
		DB:      db,
		Secrets: []string{testSecret},
		Handle: func(ctx context.Context, tx *sql.Tx, ev *receiver.Event) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.effects[ev.ID]++
			r.events = append(r.events, ev)
			return nil
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// serve starts h on 127.0.0.1 for the test.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/factuarea/webhook"
}

// run probes url with small, fast settings and returns the report and the
// printed output.
func run(t *testing.T, cfg probe.Config) (probe.Report, string, error) {
	t.Helper()
	if cfg.Secrets == nil {
		cfg.Secrets = []string{testSecret}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	var out bytes.Buffer
	rep, err := probe.Run(context.Background(), cfg, &out)
	return rep, out.String(), err
}

func TestRun_CorrectReceiver(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  probe.Config
	}{
		{"company envelope", probe.Config{}},
		{"account envelope", probe.Config{AccountID: "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00"}},
		{"2025-06-01", probe.Config{APIVersion: webhooks.APIVersion20250601, TestMode: true}},
		{"rotation", probe.Config{Secrets: []string{"whsec_new", testSecret}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newCorrectReceiver(t)
			cfg := tc.cfg
			cfg.URL = serve(t, r.h)
			rep, out, err := run(t, cfg)
			if err != nil {
				t.Fatalf("got %v, want nil\n%s", err, out)
			}
			if failed := rep.Failed(); len(failed) > 0 {
				t.Errorf("failed probes: got %q, want none\n%s", failed, out)
			}
			for _, name := range []string{probe.Duplicate, probe.Signature, probe.Stale, probe.Body, probe.Latency} {
				res, ok := rep.Result(name)
				if !ok || res.Status != probe.Pass {
					t.Errorf("%s: got %+v, want PASS", name, res)
				}
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			// The duplicate probe's event had its effect once; the latency
			// probe's own event once; the refused ones never.
			if got := r.effects[rep.EventID]; got != 1 {
				t.Errorf("effects of the duplicated event %s: got %d, want 1", rep.EventID, got)
			}
			if got := len(r.effects); got != 2 {
				t.Errorf("events processed: got %d, want 2 (the duplicated one and the latency probe's)", got)
			}
			for _, ev := range r.events {
				if ev.Type != "ping" || !ev.Test || ev.Livemode == cfg.TestMode {
					t.Errorf("event: got type %q test %t livemode %t, want a ping, test, livemode %t", ev.Type, ev.Test, ev.Livemode, !cfg.TestMode)
				}
				if got := ev.Account != nil; got != (cfg.AccountID != "") {
					t.Errorf("account envelope: got %t, want %t", got, cfg.AccountID != "")
				}
				if cfg.AccountID != "" && (ev.Account.ID != cfg.AccountID || ev.AccountRelationship != "own" || ev.Headers.AccountRelationship != "own") {
					t.Errorf("account envelope: got %+v %q %q, want account %s, own", ev.Account, ev.AccountRelationship, ev.Headers.AccountRelationship, cfg.AccountID)
				}
				if want := cmpOr(cfg.APIVersion, webhooks.LatestAPIVersion); ev.APIVersion != want {
					t.Errorf("api_version: got %q, want %q", ev.APIVersion, want)
				}
			}
			wantLines := []string{
				`^PASS  duplicate  10 concurrent copies of ` + rep.EventID + `: all 200 \(expected 2xx`,
				`^PASS  signature  signed with another secret: 401 \(expected not 2xx; 401\)$`,
				`^PASS  stale      correct signature, timestamp 1h old: 401 \(expected not 2xx; 401\)$`,
				`^PASS  body       correctly signed body that is not JSON: 400 \(expected not 2xx; 400\)$`,
				`^PASS  latency    a single delivery answered 200 in .*; slowest of 11 signed deliveries .* \(expected under 5s; the sender gives up at 5s\)$`,
				`^Now check in your system that event ` + rep.EventID + ` had its effect once`,
				`^All 5 probes passed\.$`,
			}
			for _, re := range wantLines {
				if !regexp.MustCompile(`(?m)` + re).MatchString(out) {
					t.Errorf("output: got\n%s\nwant a line matching %s", out, re)
				}
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestRun_Requests checks that the probe builds requests exactly as the
// sender does: the headers of the specification's section 4 and a compact
// body with the fields in order.
func TestRun_Requests(t *testing.T) {
	r := newCorrectReceiver(t)
	type seen struct {
		header http.Header
		body   []byte
	}
	var mu sync.Mutex
	var reqs []seen
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mu.Lock()
		reqs = append(reqs, seen{req.Header.Clone(), body})
		mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(body))
		r.h.ServeHTTP(w, req)
	}))
	rep, out, err := run(t, probe.Config{URL: url, Repeat: 3, UserAgent: "Factuarea-Webhooks-Probe/9.9"})
	if err != nil {
		t.Fatalf("got %v\n%s", err, out)
	}
	if got, want := len(reqs), 3+3+1; got != want {
		t.Fatalf("requests: got %d, want %d", got, want)
	}
	uuidRE := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	bodyRE := regexp.MustCompile(`^\{"id":"([^"]+)","type":"ping","api_version":"2026-09-23","created":\d+,"livemode":true,"test":true,"correlation_id":null,"data":\{"type":"ping","object":\{.*\}\}\}$`)
	deliveryIDs := map[string]bool{}
	duplicates := 0
	for i, s := range reqs {
		h := s.header
		for name, want := range map[string]string{
			"Content-Type":         "application/json",
			"User-Agent":           "Factuarea-Webhooks-Probe/9.9",
			"Factuarea-Event-Type": "ping",
		} {
			if got := h.Get(name); got != want {
				t.Errorf("request %d: %s: got %q, want %q", i, name, got, want)
			}
		}
		eventID := h.Get(receiver.HeaderEventID)
		if !uuidRE.MatchString(eventID) || h.Get(receiver.HeaderIdempotencyKey) != eventID {
			t.Errorf("request %d: got event id %q and Idempotency-Key %q, want one UUIDv7 twice", i, eventID, h.Get(receiver.HeaderIdempotencyKey))
		}
		if d := h.Get(receiver.HeaderDeliveryID); !uuidRE.MatchString(d) || deliveryIDs[d] {
			t.Errorf("request %d: got delivery id %q, want a new UUIDv7", i, d)
		} else {
			deliveryIDs[d] = true
		}
		if _, err := signature.Parse(h.Get(signature.HeaderName)); err != nil {
			t.Errorf("request %d: signature header %q: %v", i, h.Get(signature.HeaderName), err)
		}
		if h.Get(receiver.HeaderAccountRelationship) != "" {
			t.Errorf("request %d: got Factuarea-Account-Relationship on a company envelope", i)
		}
		if !json.Valid(s.body) {
			continue // the body probe's
		}
		m := bodyRE.FindSubmatch(s.body)
		if m == nil {
			t.Errorf("request %d: got body %s, want the compact company envelope", i, s.body)
			continue
		}
		if string(m[1]) != eventID {
			t.Errorf("request %d: body id %s, header id %s, want them equal", i, m[1], eventID)
		}
		if eventID == rep.EventID {
			duplicates++
		}
	}
	if duplicates != 3 {
		t.Errorf("copies of %s: got %d, want 3", rep.EventID, duplicates)
	}
}

// Faulty receivers. Each is wrong in one way, which one probe must name.

// seenIDs is an in-memory deduplication table for the faulty receivers.
type seenIDs struct {
	mu  sync.Mutex
	ids map[string]bool
}

// first reports whether id is seen for the first time.
func (s *seenIDs) first(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = map[string]bool{}
	}
	if s.ids[id] {
		return false
	}
	s.ids[id] = true
	return true
}

// faulty builds a receiver from a verification function and the answer for
// a repeat.
func faulty(verify func(r *http.Request, body []byte) error, repeatStatus int, delay time.Duration) http.Handler {
	var seen seenIDs
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body is read first: only then does the server notice that
		// the client gave up, and cancel the request's context.
		body, _ := io.ReadAll(r.Body)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		if err := verify(r, body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		ev, err := receiver.ParseEvent(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if !seen.first(ev.ID) {
			w.WriteHeader(repeatStatus)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

func verifyProperly(r *http.Request, body []byte) error {
	return receiver.Verify(r.Header.Get(signature.HeaderName), body, time.Now(), testSecret)
}

func TestRun_FaultyReceivers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.Handler
		cfg     probe.Config
		// fail are the probes that must fail, exactly.
		fail []string
		// inLine is a piece of the first failing probe's line.
		inLine string
	}{
		{
			name:    "skips verification",
			handler: faulty(func(*http.Request, []byte) error { return nil }, http.StatusOK, 0),
			fail:    []string{probe.Signature, probe.Stale},
			inLine:  "signed with another secret: 200: accepted",
		},
		{
			name:    "500 on a repeat",
			handler: faulty(verifyProperly, http.StatusInternalServerError, 0),
			fail:    []string{probe.Duplicate},
			inLine:  "9 not 2xx (9× 500, 1× 200)",
		},
		{
			name:    "409 on a repeat",
			handler: faulty(verifyProperly, http.StatusConflict, 0),
			fail:    []string{probe.Duplicate},
			inLine:  "9× 409",
		},
		{
			name: "ignores the timestamp",
			handler: faulty(func(r *http.Request, body []byte) error {
				return signature.Verify(r.Header.Get(signature.HeaderName), body, time.Now(), 100*365*24*time.Hour, testSecret)
			}, http.StatusOK, 0),
			fail:   []string{probe.Stale},
			inLine: "timestamp 1h old: 200: accepted",
		},
		{
			name: "accepts any body",
			handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if err := verifyProperly(r, body); err != nil {
					http.Error(w, err.Error(), http.StatusUnauthorized)
				}
			}),
			fail:   []string{probe.Body},
			inLine: "not JSON: 200: accepted",
		},
		{
			name:    "slow",
			handler: faulty(verifyProperly, http.StatusOK, time.Second),
			cfg:     probe.Config{Timeout: 150 * time.Millisecond, Repeat: 2},
			// Nothing gets an answer in time: every probe fails, the
			// latency one among them.
			fail:   []string{probe.Duplicate, probe.Signature, probe.Stale, probe.Body, probe.Latency},
			inLine: "no answer within 150ms",
		},
		{
			name: "redirects",
			handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://example.com/webhook", http.StatusMovedPermanently)
			}),
			// The answers are quick: the latency probe, which judges time
			// only, passes.
			fail:   []string{probe.Duplicate, probe.Signature, probe.Stale, probe.Body},
			inLine: `301 redirect to "https://example.com/webhook", not followed`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.URL = serve(t, tc.handler)
			rep, out, err := run(t, cfg)
			if !errors.Is(err, probe.ErrFailed) {
				t.Errorf("got error %v, want ErrFailed", err)
			}
			if got := rep.Failed(); !slices.Equal(got, tc.fail) {
				t.Errorf("failed probes: got %q, want %q\n%s", got, tc.fail, out)
			}
			first, _ := rep.Result(tc.fail[0])
			if line := first.String(); !strings.HasPrefix(line, "FAIL  "+tc.fail[0]) || !strings.Contains(line, tc.inLine) {
				t.Errorf("line: got %q, want FAIL %s with %q", line, tc.fail[0], tc.inLine)
			}
			if want := "probes failed: " + strings.Join(tc.fail, ", "); !strings.Contains(out, want) {
				t.Errorf("output: got\n%s\nwant %q", out, want)
			}
		})
	}
}

// TestRun_Warnings: a receiver slower than SlowAfter but within the timeout,
// and one that refuses with a 5xx, get warnings but no failure.
func TestRun_Warnings(t *testing.T) {
	t.Run("slow", func(t *testing.T) {
		r := newCorrectReceiver(t)
		slow := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			time.Sleep(60 * time.Millisecond)
			r.h.ServeHTTP(w, req)
		})
		rep, out, err := run(t, probe.Config{URL: serve(t, slow), SlowAfter: 50 * time.Millisecond, Repeat: 2})
		if err != nil {
			t.Fatalf("got %v, want nil\n%s", err, out)
		}
		if res, _ := rep.Result(probe.Latency); res.Status != probe.Warn {
			t.Errorf("latency: got %v, want WARN\n%s", res, out)
		}
		if !strings.Contains(out, "All 5 probes passed, 1 with a warning.") {
			t.Errorf("output: got\n%s\nwant the warning counted in the summary", out)
		}
	})
	t.Run("5xx refusals", func(t *testing.T) {
		r := newCorrectReceiver(t)
		h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			rec := httptest.NewRecorder()
			r.h.ServeHTTP(rec, req)
			if rec.Code >= 400 {
				rec.Code = http.StatusServiceUnavailable
			}
			w.WriteHeader(rec.Code)
		})
		rep, out, err := run(t, probe.Config{URL: serve(t, h), Repeat: 2})
		if err != nil {
			t.Fatalf("got %v, want nil\n%s", err, out)
		}
		for _, name := range []string{probe.Signature, probe.Stale, probe.Body} {
			if res, _ := rep.Result(name); res.Status != probe.Warn || !strings.Contains(res.Saw, "retry") {
				t.Errorf("%s: got %v, want WARN about retries", name, res)
			}
		}
	})
}

func TestRun_Config(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  probe.Config
		want string
	}{
		{"no URL", probe.Config{Secrets: []string{testSecret}}, "URL is required"},
		{"not http", probe.Config{URL: "ftp://example.com/x", Secrets: []string{testSecret}}, "not an http or https URL"},
		{"relative", probe.Config{URL: "/webhook", Secrets: []string{testSecret}}, "not an http or https URL"},
		{"no secret", probe.Config{URL: "http://127.0.0.1:1/"}, "secret is required"},
		{"empty secret", probe.Config{URL: "http://127.0.0.1:1/", Secrets: []string{""}}, "secret is required"},
		{"api version", probe.Config{URL: "http://127.0.0.1:1/", Secrets: []string{testSecret}, APIVersion: "2024-01-01"}, "unknown api version"},
		{"negative repeat", probe.Config{URL: "http://127.0.0.1:1/", Secrets: []string{testSecret}, Repeat: -1}, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := probe.Run(context.Background(), tc.cfg, &out)
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, probe.ErrFailed) {
				t.Errorf("got %v, want an error about %q", err, tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("output: got %q, want none", out.String())
			}
		})
	}
}

// TestRun_Unreachable: nothing listens; every probe fails, none passes by
// default.
func TestRun_Unreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	rep, out, err := run(t, probe.Config{URL: url, Repeat: 2})
	if !errors.Is(err, probe.ErrFailed) {
		t.Errorf("got %v, want ErrFailed", err)
	}
	if got := len(rep.Failed()); got != 5 {
		t.Errorf("failed probes: got %d, want 5\n%s", got, out)
	}
}

// TestRun_Cancelled: a cancelled context stops the run with its error.
func TestRun_Cancelled(t *testing.T) {
	var calls atomic.Int64
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := probe.Run(ctx, probe.Config{URL: url, Secrets: []string{testSecret}}, io.Discard)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
