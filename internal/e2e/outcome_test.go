package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/service"
)

// TestOutcomeTable checks SPEC section 5's outcome table row by row: one
// endpoint per row, each answering its way, each receiving one event.
func TestOutcomeTable(t *testing.T) {
	// metadata.test resolves to a public address when the endpoint is
	// created and to the cloud metadata address when it is called.
	var lookups atomic.Int32
	lookup := func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		if host == "metadata.test" {
			if lookups.Add(1) == 1 {
				return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		}
		return net.DefaultResolver.LookupNetIP(ctx, network, host)
	}
	ts := startService(t, "", func(c *service.Config) {
		c.AttemptTimeout = 500 * time.Millisecond
		c.Lookup = lookup
	})
	acme := ts.newAccount("Acme", "", "B12345674")
	redirectTarget := newSink(t)
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedURL := "http://" + closed.Addr().String() + "/hook"
	closed.Close()

	status := func(code int) func(int, http.ResponseWriter, *http.Request) {
		return func(_ int, w http.ResponseWriter, r *http.Request) {
			if code/100 == 3 {
				w.Header().Set("Location", redirectTarget.URL)
			}
			w.WriteHeader(code)
			fmt.Fprintf(w, "answer %d", code)
		}
	}
	rows := []struct {
		name       string
		respond    func(int, http.ResponseWriter, *http.Request)
		url        string // instead of a sink
		wantStatus string
		wantReason string
		wantCode   int    // last_response_status; 0 is null
		wantError  string // part of the attempt's error
	}{
		{name: "200", respond: status(200), wantStatus: "delivered", wantCode: 200},
		{name: "201", respond: status(201), wantStatus: "delivered", wantCode: 201},
		{name: "204", respond: status(204), wantStatus: "delivered", wantCode: 204},
		{name: "299", respond: status(299), wantStatus: "delivered", wantCode: 299},
		{name: "500", respond: status(500), wantStatus: "pending", wantCode: 500},
		{name: "502", respond: status(502), wantStatus: "pending", wantCode: 502},
		{name: "503", respond: status(503), wantStatus: "pending", wantCode: 503},
		{name: "408", respond: status(408), wantStatus: "pending", wantCode: 408},
		{name: "425", respond: status(425), wantStatus: "pending", wantCode: 425},
		{name: "429", respond: status(429), wantStatus: "pending", wantCode: 429},
		{name: "301", respond: status(301), wantStatus: "pending", wantCode: 301, wantError: "redirect not followed"},
		{name: "302", respond: status(302), wantStatus: "pending", wantCode: 302, wantError: "redirect not followed"},
		{name: "307", respond: status(307), wantStatus: "pending", wantCode: 307, wantError: "redirect not followed"},
		{name: "timeout", respond: func(_ int, w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
		}, wantStatus: "pending", wantError: "timeout"},
		{name: "body_cut_by_timeout", respond: func(_ int, w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
		}, wantStatus: "pending", wantCode: 200, wantError: "incomplete answer"},
		{name: "refused", url: closedURL, wantStatus: "pending", wantError: "connection"},
		{name: "400", respond: status(400), wantStatus: "failed_permanently", wantReason: "non_retryable_status", wantCode: 400},
		{name: "401", respond: status(401), wantStatus: "failed_permanently", wantReason: "non_retryable_status", wantCode: 401},
		{name: "403", respond: status(403), wantStatus: "failed_permanently", wantReason: "non_retryable_status", wantCode: 403},
		{name: "404", respond: status(404), wantStatus: "failed_permanently", wantReason: "non_retryable_status", wantCode: 404},
		{name: "410", respond: status(410), wantStatus: "failed_permanently", wantReason: "non_retryable_status", wantCode: 410},
		{name: "422", respond: status(422), wantStatus: "failed_permanently", wantReason: "non_retryable_status", wantCode: 422},
		{name: "address", url: "http://metadata.test/hook", wantStatus: "failed_permanently", wantReason: "address_not_allowed", wantError: "not allowed"},
	}
	type made struct {
		ep   endpoint
		sink *sink
	}
	eps := make([]made, len(rows))
	for i, row := range rows {
		url := row.url
		var s *sink
		if url == "" {
			s = newSink(t)
			s.setRespond(row.respond)
			url = s.URL
		}
		eps[i] = made{ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": url, "enabled_events": []string{"row.r" + row.name}}), s}
	}
	for _, row := range rows {
		ts.registerEvent(object{"type": "row.r" + row.name, "company_id": acme.companyID, "data": object{"object": object{"object": "row"}}})
	}
	ts.waitFor("one attempt per row", 10*time.Second, func() bool { return ts.attempts() >= len(rows) })

	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			ds := ts.deliveries(eps[i].ep, acme.key)
			if len(ds) != 1 {
				t.Fatalf("got %d deliveries, want 1", len(ds))
			}
			var d object
			ts.must(200, "GET", eps[i].ep.path+"/deliveries/"+ds[0]["id"].(string), acme.key, nil, &d)
			if d["status"] != row.wantStatus || str(d["reason"]) != str(nilIfEmpty(row.wantReason)) {
				t.Errorf("status %v reason %v; want %s %q", d["status"], d["reason"], row.wantStatus, row.wantReason)
			}
			wantCode := any(nil)
			if row.wantCode != 0 {
				wantCode = float64(row.wantCode)
			}
			if d["last_response_status"] != wantCode {
				t.Errorf("last_response_status: got %v, want %v", d["last_response_status"], wantCode)
			}
			next := d["next_attempt_at"]
			if row.wantStatus == "pending" {
				wait := time.Until(time.Unix(int64(next.(float64)), 0))
				if wait < 50*time.Second || wait > 67*time.Second {
					t.Errorf("next attempt in %s, want 1 min ± 10 %%", wait.Round(time.Second))
				}
			} else if next != nil {
				t.Errorf("next_attempt_at: got %v, want null", next)
			}
			attempts := d["attempts"].([]any)
			if len(attempts) != 1 {
				t.Fatalf("got %d attempts, want 1", len(attempts))
			}
			a := attempts[0].(map[string]any)
			if a["number"] != 1.0 || a["manual"] != false || a["response_status"] != wantCode {
				t.Errorf("attempt: %v", a)
			}
			if row.wantError != "" && !strings.Contains(str(a["error"]), row.wantError) {
				t.Errorf("attempt error: got %v, want it to mention %q", a["error"], row.wantError)
			}
			if row.wantError == "" && a["error"] != nil {
				t.Errorf("attempt error: got %v, want null", a["error"])
			}
			if row.wantCode != 0 && row.name != "204" && !strings.HasPrefix(str(a["response_body"]), "answer") && row.name != "body_cut_by_timeout" {
				t.Errorf("response body: got %q", a["response_body"])
			}
			if s := eps[i].sink; s != nil && len(s.requests()) != 1 {
				t.Errorf("sink got %d requests, want 1", len(s.requests()))
			}
		})
	}
	// The portal's list shows each row's status, or why there was none
	// (it showed a dash for an attempt without an answer).
	// (This service's links name the default public URL: open the link's
	// path on it.)
	pc := openPortalOn(ts, acme.accountID)
	cell := regexp.MustCompile(`<td data-label="Last response"><span class="code [^"]*"[^>]*>([^<]*)</span>`)
	for i, row := range rows {
		want := fmt.Sprint(row.wantCode)
		switch row.name {
		case "timeout":
			want = "timeout"
		case "body_cut_by_timeout":
			want = "200, incomplete answer"
		case "refused":
			want = "connection refused"
		case "address":
			want = "address not allowed"
		}
		_, page := pc.get("/portal/endpoints/" + eps[i].ep.id)
		if m := cell.FindStringSubmatch(page); m == nil || m[1] != want {
			t.Errorf("%s: the portal's last response: got %v, want %q", row.name, m, want)
		}
	}
	if n := len(redirectTarget.requests()); n != 0 {
		t.Errorf("redirect target got %d requests: redirects were followed", n)
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
