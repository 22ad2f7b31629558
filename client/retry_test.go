package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factuarea/webhooks/client"
)

// These tests drive the client against small fake APIs, for what the real
// service cannot be made to do on demand.

// fake is an httptest server whose handler is given each request's number
// (from 1) and body.
type fake struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newFake(t *testing.T, h func(n int, w http.ResponseWriter, r *http.Request, body []byte)) *fake {
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, r)
		n := len(f.reqs)
		f.mu.Unlock()
		h(n, w, r, body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

const eventJSON = `{"id":"01a22917-31d7-72af-a101-816ea1142134","object":"event","type":"invoice.sent","api_version":"2026-09-23","created":1795985715,"livemode":true,"test":false,"correlation_id":null,"account_id":"01a22917-3059-7156-9129-2f6186940b6f","company_id":"01a22917-3161-717a-8fba-6ad9b43f2084","data":{"type":"invoice.sent","object":{"object":"invoice"}}}`

func unavailable(w http.ResponseWriter, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(503)
	io.WriteString(w, `{"error":{"code":"service_unavailable","message":"down"}}`)
}

func created(w http.ResponseWriter) {
	w.WriteHeader(201)
	io.WriteString(w, eventJSON)
}

var anEvent = client.EventInput{Type: "invoice.sent", CompanyID: "01a22917-3161-717a-8fba-6ad9b43f2084", Data: client.EventInputData{Object: json.RawMessage(`{"object":"invoice"}`)}}

func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2026, 9, 23, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		header   string
		min, max time.Duration
	}{
		{"2", 2 * time.Second, 2200 * time.Millisecond},
		{"0", 0, 0},
		{now.Add(3 * time.Second).Format(http.TimeFormat), 3 * time.Second, 3300 * time.Millisecond},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, 0}, // past: no wait
		{"99999999999", 30 * time.Second, 33 * time.Second}, // capped
		// Not valid: the backoff's first wait, 250 to 500 ms.
		{"-1", 250 * time.Millisecond, 500 * time.Millisecond},
		{"soon", 250 * time.Millisecond, 500 * time.Millisecond},
		{"", 250 * time.Millisecond, 500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.header, func(t *testing.T) {
			f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request, _ []byte) {
				if n == 1 {
					unavailable(w, tc.header)
					return
				}
				created(w)
			})
			var s sleeps
			c := newClient(t, f.URL, "k", &s, client.WithClock(func() time.Time { return now }), client.WithRetryPolicy(client.RetryPolicy{MaxElapsed: -1}))
			if _, err := c.CreateEvent(context.Background(), anEvent); err != nil {
				t.Fatalf("CreateEvent: %v", err)
			}
			w := s.waits()
			if len(w) != 1 || w[0] < tc.min || w[0] > tc.max {
				t.Errorf("waits: got %v, want one in [%s, %s]", w, tc.min, tc.max)
			}
		})
	}
}

// Without Retry-After the waits double from BaseDelay up to MaxDelay, each
// drawn between half and all of it.
func TestBackoff(t *testing.T) {
	f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request, _ []byte) { unavailable(w, "") })
	var s sleeps
	c := newClient(t, f.URL, "k", &s, client.WithRetryPolicy(client.RetryPolicy{MaxAttempts: 6, BaseDelay: 100 * time.Millisecond, MaxDelay: 400 * time.Millisecond}))
	_, err := c.CreateEvent(context.Background(), anEvent)
	if !client.IsCode(err, client.CodeServiceUnavailable) || !strings.Contains(err.Error(), "gave up after 6 attempts") {
		t.Errorf("CreateEvent: got %v, want service_unavailable after 6 attempts", err)
	}
	if f.count() != 6 {
		t.Errorf("requests: got %d, want 6", f.count())
	}
	ms := time.Millisecond
	bounds := [][2]time.Duration{{50 * ms, 100 * ms}, {100 * ms, 200 * ms}, {200 * ms, 400 * ms}, {200 * ms, 400 * ms}, {200 * ms, 400 * ms}}
	w := s.waits()
	if len(w) != len(bounds) {
		t.Fatalf("waits: got %v, want %d", w, len(bounds))
	}
	for i, b := range bounds {
		if w[i] < b[0] || w[i] > b[1] {
			t.Errorf("wait %d: got %s, want in [%s, %s]", i, w[i], b[0], b[1])
		}
	}
}

// MaxElapsed stops the retries when the next attempt would start after it,
// as the clock tells.
func TestMaxElapsed(t *testing.T) {
	f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request, _ []byte) { unavailable(w, "1") })
	var mu sync.Mutex
	now := time.Date(2026, 9, 23, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	sleep := func(ctx context.Context, d time.Duration) error { mu.Lock(); now = now.Add(d); mu.Unlock(); return nil }
	c, err := client.New(f.URL, "k", client.WithClock(clock), client.WithSleep(sleep),
		client.WithRetryPolicy(client.RetryPolicy{MaxAttempts: 100, MaxElapsed: 2500 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateEvent(context.Background(), anEvent)
	if !client.IsCode(err, client.CodeServiceUnavailable) {
		t.Errorf("CreateEvent: got %v, want service_unavailable", err)
	}
	if f.count() != 3 {
		t.Errorf("requests: got %d, want 3 (waits of 1 s, within 2.5 s)", f.count())
	}
}

// A context cancelled while the client waits ends the call at once, with
// the context's error and the last attempt's.
func TestContextCancelledWhileWaiting(t *testing.T) {
	f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request, _ []byte) { unavailable(w, "20") })
	c, err := client.New(f.URL, "k") // the real timer
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err = c.CreateEvent(ctx, anEvent)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("CreateEvent returned after %s, want soon after the cancel", d)
	}
	if !errors.Is(err, context.Canceled) || !client.IsCode(err, client.CodeServiceUnavailable) {
		t.Errorf("CreateEvent: got %v, want context.Canceled and the 503", err)
	}
	if f.count() != 1 {
		t.Errorf("requests: got %d, want 1", f.count())
	}
}

// A wait that would end after the context's deadline is not begun.
func TestContextDeadlineBeforeRetry(t *testing.T) {
	f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request, _ []byte) { unavailable(w, "10") })
	c, err := client.New(f.URL, "k")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err = c.CreateEvent(ctx, anEvent)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("CreateEvent returned after %s, want at once", d)
	}
	if !client.IsCode(err, client.CodeServiceUnavailable) || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("CreateEvent: got %v, want the 503, and that the deadline comes first", err)
	}
}

// A timeout of a call without a key is not retried (the service may have
// acted); a connection that never opened is, whatever the call.
func TestTransportFailures(t *testing.T) {
	t.Run("timeout without a key", func(t *testing.T) {
		f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request, _ []byte) { <-r.Context().Done() })
		var s sleeps
		c := newClient(t, f.URL, "k", &s, client.WithAttemptTimeout(100*time.Millisecond))
		_, err := c.CreateAccount(context.Background(), client.AccountInput{Name: "Acme"})
		if err == nil || client.StatusCode(err) != 0 || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("CreateAccount: got %v, want the attempt's timeout", err)
		}
		if f.count() != 1 {
			t.Errorf("requests: got %d, want 1", f.count())
		}
	})
	t.Run("timeout with a key", func(t *testing.T) {
		f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request, _ []byte) {
			if n < 3 {
				<-r.Context().Done()
				return
			}
			created(w)
		})
		var s sleeps
		c := newClient(t, f.URL, "k", &s, client.WithAttemptTimeout(300*time.Millisecond))
		if _, err := c.CreateEvent(context.Background(), anEvent); err != nil {
			t.Errorf("CreateEvent: got %v, want the event", err)
		}
		// 3, or more if the answering attempt was itself too slow on a
		// loaded machine.
		if f.count() < 3 {
			t.Errorf("requests: got %d, want 3", f.count())
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens there now
		var s sleeps
		c := newClient(t, "http://"+addr, "k", &s, client.WithRetryPolicy(client.RetryPolicy{MaxAttempts: 3}))
		_, err = c.CreateAccount(context.Background(), client.AccountInput{Name: "Acme"})
		if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts") {
			t.Errorf("CreateAccount: got %v, want a connection error after 3 attempts", err)
		}
		if n := len(s.waits()); n != 2 {
			t.Errorf("waits: got %d, want 2", n)
		}
	})
}

// The items of a batch answered 503 while the others were registered are
// sent again, alone, with their keys; they keep the 503 if the budget ends.
func TestBatchItemsUnavailable(t *testing.T) {
	type item struct {
		Key string `json:"idempotency_key"`
	}
	var sent [][]string
	var mu sync.Mutex
	f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request, body []byte) {
		var b struct{ Events []item }
		json.Unmarshal(body, &b)
		var keys []string
		var out []string
		for i, it := range b.Events {
			keys = append(keys, it.Key)
			if it.Key == "always-down" || n == 1 && i == 1 {
				out = append(out, `{"status":503,"error":{"code":"service_unavailable","message":"down"}}`)
			} else {
				out = append(out, `{"status":201,"event":`+eventJSON+`}`)
			}
		}
		mu.Lock()
		sent = append(sent, keys)
		mu.Unlock()
		io.WriteString(w, `{"object":"batch_result","data":[`+strings.Join(out, ",")+`]}`)
	})
	var s sleeps
	c := newClient(t, f.URL, "k", &s, client.WithRetryPolicy(client.RetryPolicy{MaxAttempts: 3}))
	events := []client.EventInput{anEvent, anEvent, anEvent, anEvent}
	events[0].IdempotencyKey, events[1].IdempotencyKey, events[2].IdempotencyKey, events[3].IdempotencyKey = "a", "b", "always-down", "d"
	results, err := c.CreateEvents(context.Background(), events)
	if err != nil {
		t.Fatalf("CreateEvents: %v", err)
	}
	got := fmt.Sprint(sent)
	if want := "[[a b always-down d] [b always-down] [always-down]]"; got != want {
		t.Errorf("batches sent: got %s, want %s", got, want)
	}
	for i, want := range []int{201, 201, 503, 201} {
		if results[i].Status != want || results[i].IdempotencyKey != events[i].IdempotencyKey {
			t.Errorf("results[%d]: got %d %q, want %d %q", i, results[i].Status, results[i].IdempotencyKey, want, events[i].IdempotencyKey)
		}
	}
	if e := results[2].Err; e == nil || e.Code != client.CodeServiceUnavailable || e.StatusCode != 503 {
		t.Errorf("results[2].Err: got %v, want 503 service_unavailable", e)
	}
}

// A batch that fails as a whole ends CreateEvents: the batches before it
// keep their results, the others have Status 0.
func TestBatchFailureStops(t *testing.T) {
	f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request, body []byte) {
		if n == 2 {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"code":"unauthorized","message":"no"}}`)
			return
		}
		var b struct{ Events []json.RawMessage }
		json.Unmarshal(body, &b)
		out := make([]string, len(b.Events))
		for i := range out {
			out[i] = `{"status":201,"event":` + eventJSON + `}`
		}
		io.WriteString(w, `{"object":"batch_result","data":[`+strings.Join(out, ",")+`]}`)
	})
	var s sleeps
	c := newClient(t, f.URL, "k", &s)
	events := make([]client.EventInput, 250)
	for i := range events {
		events[i] = anEvent
	}
	results, err := c.CreateEvents(context.Background(), events)
	if !client.IsCode(err, client.CodeUnauthorized) || !strings.Contains(err.Error(), "events[100:200]") {
		t.Errorf("CreateEvents: got %v, want the 401 of events[100:200]", err)
	}
	if f.count() != 2 {
		t.Errorf("requests: got %d, want 2", f.count())
	}
	if len(results) != 250 {
		t.Fatalf("results: got %d, want 250", len(results))
	}
	for i, r := range results {
		want := 201
		if i >= 100 {
			want = 0
		}
		if r.Status != want || r.IdempotencyKey == "" {
			t.Errorf("results[%d]: got %d (key %q), want %d with a key", i, r.Status, r.IdempotencyKey, want)
		}
	}
}

// A batch stays within the service's 4 MiB body.
func TestBatchSplitsBySize(t *testing.T) {
	var sizes []int
	var mu sync.Mutex
	f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request, body []byte) {
		var b struct{ Events []json.RawMessage }
		json.Unmarshal(body, &b)
		mu.Lock()
		sizes = append(sizes, len(b.Events))
		mu.Unlock()
		if len(body) > 4<<20 {
			t.Errorf("batch %d: %d bytes, over 4 MiB", n, len(body))
		}
		out := make([]string, len(b.Events))
		for i := range out {
			out[i] = `{"status":201,"event":` + eventJSON + `}`
		}
		io.WriteString(w, `{"object":"batch_result","data":[`+strings.Join(out, ",")+`]}`)
	})
	var s sleeps
	c := newClient(t, f.URL, "k", &s)
	big := anEvent
	big.Data.Object = json.RawMessage(`{"object":"invoice","pad":"` + strings.Repeat("x", 200<<10) + `"}`)
	events := make([]client.EventInput, 30)
	for i := range events {
		events[i] = big
	}
	results, err := c.CreateEvents(context.Background(), events)
	if err != nil || len(results) != 30 {
		t.Fatalf("CreateEvents: got %d results, %v", len(results), err)
	}
	total := 0
	for _, n := range sizes {
		total += n
	}
	if len(sizes) != 2 || total != 30 {
		t.Errorf("batch sizes: got %v, want two batches of 30 in all", sizes)
	}
}

// An answer that is not an API error object is an *Error without a code;
// a redirect is not followed.
func TestUnexpectedAnswers(t *testing.T) {
	f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.URL.Path == "/v1/events/moved" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(502)
		io.WriteString(w, "<html>bad gateway</html>")
	})
	var s sleeps
	c := newClient(t, f.URL, "k", &s, client.WithRetryPolicy(client.RetryPolicy{MaxAttempts: 2}))
	_, err := c.GetEvent(context.Background(), "abc")
	var e *client.Error
	if !errors.As(err, &e) || e.StatusCode != 502 || e.Code != "" || !strings.Contains(e.Message, "text/html") {
		t.Errorf("GetEvent behind a 502 page: got %v, want a 502 *Error without a code", err)
	}
	if f.count() != 2 {
		t.Errorf("requests: got %d, want 2 (a read is retried)", f.count())
	}
	c2, _ := client.New(f.URL, "k", client.WithSleep(s.sleep))
	_, err = c2.GetEvent(context.Background(), "moved")
	if client.StatusCode(err) != 302 {
		t.Errorf("GetEvent redirected: got %v, want the 302 as an error", err)
	}
	if f.count() != 3 {
		t.Errorf("requests: got %d, want 3 (the redirect not followed)", f.count())
	}
}

// The requests carry the key, the user agent, JSON headers, and the base
// URL's path; the idempotency key is the call's, else the event's, else a
// random UUID.
func TestRequestHeaders(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request, _ []byte) {
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
		created(w)
	})
	var s sleeps
	c := newClient(t, f.URL+"/gateway/", "secret-key", &s, client.WithUserAgent("acme-invoicing/2.3"))
	ctx := context.Background()
	in := anEvent
	c.CreateEvent(ctx, in)
	in.IdempotencyKey = "from-the-event"
	c.CreateEvent(ctx, in)
	c.CreateEvent(ctx, in, client.WithIdempotencyKey("from-the-call"))
	if len(got) != 3 {
		t.Fatalf("requests: got %d, want 3", len(got))
	}
	r := got[0]
	for name, want := range map[string]string{
		"Authorization": "Bearer secret-key",
		"User-Agent":    "acme-invoicing/2.3 factuarea-webhooks-go-client",
		"Content-Type":  "application/json",
		"Accept":        "application/json",
	} {
		if v := r.Header.Get(name); v != want {
			t.Errorf("%s: got %q, want %q", name, v, want)
		}
	}
	if r.URL.Path != "/gateway/v1/events" || r.Method != "POST" {
		t.Errorf("request: got %s %s, want POST /gateway/v1/events", r.Method, r.URL.Path)
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if k := r.Header.Get("Idempotency-Key"); !uuid.MatchString(k) {
		t.Errorf("a generated Idempotency-Key: got %q, want a random UUID", k)
	}
	if k := got[1].Header.Get("Idempotency-Key"); k != "from-the-event" {
		t.Errorf("the event's Idempotency-Key: got %q, want from-the-event", k)
	}
	if k := got[2].Header.Get("Idempotency-Key"); k != "from-the-call" {
		t.Errorf("the call's Idempotency-Key: got %q, want from-the-call", k)
	}
	if a, b := client.NewIdempotencyKey(), client.NewIdempotencyKey(); a == b || !uuid.MatchString(a) {
		t.Errorf("NewIdempotencyKey: got %q and %q, want two different UUIDs", a, b)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct{ url, key string }{
		{"", "k"},
		{"localhost:8080", "k"},
		{"ftp://example.com", "k"},
		{"https://user:pw@example.com", "k"},
		{"https://example.com?x=1", "k"},
		{"https://example.com", ""},
		{"https://example.com", "a key"},
	} {
		if c, err := client.New(tc.url, tc.key); err == nil {
			t.Errorf("New(%q, %q): got %v, want an error", tc.url, tc.key, c)
		}
	}
	for name, o := range map[string]client.Option{
		"WithHTTPClient(nil)":       client.WithHTTPClient(nil),
		"WithClock(nil)":            client.WithClock(nil),
		"WithSleep(nil)":            client.WithSleep(nil),
		"a user agent on two lines": client.WithUserAgent("a\r\nX-Injected: 1"),
	} {
		if _, err := client.New("https://example.com", "k", o); err == nil {
			t.Errorf("New with %s: got no error, want one", name)
		}
	}
	if _, err := client.New("https://example.com/", "k"); err != nil {
		t.Errorf("New with a trailing slash: %v", err)
	}
	c, _ := client.New("https://example.com", "k")
	if _, err := c.GetEvent(context.Background(), ""); err == nil {
		t.Errorf("GetEvent(\"\"): got no error, want one")
	}
}
