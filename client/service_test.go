package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/factuarea/webhooks/client"
)

// An answer lost after the service committed (the connection closed, or
// the answer held past the client's attempt timeout) is retried with the
// same Idempotency-Key: the client returns the event the first attempt
// registered, and the company's log holds it once.
func TestLostAnswerRegistersOnce(t *testing.T) {
	cases := map[string]func(w http.ResponseWriter, r *http.Request){
		"connection closed after the commit": func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			conn.Close()
		},
		"answer held past the attempt timeout": func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // the client gave up on this attempt
		},
	}
	for name, lose := range cases {
		t.Run(name, func(t *testing.T) {
			ts := startService(t)
			px := newProxy(t, ts.url)
			var s sleeps
			c := newClient(t, px.URL, adminKey, &s, client.WithAttemptTimeout(time.Second))
			_, companyID := fixture(t, c)
			px.reset()

			var first struct {
				ID string `json:"id"`
			}
			px.setIntercept(func(n int, in proxied, w http.ResponseWriter, r *http.Request) bool {
				if n != 1 {
					return false
				}
				resp, body, err := px.forward(r, in.body)
				if err != nil || resp.StatusCode != 201 {
					t.Errorf("the first attempt, forwarded: got %v %v %s, want 201", resp, err, body)
				}
				json.Unmarshal(body, &first)
				lose(w, r)
				return true
			})
			ev, err := c.CreateEvent(context.Background(), invoice(companyID, 1))
			if err != nil {
				t.Fatalf("CreateEvent: got %v, want the event", err)
			}
			reqs := px.requests()
			if len(reqs) != 2 {
				t.Fatalf("requests through the proxy: got %d, want 2 (the lost one and its retry)", len(reqs))
			}
			if reqs[0].key == "" || reqs[1].key != reqs[0].key {
				t.Errorf("Idempotency-Key of the two attempts: got %q and %q, want the same, not empty", reqs[0].key, reqs[1].key)
			}
			if string(reqs[1].body) != string(reqs[0].body) {
				t.Errorf("the retry's body: got %s, want the first's %s", reqs[1].body, reqs[0].body)
			}
			if first.ID == "" || ev.ID != first.ID {
				t.Errorf("the event returned: got %q, want %q, the one the lost attempt registered", ev.ID, first.ID)
			}
			if ids := ts.eventIDs(companyID); len(ids) != 1 || ids[0] != first.ID {
				t.Errorf("the company's event log: got %v, want exactly [%s]", ids, first.ID)
			}
			if w := s.waits(); len(w) != 1 {
				t.Errorf("waits between attempts: got %v, want 1", w)
			}
		})
	}
}

// A batch whose answer is lost is sent again whole with the same keys: each
// event comes back (200, the first registration's) and is in the log once.
func TestLostBatchAnswerRegistersOnce(t *testing.T) {
	ts := startService(t)
	px := newProxy(t, ts.url)
	var s sleeps
	c := newClient(t, px.URL, adminKey, &s)
	_, companyID := fixture(t, c)
	px.reset()
	px.setIntercept(func(n int, in proxied, w http.ResponseWriter, r *http.Request) bool {
		if n != 1 {
			return false
		}
		if resp, _, err := px.forward(r, in.body); err != nil || resp.StatusCode != 200 {
			t.Errorf("the first batch, forwarded: got %v %v, want 200", resp, err)
		}
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
		return true
	})
	var events []client.EventInput
	for i := range 5 {
		events = append(events, invoice(companyID, i))
	}
	results, err := c.CreateEvents(context.Background(), events)
	if err != nil {
		t.Fatalf("CreateEvents: %v", err)
	}
	if n := len(px.requests()); n != 2 {
		t.Errorf("requests: got %d, want 2", n)
	}
	for i, r := range results {
		if r.Status != 200 || r.Event == nil || objectN(t, r.Event) != i {
			t.Errorf("results[%d]: got status %d, event %v, err %v; want 200 and event %d registered by the lost batch", i, r.Status, r.Event, r.Err, i)
		}
	}
	if ids := ts.eventIDs(companyID); len(ids) != 5 {
		t.Errorf("the company's event log: got %d events, want 5", len(ids))
	}
}

// A call without an idempotency key (CreateAccount) whose answer is lost
// after the request was sent is not sent again: a second account would be
// a second account.
func TestLostAnswerWithoutKeyIsNotRetried(t *testing.T) {
	ts := startService(t)
	px := newProxy(t, ts.url)
	var s sleeps
	c := newClient(t, px.URL, adminKey, &s)
	px.setIntercept(func(n int, in proxied, w http.ResponseWriter, r *http.Request) bool {
		px.forward(r, in.body)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
		return true
	})
	_, err := c.CreateAccount(context.Background(), client.AccountInput{Name: "Acme"})
	if err == nil {
		t.Fatal("CreateAccount with its answer lost: got no error, want one")
	}
	if n := len(px.requests()); n != 1 {
		t.Errorf("requests: got %d, want 1 (not retried)", n)
	}
	if n := ts.accountCount(); n != 1 {
		t.Errorf("accounts: got %d, want 1", n)
	}
}

// A 503 window (Retry-After: 1) is ridden out: the client waits what the
// answer asks, sends the same request again with the same key, and the
// event is registered once.
func TestRidesOutUnavailable(t *testing.T) {
	ts := startService(t)
	px := newProxy(t, ts.url)
	var s sleeps
	c := newClient(t, px.URL, adminKey, &s)
	_, companyID := fixture(t, c)
	px.reset()
	const refused = 3
	px.setIntercept(func(n int, in proxied, w http.ResponseWriter, r *http.Request) bool {
		if n > refused {
			return false
		}
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"code":"service_unavailable","message":"The service cannot reach its database right now: try again in a moment."}}`))
		return true
	})
	ev, err := c.CreateEvent(context.Background(), invoice(companyID, 1), client.WithIdempotencyKey("FAC-2026-00001-sent"))
	if err != nil {
		t.Fatalf("CreateEvent: got %v, want the event", err)
	}
	reqs := px.requests()
	if len(reqs) != refused+1 {
		t.Fatalf("requests: got %d, want %d", len(reqs), refused+1)
	}
	for i, r := range reqs {
		if r.key != "FAC-2026-00001-sent" {
			t.Errorf("request %d: Idempotency-Key: got %q, want FAC-2026-00001-sent", i, r.key)
		}
	}
	waits := s.waits()
	if len(waits) != refused {
		t.Fatalf("waits: got %v, want %d", waits, refused)
	}
	for i, d := range waits {
		if d < time.Second || d > 1100*time.Millisecond {
			t.Errorf("wait %d: got %s, want Retry-After's 1 s (up to a tenth more)", i, d)
		}
	}
	if ids := ts.eventIDs(companyID); len(ids) != 1 || ids[0] != ev.ID {
		t.Errorf("the company's event log: got %v, want [%s]", ids, ev.ID)
	}
}

// A 503 that outlasts the budget ends the call with the typed error after
// MaxAttempts, and registers nothing; a Retry-After date and a Retry-After
// beyond the cap are honoured as such.
func TestUnavailableBudget(t *testing.T) {
	ts := startService(t)
	px := newProxy(t, ts.url)
	var s sleeps
	c := newClient(t, px.URL, adminKey, &s, client.WithRetryPolicy(client.RetryPolicy{MaxAttempts: 3, MaxRetryAfter: 2 * time.Second}))
	_, companyID := fixture(t, c)

	for name, retryAfter := range map[string]func() string{
		"seconds beyond the cap": func() string { return "3600" },
		"an HTTP date":           func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) },
	} {
		t.Run(name, func(t *testing.T) {
			px.reset()
			s.mu.Lock()
			s.d = nil
			s.mu.Unlock()
			px.setIntercept(func(n int, in proxied, w http.ResponseWriter, r *http.Request) bool {
				w.Header().Set("Retry-After", retryAfter())
				w.WriteHeader(http.StatusServiceUnavailable)
				w.Write([]byte(`{"error":{"code":"service_unavailable","message":"down"}}`))
				return true
			})
			_, err := c.CreateEvent(context.Background(), invoice(companyID, 1))
			var apiErr *client.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || apiErr.Code != client.CodeServiceUnavailable {
				t.Errorf("CreateEvent: got %v, want a 503 service_unavailable *Error", err)
			}
			if n := len(px.requests()); n != 3 {
				t.Errorf("requests: got %d, want 3 (MaxAttempts)", n)
			}
			waits := s.waits()
			if len(waits) != 2 {
				t.Fatalf("waits: got %v, want 2", waits)
			}
			for i, d := range waits {
				// The date has a second's resolution: it asks for 1 to 2 s.
				if d < 500*time.Millisecond || d > 2200*time.Millisecond {
					t.Errorf("wait %d: got %s, want about what Retry-After asks, at most the 2 s cap (and a tenth)", i, d)
				}
			}
		})
	}
	if ids := ts.eventIDs(companyID); len(ids) != 0 {
		t.Errorf("the company's event log: got %v, want none", ids)
	}
}

// A batch of 250 is sent as 100, 100 and 50, and reported item by item in
// the input's order: refused items (an unknown company, a key reused with
// another event) have their typed errors at their positions, a key
// repeated with the same event gets the first's event (200).
func TestBatchSplit(t *testing.T) {
	ts := startService(t)
	px := newProxy(t, ts.url)
	var s sleeps
	c := newClient(t, px.URL, adminKey, &s)
	_, companyID := fixture(t, c)
	px.reset()

	const unknownCompany = "01a22917-0000-7000-8000-000000000000"
	events := make([]client.EventInput, 250)
	refused := map[int]string{}
	for i := range events {
		events[i] = invoice(companyID, i)
		if i%7 == 3 {
			events[i].CompanyID = unknownCompany
			refused[i] = client.CodeUnknownCompany
		}
	}
	// 120 and 130 share a key and an event: one registration. 140 reuses it
	// with another event: refused.
	events[120].IdempotencyKey, events[130].IdempotencyKey, events[140].IdempotencyKey = "k-120", "k-120", "k-120"
	events[130].Data = events[120].Data
	refused[140] = client.CodeIdempotencyKeyReused
	delete(refused, 130)
	delete(refused, 120)
	if refused[140] == "" || 120%7 == 3 || 130%7 == 3 {
		t.Fatal("the test's positions overlap")
	}

	results, err := c.CreateEvents(context.Background(), events)
	if err != nil {
		t.Fatalf("CreateEvents: %v", err)
	}
	reqs := px.requests()
	var sizes []int
	for _, r := range reqs {
		var b struct {
			Events []struct {
				Key string `json:"idempotency_key"`
			} `json:"events"`
		}
		if r.path != "/v1/events/batch" || json.Unmarshal(r.body, &b) != nil {
			t.Fatalf("request %s %s %s: want a batch", r.method, r.path, r.body)
		}
		for _, e := range b.Events {
			if e.Key == "" {
				t.Errorf("a batch item without idempotency_key")
			}
		}
		sizes = append(sizes, len(b.Events))
	}
	if !slices.Equal(sizes, []int{100, 100, 50}) {
		t.Errorf("batch sizes: got %v, want [100 100 50]", sizes)
	}
	if len(results) != len(events) {
		t.Fatalf("results: got %d, want %d", len(results), len(events))
	}
	keys := map[string]int{}
	for i, r := range results {
		if code, ok := refused[i]; ok {
			wantStatus := 422
			if code == client.CodeIdempotencyKeyReused {
				wantStatus = 409
			}
			if r.Status != wantStatus || r.Err == nil || r.Err.Code != code || r.Err.StatusCode != wantStatus || r.Event != nil {
				t.Errorf("results[%d]: got status %d, err %v, event %v; want %d %s", i, r.Status, r.Err, r.Event, wantStatus, code)
			}
			continue
		}
		want, wantN := 201, i
		if i == 130 {
			want, wantN = 200, 120 // the first registration's event
		}
		if r.Status != want || r.Err != nil || r.Event == nil || objectN(t, r.Event) != wantN {
			t.Errorf("results[%d]: got status %d, err %v, event %+v; want %d and the event of item %d", i, r.Status, r.Err, r.Event, want, wantN)
		}
		if r.IdempotencyKey == "" {
			t.Errorf("results[%d]: no IdempotencyKey", i)
		}
		keys[r.IdempotencyKey]++
	}
	if keys["k-120"] != 2 || len(keys) != 250-len(refused)-1 {
		t.Errorf("keys: got %d distinct (k-120 %d times), want %d distinct and k-120 twice", len(keys), keys["k-120"], 250-len(refused)-1)
	}
	if results[130].Event != nil && results[120].Event != nil && results[130].Event.ID != results[120].Event.ID {
		t.Errorf("results[130]: got event %s, want 120's %s", results[130].Event.ID, results[120].Event.ID)
	}
	if got, want := len(ts.eventIDs(companyID)), 250-len(refused)-1; got != want {
		t.Errorf("the company's event log: got %d events, want %d", got, want)
	}
}

// The API's refusals are typed errors, and a 4xx is never retried.
func TestTypedErrorsNoRetry(t *testing.T) {
	ts := startService(t)
	px := newProxy(t, ts.url)
	var s sleeps
	c := newClient(t, px.URL, adminKey, &s)
	_, companyID := fixture(t, c)
	ctx := context.Background()
	if _, err := c.CreateEvent(ctx, invoice(companyID, 1), client.WithIdempotencyKey("FAC-1")); err != nil {
		t.Fatal(err)
	}
	bad, err := client.New(px.URL, "not-a-key", client.WithSleep(s.sleep))
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name   string
		call   func() error
		status int
		code   string
	}{
		{"409 a key reused with another event", func() error {
			_, err := c.CreateEvent(ctx, invoice(companyID, 2), client.WithIdempotencyKey("FAC-1"))
			return err
		}, 409, client.CodeIdempotencyKeyReused},
		{"422 an unknown company", func() error {
			_, err := c.CreateEvent(ctx, invoice("01a22917-0000-7000-8000-000000000000", 3))
			return err
		}, 422, client.CodeUnknownCompany},
		{"400 a reserved type", func() error {
			in := invoice(companyID, 4)
			in.Type = "ping"
			_, err := c.CreateEvent(ctx, in)
			return err
		}, 0, ""}, // whatever 4xx the service gives it
		{"404 an unknown event", func() error {
			_, err := c.GetEvent(ctx, "01a22917-0000-7000-8000-000000000000")
			return err
		}, 404, client.CodeNotFound},
		{"401 a bad key", func() error {
			_, err := bad.CreateEvent(ctx, invoice(companyID, 5))
			return err
		}, 401, client.CodeUnauthorized},
		{"409 a NIF taken", func() error {
			a, err := c.CreateAccount(ctx, client.AccountInput{Name: "Other"})
			if err != nil {
				return err
			}
			px.reset()
			_, err = c.CreateCompany(ctx, client.CompanyInput{AccountID: a.ID, NIF: "B12345674", Name: "Copy"})
			return err
		}, 409, client.CodeNIFTaken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			px.reset()
			before := len(s.waits())
			err := tc.call()
			var apiErr *client.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("got %v (%T), want an *client.Error", err, err)
			}
			if tc.status == 0 {
				if apiErr.StatusCode < 400 || apiErr.StatusCode > 499 || apiErr.Code == "" {
					t.Errorf("got %d %q, want a 4xx with a code", apiErr.StatusCode, apiErr.Code)
				}
			} else if apiErr.StatusCode != tc.status || apiErr.Code != tc.code || !client.IsCode(err, tc.code) || client.StatusCode(err) != tc.status {
				t.Errorf("got %d %q, want %d %q", apiErr.StatusCode, apiErr.Code, tc.status, tc.code)
			}
			if apiErr.Message == "" {
				t.Errorf("got an empty message")
			}
			if n := len(px.requests()); n != 1 {
				t.Errorf("requests: got %d, want 1 (a 4xx is not retried)", n)
			}
			if n := len(s.waits()) - before; n != 0 {
				t.Errorf("waits: got %d, want 0", n)
			}
		})
	}
	if ids := ts.eventIDs(companyID); len(ids) != 1 {
		t.Errorf("the company's event log: got %d events, want 1", len(ids))
	}
}

// A 500 is retried on a call that carries an idempotency key, and not on
// one that does not.
func TestInternalErrorRetriedOnlyWhenIdempotent(t *testing.T) {
	ts := startService(t)
	px := newProxy(t, ts.url)
	var s sleeps
	c := newClient(t, px.URL, adminKey, &s)
	_, companyID := fixture(t, c)
	fail := func(times int) {
		px.reset()
		px.setIntercept(func(n int, in proxied, w http.ResponseWriter, r *http.Request) bool {
			if n > times {
				return false
			}
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"error":{"code":"internal_error","message":"Internal error."}}`))
			return true
		})
	}

	fail(1)
	ev, err := c.CreateEvent(context.Background(), invoice(companyID, 1))
	if err != nil {
		t.Fatalf("CreateEvent after a 500: got %v, want the event", err)
	}
	if n := len(px.requests()); n != 2 {
		t.Errorf("CreateEvent: requests: got %d, want 2", n)
	}
	if ids := ts.eventIDs(companyID); len(ids) != 1 || ids[0] != ev.ID {
		t.Errorf("the event log: got %v, want [%s]", ids, ev.ID)
	}

	fail(1)
	_, err = c.CreateAccount(context.Background(), client.AccountInput{Name: "Other"})
	if !client.IsCode(err, client.CodeInternalError) || client.StatusCode(err) != 500 {
		t.Errorf("CreateAccount after a 500: got %v, want the 500 internal_error", err)
	}
	if n := len(px.requests()); n != 1 {
		t.Errorf("CreateAccount: requests: got %d, want 1", n)
	}

	fail(1)
	if _, err := c.GetCompany(context.Background(), companyID); err != nil {
		t.Errorf("GetCompany after a 500: got %v, want the company", err)
	}
	if n := len(px.requests()); n != 2 {
		t.Errorf("GetCompany: requests: got %d, want 2", n)
	}
}

// The iterators walk more than one page, newest first, following
// starting_after until has_more is false, and stop asking when the loop
// stops.
func TestIterators(t *testing.T) {
	ts := startService(t)
	px := newProxy(t, ts.url)
	var s sleeps
	c := newClient(t, px.URL, adminKey, &s)
	accountID, companyID := fixture(t, c)
	ctx := context.Background()

	sink := newSink(t)
	ep, err := c.CreateEndpoint(ctx, client.CompanyOwner(companyID), client.EndpointInput{URL: sink.URL + "/hook", EnabledEvents: []string{"invoice.*"}})
	if err != nil {
		t.Fatalf("CreateEndpoint: %v", err)
	}
	if ep.Secret == "" || ep.Scope != "company" || ep.CompanyID != companyID {
		t.Errorf("CreateEndpoint: got %+v, want a company endpoint of %s with its secret", ep, companyID)
	}
	got, err := c.GetEndpoint(ctx, ep.Owner(), ep.ID)
	if err != nil || got.ID != ep.ID || got.Secret != "" || got.URL != ep.URL {
		t.Errorf("GetEndpoint: got %+v, %v; want the endpoint without its secret", got, err)
	}
	accountEP, err := c.CreateEndpoint(ctx, client.AccountOwner(accountID), client.EndpointInput{URL: sink.URL + "/account", EnabledEvents: []string{"*"}, Relationships: []string{"own"}})
	if err != nil || accountEP.Scope != "account" || !slices.Equal(accountEP.Relationships, []string{"own"}) {
		t.Errorf("CreateEndpoint of an account: got %+v, %v", accountEP, err)
	}

	var created []string
	for i := range 7 {
		ev, err := c.CreateEvent(ctx, invoice(companyID, i))
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, ev.ID)
	}
	newestFirst := slices.Clone(created)
	slices.Reverse(newestFirst)

	for name, owner := range map[string]client.Owner{"company": client.CompanyOwner(companyID), "account": client.AccountOwner(accountID)} {
		t.Run("events of the "+name, func(t *testing.T) {
			px.reset()
			var ids []string
			for ev, err := range c.ListEvents(ctx, owner, &client.EventListParams{Limit: 3}) {
				if err != nil {
					t.Fatalf("ListEvents: %v", err)
				}
				ids = append(ids, ev.ID)
			}
			if !slices.Equal(ids, newestFirst) {
				t.Errorf("ListEvents: got %v, want %v", ids, newestFirst)
			}
			reqs := px.requests()
			if len(reqs) != 3 {
				t.Fatalf("pages: got %d, want 3", len(reqs))
			}
			wantQuery := []string{"limit=3", "limit=3&starting_after=" + newestFirst[2], "limit=3&starting_after=" + newestFirst[5]}
			for i, r := range reqs {
				if r.query != wantQuery[i] {
					t.Errorf("page %d: query: got %q, want %q", i, r.query, wantQuery[i])
				}
			}
		})
	}

	t.Run("stopping early", func(t *testing.T) {
		px.reset()
		n := 0
		for _, err := range c.ListEvents(ctx, client.CompanyOwner(companyID), &client.EventListParams{Limit: 3}) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 2 {
				break
			}
		}
		if got := len(px.requests()); got != 1 {
			t.Errorf("pages: got %d, want 1", got)
		}
	})

	t.Run("filters", func(t *testing.T) {
		px.reset()
		p := &client.EventListParams{Type: "invoice.paid", CreatedGTE: time.Unix(1, 0), CreatedLT: time.Now().Add(time.Hour)}
		for ev, err := range c.ListEvents(ctx, client.CompanyOwner(companyID), p) {
			t.Errorf("ListEvents of invoice.paid: got %v, %v; want nothing", ev, err)
		}
		want := "created_gte=1&created_lt=" + strconv.FormatInt(p.CreatedLT.Unix(), 10) + "&type=invoice.paid"
		if reqs := px.requests(); len(reqs) != 1 || reqs[0].query != want {
			t.Errorf("requests: got %+v, want one with %q", reqs, want)
		}
	})

	t.Run("an error ends the walk", func(t *testing.T) {
		var errs []error
		for ev, err := range c.ListEvents(ctx, client.CompanyOwner("01a22917-0000-7000-8000-000000000000"), nil) {
			if ev != nil {
				t.Errorf("got event %v, want none", ev)
			}
			errs = append(errs, err)
		}
		if len(errs) != 1 || !client.IsCode(errs[0], client.CodeNotFound) {
			t.Errorf("got %v, want one not_found", errs)
		}
		for _, err := range c.ListEvents(ctx, client.Owner{}, nil) {
			if err == nil {
				t.Errorf("ListEvents of the zero Owner: got no error")
			}
		}
	})

	t.Run("deliveries", func(t *testing.T) {
		// Deliveries exist once the registration has answered (SPEC 3).
		px.reset()
		var deliveries []*client.Delivery
		for d, err := range c.ListDeliveries(ctx, ep.Owner(), ep.ID, &client.DeliveryListParams{Limit: 2}) {
			if err != nil {
				t.Fatalf("ListDeliveries: %v", err)
			}
			deliveries = append(deliveries, d)
		}
		var events []string
		for _, d := range deliveries {
			events = append(events, d.EventID)
			if d.EndpointID != ep.ID || d.EventType != "invoice.sent" || d.Attempts != nil {
				t.Errorf("delivery %+v: want one of %s, invoice.sent, without attempts", d, ep.ID)
			}
		}
		if !slices.Equal(events, newestFirst) {
			t.Errorf("the deliveries' events: got %v, want %v", events, newestFirst)
		}
		if n := len(px.requests()); n != 4 {
			t.Errorf("pages: got %d, want 4", n)
		}

		page, err := c.ListDeliveriesPage(ctx, ep.Owner(), ep.ID, &client.DeliveryListParams{EventID: created[0]})
		if err != nil || len(page.Data) != 1 || page.HasMore || page.Object != "list" {
			t.Fatalf("ListDeliveriesPage of one event: got %+v, %v", page, err)
		}
		id := page.Data[0].ID
		deadline := time.Now().Add(10 * time.Second)
		for {
			d, err := c.GetDelivery(ctx, ep.Owner(), ep.ID, id)
			if err != nil {
				t.Fatalf("GetDelivery: %v", err)
			}
			if d.Status == "delivered" {
				if len(d.Attempts) != 1 || d.Attempts[0].Number != 1 || d.Attempts[0].ResponseStatus == nil || *d.Attempts[0].ResponseStatus != 200 {
					t.Errorf("GetDelivery: attempts: got %+v, want one answered 200", d.Attempts)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("delivery %s: got status %s after 10 s, want delivered", id, d.Status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("reads", func(t *testing.T) {
		ev, err := c.GetEvent(ctx, created[3])
		if err != nil || ev.ID != created[3] || ev.Type != "invoice.sent" || ev.CompanyID == nil || *ev.CompanyID != companyID ||
			ev.AccountID != accountID || !ev.Livemode || ev.Test || ev.Object != "event" || ev.Data.Type != "invoice.sent" || objectN(t, ev) != 3 {
			t.Errorf("GetEvent: got %+v, %v", ev, err)
		}
		a, err := c.GetAccount(ctx, accountID)
		if err != nil || a.ID != accountID || a.Name != "Acme Consulting" || a.ProvisionedBy != nil {
			t.Errorf("GetAccount: got %+v, %v", a, err)
		}
		co, err := c.GetCompany(ctx, companyID)
		if err != nil || co.ID != companyID || co.NIF != "B12345674" || co.AccountID != accountID {
			t.Errorf("GetCompany: got %+v, %v", co, err)
		}
	})
}

// sink is a loopback receiver answering 200.
type sink struct{ URL string }

func newSink(t *testing.T) *sink {
	srv := newProxy(t, "http://127.0.0.1:1") // never forwards: it answers
	srv.setIntercept(func(int, proxied, http.ResponseWriter, *http.Request) bool { return true })
	return &sink{URL: srv.URL}
}
