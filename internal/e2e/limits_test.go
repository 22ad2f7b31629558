package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLimits_EventBody: an event body over 256 KiB answers 413 and
// registers nothing; one just under the limit is registered.
func TestLimits_EventBody(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"*"}})
	event := func(size int) []byte {
		head := `{"type":"invoice.sent","company_id":"` + acme.companyID + `","data":{"object":{"object":"invoice","padding":"`
		tail := `"}}}`
		return []byte(head + strings.Repeat("a", size-len(head)-len(tail)) + tail)
	}
	for _, size := range []int{256<<10 + 1, 300 << 10, 1 << 20} {
		status, raw := ts.raw("POST", "/v1/events", adminKey, event(size), nil)
		if e := replyError(raw); status != 413 || e.Error.Code != "request_too_large" || !strings.Contains(e.Error.Message, "256 KiB") {
			t.Errorf("%d-byte event: got %d %s, want 413 request_too_large", size, status, clip(raw))
		}
	}
	var l struct{ Data []object }
	ts.must(200, "GET", "/v1/companies/"+acme.companyID+"/events", acme.key, nil, &l)
	if len(l.Data) != 0 {
		t.Errorf("got %d events after the refusals, want 0", len(l.Data))
	}
	if status, raw := ts.raw("POST", "/v1/events", adminKey, event(256<<10), nil); status != 201 {
		t.Errorf("a 256 KiB event: got %d %s, want 201", status, clip(raw))
	}
	s.waitRequests(t, 1, 5*time.Second)
}

// TestLimits_Endpoint: the endpoint fields' limits, each refused with 400
// and a message that says what is wrong.
func TestLimits_Endpoint(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	company, account := "/v1/companies/"+acme.companyID, "/v1/accounts/"+acme.accountID
	types := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("invoice.t%d", i))
		}
		return out
	}
	tests := []struct {
		name   string
		parent string
		in     object
		want   string // part of the message
	}{
		{"101 enabled_events", company, object{"enabled_events": types(101)}, "at most 100"},
		{"no enabled_events", company, object{"enabled_events": []string{}}, "at least one"},
		{"single label", company, object{"enabled_events": []string{"invoice"}}, `"invoice"`},
		{"upper case", company, object{"enabled_events": []string{"Invoice.Sent"}}, `"Invoice.Sent"`},
		{"trailing dot", company, object{"enabled_events": []string{"invoice."}}, `"invoice."`},
		{"leading wildcard", company, object{"enabled_events": []string{"*.sent"}}, `"*.sent"`},
		{"inner wildcard", company, object{"enabled_events": []string{"invoice.*.sent"}}, `"invoice.*.sent"`},
		{"glued wildcard", company, object{"enabled_events": []string{"invoice*"}}, `"invoice*"`},
		{"empty pattern", company, object{"enabled_events": []string{""}}, `""`},
		{"account.* on a company endpoint", company, object{"enabled_events": []string{"account.*"}}, "account endpoints"},
		{"account type on a company endpoint", company, object{"enabled_events": []string{"invoice.sent", "account.updated"}}, "account endpoints"},
		{"description of 501", company, object{"enabled_events": []string{"*"}, "description": strings.Repeat("d", 501)}, "at most 500"},
		{"unknown api_version", company, object{"enabled_events": []string{"*"}, "api_version": "2024-01-01"}, "2024-01-01"},
		{"relationships on a company endpoint", company, object{"enabled_events": []string{"*"}, "relationships": []string{"own"}}, "relationships"},
		{"unknown relationship", account, object{"enabled_events": []string{"*"}, "relationships": []string{"friend"}}, `"friend"`},
		{"no relationship", account, object{"enabled_events": []string{"*"}, "relationships": []string{}}, "relationships"},
		{"enabled_events of the wrong type", company, object{"enabled_events": "invoice.sent"}, "enabled_events"},
	}
	for _, tt := range tests {
		tt.in["url"] = s.URL
		status, raw := ts.raw("POST", tt.parent+"/webhook_endpoints", acme.key, tt.in, nil)
		e := replyError(raw)
		if status != 400 || e.Error.Code != "invalid_request" || !strings.Contains(e.Error.Message, tt.want) {
			t.Errorf("%s: got %d %s, want 400 invalid_request mentioning %q", tt.name, status, clip(raw), tt.want)
		}
	}
	for _, parent := range []string{company, account} {
		var l struct{ Data []object }
		ts.must(200, "GET", parent+"/webhook_endpoints", acme.key, nil, &l)
		if len(l.Data) != 0 {
			t.Errorf("%s: got %d endpoints after the refusals, want 0", parent, len(l.Data))
		}
	}
	// At the limits, accepted.
	ep := ts.newEndpoint(company, acme.key, object{"url": s.URL, "enabled_events": types(100), "description": strings.Repeat("é", 500)})
	ts.newEndpoint(account, acme.key, object{"url": s.URL, "enabled_events": []string{"account.*"}})
	// And the same limits on PATCH.
	for _, in := range []object{
		{"enabled_events": types(101)},
		{"enabled_events": []string{"account.*"}},
		{"enabled_events": []string{"*.sent"}},
		{"description": strings.Repeat("d", 501)},
		{"status": "paused"},
	} {
		if status, raw := ts.raw("PATCH", ep.path, acme.key, in, nil); status != 400 {
			t.Errorf("PATCH %.60v: got %d %s, want 400", in, status, clip(raw))
		}
	}
}

// postRoutes are the routes that take a body.
func postRoutes() []apiRoute {
	var out []apiRoute
	for _, r := range apiRoutes {
		if r.method == "POST" || r.method == "PATCH" {
			out = append(out, r)
		}
	}
	return out
}

// bodyOf is a route's valid body as a JSON object.
func bodyOf(r apiRoute, v objectIDs) map[string]any {
	in := map[string]any{}
	if r.body != nil {
		b, _ := json.Marshal(r.body(v))
		json.Unmarshal(b, &in)
	}
	return in
}

// TestLimits_Strictness: on every route that takes a body, an unknown field
// answers 400 unknown_field naming it, and malformed JSON 400 invalid_json;
// neither changes anything.
func TestLimits_Strictness(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "webhooks.db")
	ts := startService(t, dbPath)
	a := ts.newTenant("Acme", "B12345674")
	before := rowCounts(t, dbPath)
	routes := postRoutes()
	if len(routes) < 15 {
		t.Fatalf("only %d routes take a body", len(routes))
	}
	for _, r := range routes {
		key := a.key
		if r.admin {
			key = adminKey
		}
		path := a.ids.path(r.pattern)
		in := bodyOf(r, a.ids)
		in["bogus_field"] = true
		enc, _ := json.Marshal(in)
		status, raw := ts.rawDirect(r.method, path, key, enc)
		if e := replyError(raw); status != 400 || e.Error.Code != "unknown_field" || !strings.Contains(e.Error.Message, "bogus_field") {
			t.Errorf("%s with an unknown field: got %d %s, want 400 unknown_field naming bogus_field", r, status, clip(raw))
		}
		for _, body := range []string{`{"a":`, `{"a" 1}`, `{}}`, `{}]`, `{} {}`, `{},`, `[1,2]`, `"text"`, `{'a':1}`, "\xff"} {
			status, raw := ts.rawDirect(r.method, path, key, []byte(body))
			if e := replyError(raw); status != 400 || e.Error.Code != "invalid_json" {
				t.Errorf("%s with %q: got %d %s, want 400 invalid_json", r, body, status, clip(raw))
			}
		}
	}
	// Nested unknown fields and wrong types name the field.
	for _, c := range []struct {
		method, path string
		body         string
		code, field  string
	}{
		{"POST", "/v1/events", `{"type":"invoice.sent","company_id":"` + a.companyID + `","data":{"object":{},"bogus_field":1}}`, "unknown_field", "bogus_field"},
		{"POST", a.companyEP.path + "/rotate_secret", `{"expires_in":"soon"}`, "invalid_request", "expires_in"},
		{"POST", a.companyEP.path + "/recover", `{"since":"yesterday"}`, "invalid_request", "since"},
		{"PATCH", a.companyEP.path, `{"enabled_events":"*"}`, "invalid_request", "enabled_events"},
		{"POST", "/v1/accounts", `{"name":["Mallory"]}`, "invalid_request", "name"},
	} {
		key := a.key
		if c.path == "/v1/events" || c.path == "/v1/accounts" {
			key = adminKey
		}
		status, raw := ts.rawDirect(c.method, c.path, key, []byte(c.body))
		if e := replyError(raw); status != 400 || e.Error.Code != c.code || !strings.Contains(e.Error.Message, c.field) {
			t.Errorf("%s %s %s: got %d %s, want 400 %s naming %s", c.method, c.path, c.body, status, clip(raw), c.code, c.field)
		}
	}
	if got := rowCounts(t, dbPath); !sameCounts(got, before) {
		t.Errorf("rows: got %v, want %v", got, before)
	}
}

// rawDirect is ts.raw without the OpenAPI contract check that
// contract_test.go puts on http.DefaultClient: the strictness probes send
// bodies that no document describes, and what they check is the service's
// own answer.
func (ts *testService) rawDirect(method, path, key string, body []byte) (int, []byte) {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.url+path, bytes.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := (&http.Client{Transport: http.DefaultTransport}).Do(req)
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

// TestLimits_HugeBody sends a 10 MiB body to every route that takes one,
// over a raw connection that sends only its first MiB: each answers 413
// without waiting for the rest, so it cannot have read it all.
func TestLimits_HugeBody(t *testing.T) {
	ts := startService(t, "")
	a := ts.newTenant("Acme", "B12345674")
	addr := strings.TrimPrefix(ts.url, "http://")
	for _, r := range postRoutes() {
		key := a.key
		if r.admin {
			key = adminKey
		}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
			r.method, a.ids.path(r.pattern), addr, key, 10<<20)
		sent := make(chan int, 1)
		go func() {
			// The start of a valid object, so that only the size can stop
			// the decoder; then silence.
			chunk := []byte(`{"description":"` + strings.Repeat("a", 64<<10-16))
			n := 0
			for n < 1<<20 {
				w, err := conn.Write(chunk)
				n += w
				if err != nil {
					break
				}
				chunk = []byte(strings.Repeat("a", 64<<10))
			}
			sent <- n
		}()
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Errorf("%s: no answer while the body was still coming: %v", r, err)
			conn.Close()
			continue
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if e := replyError(raw); resp.StatusCode != 413 || e.Error.Code != "request_too_large" {
			t.Errorf("%s with a 10 MiB body: got %d %s, want 413 request_too_large", r, resp.StatusCode, clip(raw))
		}
		conn.Close()
		if n := <-sent; n > 1<<20+64<<10 {
			t.Errorf("%s: sent %d bytes", r, n)
		}
	}
	// The service still serves.
	ts.must(200, "GET", "/v1/accounts/"+a.accountID, a.key, nil, nil)
}

// TestLimits_SlowClient: a client that sends its headers a byte at a time
// is cut off when the server's ReadHeaderTimeout (5 s, set in
// service.Run) ends, and the server keeps serving others meanwhile. Headers
// over MaxHeaderBytes (64 KiB) are refused with 431.
func TestLimits_SlowClient(t *testing.T) {
	ts := startService(t, "")
	addr := strings.TrimPrefix(ts.url, "http://")

	big, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	fmt.Fprintf(big, "GET /healthz HTTP/1.1\r\nHost: %s\r\nX-Big: %s\r\n\r\n", addr, strings.Repeat("b", 100<<10))
	big.SetReadDeadline(time.Now().Add(5 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(big), nil); err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("100 KiB of headers: got %v, %v; want 431", resp, err)
	}

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		// At 5 bytes a second these headers would take 40 s.
		req := "GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\nX-Slow: " + strings.Repeat("s", 200) + "\r\n\r\n"
		for i := 0; i < len(req); i++ {
			if _, err := conn.Write([]byte{req[i]}); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	// Meanwhile others are served.
	time.Sleep(time.Second)
	ts.must(200, "GET", "/healthz", "", nil, nil)

	// The server gives up on the headers: it closes the connection,
	// perhaps after a 400.
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	got, err := io.ReadAll(conn)
	elapsed := time.Since(start)
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the connection was still open after %s", elapsed.Round(time.Millisecond))
	}
	if len(got) > 0 && !strings.HasPrefix(string(got), "HTTP/1.1 400 ") && !strings.HasPrefix(string(got), "HTTP/1.1 408 ") {
		t.Errorf("the slow client got %q, want nothing or a 400", got)
	}
	if elapsed < 4*time.Second || elapsed > 8*time.Second {
		t.Errorf("the slow client was cut off after %s, want about 5 s (ReadHeaderTimeout)", elapsed.Round(time.Millisecond))
	}
}
