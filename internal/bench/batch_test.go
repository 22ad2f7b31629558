package bench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestBatchBody: a batch body is {"events": [...]} of n events, each the
// very body POST /v1/events takes, stamped with the one send time.
func TestBatchBody(t *testing.T) {
	single := appendEvent(nil, "co_1", 1234567890, "")
	var one map[string]any
	if err := json.Unmarshal(single, &one); err != nil {
		t.Fatalf("event body %s: %v", single, err)
	}
	if one["type"] != "invoice.sent" || one["company_id"] != "co_1" || one["livemode"] != false {
		t.Errorf("event body: got %s", single)
	}
	for _, n := range []int{1, 2, 10, MaxBatch} {
		body := (&apiClient{}).batchBody("co_1", n, 1234567890)
		var b struct {
			Events []json.RawMessage `json:"events"`
		}
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			t.Fatalf("n=%d: %v in %s", n, err, body)
		}
		if len(b.Events) != n {
			t.Fatalf("n=%d: got %d events", n, len(b.Events))
		}
		for i, e := range b.Events {
			if string(e) != string(single) {
				t.Errorf("n=%d: event %d is %s, want %s", n, i, e, single)
			}
		}
	}
	// With keys, each event takes the next in turn.
	keyed := &apiClient{keys: 3}
	var keys []string
	for range 4 {
		var ev map[string]any
		json.Unmarshal(appendEvent(nil, "co_1", 1, keyed.nextKey()), &ev)
		keys = append(keys, fmt.Sprint(ev["ordering_key"]))
	}
	if strings.Join(keys, " ") != "inv_1 inv_2 inv_0 inv_1" {
		t.Errorf("ordering keys: got %v", keys)
	}
	// The sink reads the send time back out of the delivered event.
	if !strings.Contains(string(single), `"sent_at":1234567890}`) {
		t.Errorf("event body lacks its send time: %s", single)
	}
}

// TestBatchOutcome: only items of status 201 count as registered; the
// others, and any item the answer lacks, are failures.
func TestBatchOutcome(t *testing.T) {
	for _, c := range []struct {
		body    string
		n, want int
		err     bool
	}{
		{`{"object":"batch_result","data":[{"status":201,"event":{}},{"status":201,"event":{}}]}`, 2, 2, false},
		{`{"object":"batch_result","data":[{"status":201,"event":{}},{"status":422,"error":{"type":"invalid_request_error"}},{"status":201,"event":{}}]}`, 3, 2, true},
		{`{"object":"batch_result","data":[{"status":503,"error":{}},{"status":500,"error":{}}]}`, 2, 0, true},
		{`{"object":"batch_result","data":[{"status":201,"event":{}}]}`, 3, 1, true},
		{`not json`, 3, 0, true},
	} {
		got, err := batchOutcome([]byte(c.body), c.n)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%s (n=%d): got %d, %v; want %d, error %v", c.body, c.n, got, err, c.want, c.err)
		}
	}
}

// TestRegister_Batch: with n > 1 the producers' request goes to the batch
// route, and the items' statuses come back as the count registered.
func TestRegister_Batch(t *testing.T) {
	var singles, batches atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/events":
			singles.Add(1)
			w.WriteHeader(201)
			fmt.Fprint(w, `{"object":"event"}`)
		case "/v1/events/batch":
			batches.Add(1)
			var b struct{ Events []map[string]any }
			if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
				t.Errorf("batch body: %v", err)
			}
			var items []string
			for i := range b.Events {
				if i == 1 {
					items = append(items, `{"status":422,"error":{"message":"no"}}`)
				} else {
					items = append(items, `{"status":201,"event":{}}`)
				}
			}
			w.WriteHeader(200)
			fmt.Fprintf(w, `{"object":"batch_result","data":[%s]}`, strings.Join(items, ","))
		default:
			w.WriteHeader(404)
		}
	}))
	defer srv.Close()
	api := &apiClient{bases: []string{srv.URL}, key: "k", http: &http.Client{Timeout: 5 * time.Second}}
	if ok, err := api.register("co_1", 1); ok != 1 || err != nil {
		t.Errorf("n=1: got %d %v", ok, err)
	}
	if ok, err := api.register("co_1", 5); ok != 4 || err == nil || !strings.Contains(err.Error(), "422") {
		t.Errorf("n=5: got %d %v, want 4 and the 422", ok, err)
	}
	if singles.Load() != 1 || batches.Load() != 1 {
		t.Errorf("requests: %d single, %d batch; want 1 of each", singles.Load(), batches.Load())
	}
}
