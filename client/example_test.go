package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/factuarea/webhooks/client"
)

// fakeAPI imitates a little of the service, for the examples: it registers
// events of company "co_1" (once per idempotency key), refuses other
// companies, and lists them newest first. unavailable makes it answer the
// next requests 503 with Retry-After: 1, as the service does while its
// database is down.
type fakeAPI struct {
	mu          sync.Mutex
	events      []*client.Event
	keys        map[string]*client.Event
	bodies      map[string]string
	unavailable int
}

func newFakeAPI() (*httptest.Server, *fakeAPI) {
	f := &fakeAPI{keys: map[string]*client.Event{}, bodies: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/events", func(w http.ResponseWriter, r *http.Request) {
		var in client.EventInput
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.unavailable > 0 {
			f.unavailable--
			w.Header().Set("Retry-After", "1")
			writeJSON(w, 503, errorBody(client.CodeServiceUnavailable, "The service cannot reach its database right now: try again in a moment."))
			return
		}
		status, v := f.register(in, r.Header.Get("Idempotency-Key"))
		writeJSON(w, status, v)
	})
	mux.HandleFunc("POST /v1/events/batch", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Events []struct {
				client.EventInput
				Key string `json:"idempotency_key"`
			} `json:"events"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		defer f.mu.Unlock()
		var out []map[string]any
		for _, item := range in.Events {
			status, v := f.register(item.EventInput, item.Key)
			if status < 300 {
				out = append(out, map[string]any{"status": status, "event": v})
			} else {
				out = append(out, map[string]any{"status": status, "error": v.(map[string]any)["error"]})
			}
		}
		writeJSON(w, 200, map[string]any{"object": "batch_result", "data": out})
	})
	mux.HandleFunc("GET /v1/companies/{company}/events", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		if limit == 0 {
			limit = 20
		}
		newest := slices.Clone(f.events)
		slices.Reverse(newest)
		if after := r.URL.Query().Get("starting_after"); after != "" {
			i := slices.IndexFunc(newest, func(e *client.Event) bool { return e.ID == after })
			newest = newest[i+1:]
		}
		page := newest[:min(limit, len(newest))]
		writeJSON(w, 200, client.List[*client.Event]{Object: "list", Data: page, HasMore: len(newest) > len(page)})
	})
	return httptest.NewServer(mux), f
}

func (f *fakeAPI) register(in client.EventInput, key string) (int, any) {
	if in.CompanyID != "co_1" {
		return 422, errorBody(client.CodeUnknownCompany, "company_id "+in.CompanyID+" is not a company.")
	}
	body := fmt.Sprint(in.Type, string(in.Data.Object))
	if ev, ok := f.keys[key]; ok {
		if f.bodies[key] != body {
			return 409, errorBody(client.CodeIdempotencyKeyReused, "The Idempotency-Key "+key+" was used with another request.")
		}
		return 200, ev
	}
	company := in.CompanyID
	ev := &client.Event{
		ID: fmt.Sprintf("evt_%03d", len(f.events)+1), Object: "event", Type: in.Type, APIVersion: "2026-09-23",
		Created: 1795985715, Livemode: true, AccountID: "acct_1", CompanyID: &company,
		Data: client.EventData{Type: in.Type, Object: in.Data.Object},
	}
	f.events = append(f.events, ev)
	if key != "" {
		f.keys[key], f.bodies[key] = ev, body
	}
	return 201, ev
}

func errorBody(code, message string) map[string]any {
	return map[string]any{"error": map[string]any{"code": code, "message": message}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Register an invoice's event once: the key names the invoice and what
// happened to it, so sending it again (a retry, a restart) registers
// nothing more.
func Example() {
	server, _ := newFakeAPI() // the service: https://webhooks.example.com
	defer server.Close()

	c, err := client.New(server.URL, "admin-key") // os.Getenv("WEBHOOKS_ADMIN_KEY")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	in := client.EventInput{
		Type:      "invoice.sent",
		CompanyID: "co_1",
		Data: client.EventInputData{Object: json.RawMessage(
			`{"object":"invoice","id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42","number":"FAC-2026-00042","status":"sent","total":"1210.00","currency":"EUR"}`)},
		IdempotencyKey: "FAC-2026-00042-sent",
	}
	ev, err := c.CreateEvent(ctx, in)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("registered", ev.ID, ev.Type)

	again, err := c.CreateEvent(ctx, in)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sent again:", again.ID)
	// Output:
	// registered evt_001 invoice.sent
	// sent again: evt_001
}

// While the service cannot reach its database it answers 503 with
// Retry-After; the client waits and sends the same request, with the same
// key, again. WithSleep shows the waits (a test would not wait at all).
func ExampleWithRetryPolicy() {
	server, api := newFakeAPI()
	defer server.Close()
	api.unavailable = 2

	c, err := client.New(server.URL, "admin-key",
		client.WithRetryPolicy(client.RetryPolicy{MaxAttempts: 4, MaxElapsed: 30 * time.Second}),
		client.WithSleep(func(ctx context.Context, d time.Duration) error {
			fmt.Println("waiting", d.Round(time.Second))
			return nil // time.Sleep(d) in earnest
		}))
	if err != nil {
		log.Fatal(err)
	}
	ev, err := c.CreateEvent(context.Background(), client.EventInput{
		Type: "invoice.paid", CompanyID: "co_1",
		Data: client.EventInputData{Object: json.RawMessage(`{"object":"invoice","number":"FAC-2026-00042"}`)},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("registered", ev.ID)
	// Output:
	// waiting 1s
	// waiting 1s
	// registered evt_001
}

// A batch registers or refuses each event on its own, and reports each in
// the order given.
func ExampleClient_CreateEvents() {
	server, _ := newFakeAPI()
	defer server.Close()
	c, err := client.New(server.URL, "admin-key")
	if err != nil {
		log.Fatal(err)
	}
	invoice := func(company, number string) client.EventInput {
		return client.EventInput{
			Type: "invoice.sent", CompanyID: company, IdempotencyKey: number + "-sent",
			Data: client.EventInputData{Object: json.RawMessage(`{"object":"invoice","number":"` + number + `"}`)},
		}
	}
	results, err := c.CreateEvents(context.Background(), []client.EventInput{
		invoice("co_1", "FAC-2026-00042"),
		invoice("co_9", "FAC-2026-00043"),
		invoice("co_1", "FAC-2026-00044"),
		invoice("co_1", "FAC-2026-00042"), // the same key and event: the first's
	})
	if err != nil {
		log.Fatal(err) // a batch failed as a whole: resend the Status 0 results
	}
	for i, r := range results {
		if r.Err != nil {
			fmt.Println(i, r.Status, r.Err.Code)
			continue
		}
		fmt.Println(i, r.Status, r.Event.ID)
	}
	// Output:
	// 0 201 evt_001
	// 1 422 unknown_company
	// 2 201 evt_002
	// 3 200 evt_001
}

// ListEvents walks every page of a company's event log, newest first.
func ExampleClient_ListEvents() {
	server, _ := newFakeAPI()
	defer server.Close()
	c, err := client.New(server.URL, "admin-key")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, status := range []string{"draft", "sent", "paid"} {
		if _, err := c.CreateEvent(ctx, client.EventInput{
			Type: "invoice." + status, CompanyID: "co_1",
			Data: client.EventInputData{Object: json.RawMessage(`{"object":"invoice","status":"` + status + `"}`)},
		}); err != nil {
			log.Fatal(err)
		}
	}
	// Two per page: two requests.
	for ev, err := range c.ListEvents(ctx, client.CompanyOwner("co_1"), &client.EventListParams{Limit: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ev.ID, ev.Type)
	}
	// Output:
	// evt_003 invoice.paid
	// evt_002 invoice.sent
	// evt_001 invoice.draft
}

// The API's refusals are typed errors: test the code with IsCode, or read
// the whole error with errors.As.
func ExampleIsCode() {
	server, _ := newFakeAPI()
	defer server.Close()
	c, err := client.New(server.URL, "admin-key")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	sent := client.EventInput{Type: "invoice.sent", CompanyID: "co_1", IdempotencyKey: "FAC-2026-00042-sent",
		Data: client.EventInputData{Object: json.RawMessage(`{"object":"invoice","number":"FAC-2026-00042"}`)}}
	if _, err := c.CreateEvent(ctx, sent); err != nil {
		log.Fatal(err)
	}
	paid := sent
	paid.Type = "invoice.paid" // another event, and the same key by mistake
	_, err = c.CreateEvent(ctx, paid)
	if client.IsCode(err, client.CodeIdempotencyKeyReused) {
		fmt.Println("the key names another event: give this one its own")
	}
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code)
	}
	// Output:
	// the key names another event: give this one its own
	// 409 idempotency_key_reused
}
