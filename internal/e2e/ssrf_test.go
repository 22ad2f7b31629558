package e2e

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/service"
)

// stubResolver answers names from a table, without DNS. A name in rebind
// answers a public address the first time and its internal address after:
// DNS rebinding. Any other name does not exist.
type stubResolver struct {
	mu      sync.Mutex
	names   map[string][]string
	rebind  map[string]string
	lookups map[string]int
}

func (r *stubResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	r.lookups[host]++
	answer := r.names[host]
	if internal, ok := r.rebind[host]; ok {
		answer = []string{"93.184.216.34"}
		if r.lookups[host] > 1 {
			answer = []string{internal}
		}
	}
	if answer == nil {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range answer {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// count says how many times host was looked up.
func (r *stubResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[host]
}

func newStubResolver() *stubResolver {
	return &stubResolver{
		names: map[string][]string{
			"public.example":   {"93.184.216.34"},
			"internal.example": {"10.0.0.1"},
			"mixed.example":    {"127.0.0.1", "::1"},
			"metadata.example": {"169.254.169.254"},
			"mapped.example":   {"::ffff:127.0.0.1"},
		},
		rebind:  map[string]string{},
		lookups: map[string]int{},
	}
}

// ssrfCase is an endpoint URL the service must refuse.
type ssrfCase struct {
	name, url string
	code      string // url_not_allowed or invalid_request
}

// ssrfCases are the URLs no endpoint may have, with the guard exempting
// nothing: internal addresses in every notation, internal names, and
// malformed or disallowed URLs.
var ssrfCases = []ssrfCase{
	// IPv4 loopback, in the notations resolvers accept.
	{"loopback", "http://127.0.0.1/", "url_not_allowed"},
	{"loopback with port", "http://127.0.0.1:8080/hook", "url_not_allowed"},
	{"loopback range", "http://127.255.255.254/", "url_not_allowed"},
	{"decimal", "http://2130706433/", "url_not_allowed"},
	{"octal", "http://0177.0.0.1/", "url_not_allowed"},
	{"octal whole", "http://017700000001/", "url_not_allowed"},
	{"hex", "http://0x7f.0.0.1/", "url_not_allowed"},
	{"hex whole", "http://0x7f000001/", "url_not_allowed"},
	{"shortened", "http://127.1/", "url_not_allowed"},
	{"shortened three parts", "http://127.0.1/", "url_not_allowed"},
	{"trailing dot", "http://127.0.0.1./", "url_not_allowed"},
	{"zero", "http://0/", "url_not_allowed"},
	// IPv6.
	{"ipv6 loopback", "http://[::1]/", "url_not_allowed"},
	{"ipv6 loopback long", "http://[0:0:0:0:0:0:0:1]:8443/", "url_not_allowed"},
	{"ipv4-mapped", "http://[::ffff:127.0.0.1]/", "url_not_allowed"},
	{"ipv4-mapped hex", "http://[::ffff:7f00:1]/", "url_not_allowed"},
	{"ipv4-mapped metadata", "http://[::ffff:169.254.169.254]/", "url_not_allowed"},
	{"ipv4-compatible", "http://[::127.0.0.1]/", "url_not_allowed"},
	{"nat64 loopback", "http://[64:ff9b::7f00:1]/", "url_not_allowed"},
	{"6to4 loopback", "http://[2002:7f00:1::1]/", "url_not_allowed"},
	{"link-local with zone", "http://[fe80::1%25eth0]/", "url_not_allowed"},
	{"public with zone", "http://[2606:4700:4700::1111%25eth0]/", "url_not_allowed"},
	{"ipv6 link-local", "http://[fe80::1]/", "url_not_allowed"},
	{"unique-local", "http://[fc00::1]/", "url_not_allowed"},
	{"unique-local fd", "http://[fd12:3456:789a::1]/", "url_not_allowed"},
	{"ipv6 multicast", "http://[ff02::1]/", "url_not_allowed"},
	{"ipv6 documentation", "http://[2001:db8::1]/", "url_not_allowed"},
	// Unspecified.
	{"unspecified", "http://0.0.0.0/", "url_not_allowed"},
	{"unspecified with port", "http://0.0.0.0:8080/", "url_not_allowed"},
	{"ipv6 unspecified", "http://[::]/", "url_not_allowed"},
	// Link-local and the cloud metadata address.
	{"metadata", "http://169.254.169.254/latest/meta-data/", "url_not_allowed"},
	{"link-local", "http://169.254.0.1/", "url_not_allowed"},
	// Private, shared, multicast, documentation, reserved.
	{"private 10", "http://10.0.0.1/", "url_not_allowed"},
	{"private 10 end", "https://10.255.255.255/", "url_not_allowed"},
	{"private 172.16", "http://172.16.0.1/", "url_not_allowed"},
	{"private 172.31", "http://172.31.255.255/", "url_not_allowed"},
	{"private 192.168", "http://192.168.1.1/", "url_not_allowed"},
	{"shared cgnat", "http://100.64.0.1/", "url_not_allowed"},
	{"multicast", "http://224.0.0.1/", "url_not_allowed"},
	{"documentation 192.0.2", "http://192.0.2.1/", "url_not_allowed"},
	{"documentation 198.51.100", "http://198.51.100.7/", "url_not_allowed"},
	{"documentation 203.0.113", "http://203.0.113.9/", "url_not_allowed"},
	{"benchmarking", "http://198.18.0.1/", "url_not_allowed"},
	{"reserved", "http://240.0.0.1/", "url_not_allowed"},
	{"broadcast", "http://255.255.255.255/", "url_not_allowed"},
	// Names.
	{"localhost", "http://localhost/", "url_not_allowed"},
	{"localhost upper case with port", "http://LOCALHOST:8080/", "url_not_allowed"},
	{"localhost trailing dot", "http://localhost./", "url_not_allowed"},
	{"under localhost", "http://api.localhost/", "url_not_allowed"},
	{"ip6-localhost", "http://ip6-localhost/", "url_not_allowed"},
	{"metadata name", "http://metadata.google.internal/computeMetadata/v1/", "url_not_allowed"},
	{"single label", "http://intranet/", "url_not_allowed"},
	{"mdns", "http://printer.local/", "url_not_allowed"},
	{"resolves to private", "http://internal.example/", "url_not_allowed"},
	{"resolves to loopback", "https://mixed.example/", "url_not_allowed"},
	{"resolves to metadata", "http://metadata.example/", "url_not_allowed"},
	{"resolves to mapped loopback", "http://mapped.example/", "url_not_allowed"},
	// Malformed or not allowed, whatever the host.
	{"credentials", "http://user:hunter2@public.example/", "invalid_request"},
	{"user only", "https://hunter2@public.example/", "invalid_request"},
	{"credentials before loopback", "http://public.example:hunter2@127.0.0.1/", "invalid_request"},
	{"fragment smuggling", "http://public.example#@127.0.0.1/", "invalid_request"},
	{"backslash smuggling", "http://public.example\\@127.0.0.1/", "invalid_request"},
	{"ftp", "ftp://public.example/", "invalid_request"},
	{"javascript", "javascript:alert(1)", "invalid_request"},
	{"file", "file:///etc/passwd", "invalid_request"},
	{"gopher", "gopher://public.example:70/", "invalid_request"},
	{"data", "data:text/plain,hi", "invalid_request"},
	{"no scheme", "public.example/hook", "invalid_request"},
	{"scheme-relative", "//public.example/hook", "invalid_request"},
	{"no host", "http:///hook", "invalid_request"},
	{"opaque", "http:public.example", "invalid_request"},
	{"bad port", "http://public.example:99999/", "invalid_request"},
	{"broken ipv6", "http://[::1/", "invalid_request"},
	{"percent-encoded host", "http://%31%32%37.0.0.1/", "invalid_request"},
	{"fullwidth digits", "http://１２７.０.０.１/", "invalid_request"},
	{"space in host", "http://public .example/", "invalid_request"},
	{"empty", "", "invalid_request"},
	{"too long", "https://public.example/" + strings.Repeat("a", 2030), "invalid_request"},
}

// ssrfService runs the service with a guard that exempts nothing, so that
// loopback is refused like every other internal address.
func ssrfService(t *testing.T, resolver *stubResolver, allowHTTP bool) *testService {
	return startService(t, "", func(c *service.Config) {
		c.AllowNetworks = nil
		c.AllowHTTP = allowHTTP
		c.Lookup = resolver.LookupNetIP
	})
}

// TestSSRF_Creation: every URL of ssrfCases is refused at creation with
// 400 and its code, on company and account endpoints, and no endpoint is
// created; a refusal never echoes a password.
func TestSSRF_Creation(t *testing.T) {
	if n := len(ssrfCases); n < 40 {
		t.Fatalf("only %d cases", n)
	}
	ts := ssrfService(t, newStubResolver(), true)
	acme := ts.newAccount("Acme", "", "B12345674")
	for _, parent := range []string{"/v1/companies/" + acme.companyID, "/v1/accounts/" + acme.accountID} {
		for _, c := range ssrfCases {
			status, raw := ts.raw("POST", parent+"/webhook_endpoints", acme.key, object{"url": c.url, "enabled_events": []string{"*"}}, nil)
			e := replyError(raw)
			if status != 400 || e.Error.Code != c.code {
				t.Errorf("%s %q: got %d %s, want 400 %s", c.name, c.url, status, clip(raw), c.code)
			}
			if strings.Contains(string(raw), "hunter2") {
				t.Errorf("%s: the refusal echoes the password: %s", c.name, raw)
			}
		}
		var l struct{ Data []object }
		ts.must(200, "GET", parent+"/webhook_endpoints", acme.key, nil, &l)
		if len(l.Data) != 0 {
			t.Errorf("%s: got %d endpoints after the refusals, want 0", parent, len(l.Data))
		}
	}
	// A public URL passes, up to 2,048 characters.
	long := "https://public.example/" + strings.Repeat("a", 2048-len("https://public.example/"))
	for _, u := range []string{"https://public.example/hook", "http://93.184.216.34:8080/x?y=z", "https://[2606:4700:4700::1111]/", long} {
		ts.must(201, "POST", "/v1/companies/"+acme.companyID+"/webhook_endpoints", acme.key, object{"url": u, "enabled_events": []string{"*"}}, nil)
	}
}

// TestSSRF_Update: the same URLs are refused by a PATCH of the url, which
// leaves the endpoint as it was.
func TestSSRF_Update(t *testing.T) {
	ts := ssrfService(t, newStubResolver(), true)
	acme := ts.newAccount("Acme", "", "B12345674")
	eps := []endpoint{
		ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": "https://public.example/company", "enabled_events": []string{"*"}}),
		ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": "https://public.example/account", "enabled_events": []string{"*"}}),
	}
	for _, ep := range eps {
		var before object
		ts.must(200, "GET", ep.path, acme.key, nil, &before)
		for _, c := range ssrfCases {
			status, raw := ts.raw("PATCH", ep.path, acme.key, object{"url": c.url}, nil)
			if e := replyError(raw); status != 400 || e.Error.Code != c.code {
				t.Errorf("PATCH %s %q: got %d %s, want 400 %s", c.name, c.url, status, clip(raw), c.code)
			}
			if strings.Contains(string(raw), "hunter2") {
				t.Errorf("PATCH %s: the refusal echoes the password: %s", c.name, raw)
			}
		}
		var after object
		ts.must(200, "GET", ep.path, acme.key, nil, &after)
		if after["url"] != before["url"] || str(after) != str(before) {
			t.Errorf("%s changed: got %v, want %v", ep.path, after, before)
		}
	}
}

// TestSSRF_LiveModeHTTPS: a live-mode endpoint needs https unless the
// operator allows plain http; a test-mode one does not.
func TestSSRF_LiveModeHTTPS(t *testing.T) {
	ts := ssrfService(t, newStubResolver(), false)
	acme := ts.newAccount("Acme", "", "B12345674")
	parent := "/v1/companies/" + acme.companyID
	for _, in := range []object{
		{"url": "http://public.example/hook", "enabled_events": []string{"*"}},
		{"url": "http://public.example/hook", "enabled_events": []string{"*"}, "livemode": true},
		{"url": "HTTP://public.example/hook", "enabled_events": []string{"*"}},
	} {
		status, raw := ts.raw("POST", parent+"/webhook_endpoints", acme.key, in, nil)
		if e := replyError(raw); status != 400 || e.Error.Code != "invalid_request" || !strings.Contains(e.Error.Message, "https") {
			t.Errorf("live http %v: got %d %s, want 400 invalid_request naming https", in, status, raw)
		}
	}
	live := ts.newEndpoint(parent, acme.key, object{"url": "https://public.example/live", "enabled_events": []string{"*"}})
	test := ts.newEndpoint(parent, acme.key, object{"url": "http://public.example/test", "enabled_events": []string{"*"}, "livemode": false})
	if status, raw := ts.raw("PATCH", live.path, acme.key, object{"url": "http://public.example/live"}, nil); status != 400 {
		t.Errorf("PATCH a live endpoint to http: got %d %s, want 400", status, raw)
	}
	ts.must(200, "PATCH", test.path, acme.key, object{"url": "http://public.example/test2"}, nil)

	// With WEBHOOKS_ALLOW_HTTP, live-mode http is accepted; internal
	// addresses still are not.
	ts2 := ssrfService(t, newStubResolver(), true)
	bravo := ts2.newAccount("Bravo", "", "12345678Z")
	ts2.must(201, "POST", "/v1/companies/"+bravo.companyID+"/webhook_endpoints", bravo.key, object{"url": "http://public.example/hook", "enabled_events": []string{"*"}}, nil)
	if status, raw := ts2.raw("POST", "/v1/companies/"+bravo.companyID+"/webhook_endpoints", bravo.key, object{"url": "http://127.0.0.1/", "enabled_events": []string{"*"}}, nil); status != 400 {
		t.Errorf("loopback with AllowHTTP: got %d %s, want 400", status, raw)
	}
}

// TestSSRF_Rebinding drives DNS rebinding through the real engine: each
// name resolves to a public address when its endpoint is created and to an
// internal one (the loopback sink's machine) when the delivery is made. The
// guard judges the address actually dialed: every delivery ends
// failed_permanently with reason address_not_allowed, its one attempt says
// why, nothing is retried, and the sink, listening on the port the URLs
// name, receives nothing.
func TestSSRF_Rebinding(t *testing.T) {
	resolver := newStubResolver()
	internal := map[string]string{
		"rebind-v4.example":       "127.0.0.1",
		"rebind-v4-range.example": "127.0.0.2",
		"rebind-mapped.example":   "::ffff:127.0.0.1",
		"rebind-v6.example":       "::1",
		"rebind-zero.example":     "0.0.0.0",
	}
	for name, addr := range internal {
		resolver.rebind[name] = addr
	}
	ts := ssrfService(t, resolver, true)
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	eps := map[string]endpoint{}
	for name := range internal {
		eps[name] = ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": "http://" + name + ":" + port + "/hook", "enabled_events": []string{"invoice.*"}})
	}
	// An account endpoint too, through the same rebinding.
	resolver.rebind["rebind-account.example"] = "127.0.0.1"
	internal["rebind-account.example"] = "127.0.0.1"
	eps["rebind-account.example"] = ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": "http://rebind-account.example:" + port + "/hook", "enabled_events": []string{"invoice.*"}})

	ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
	ts.waitFor("one attempt per endpoint", 10*time.Second, func() bool { return ts.attempts() >= len(eps) })

	for name, ep := range eps {
		ds := ts.deliveries(ep, acme.key)
		if len(ds) != 1 {
			t.Errorf("%s: got %d deliveries, want 1", name, len(ds))
			continue
		}
		d := ts.deliveryDetail(ep, acme.key, ds[0]["id"].(string))
		if d["status"] != "failed_permanently" || d["reason"] != "address_not_allowed" || d["next_attempt_at"] != nil || d["attempt_count"] != 1.0 || d["last_response_status"] != nil {
			t.Errorf("%s: got status %v reason %v next %v attempts %v last status %v; want failed_permanently, address_not_allowed, no retry",
				name, d["status"], d["reason"], d["next_attempt_at"], d["attempt_count"], d["last_response_status"])
		}
		attempts, _ := d["attempts"].([]any)
		if len(attempts) != 1 {
			t.Errorf("%s: got %d attempts, want 1", name, len(attempts))
			continue
		}
		a := attempts[0].(map[string]any)
		msg := str(a["error"])
		if !strings.Contains(msg, "not allowed") || !strings.Contains(msg, internal[name]) || a["response_status"] != nil {
			t.Errorf("%s: attempt error %q, response %v; want it to say the address %s is not allowed", name, msg, a["response_status"], internal[name])
		}
		if n := resolver.count(name); n < 2 {
			t.Errorf("%s: resolved %d times, want once at creation and again at delivery", name, n)
		}
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("the loopback sink got %d requests, want 0", n)
	}
}

// deliveryDetail reads one delivery with its attempts.
func (ts *testService) deliveryDetail(ep endpoint, key, id string) object {
	ts.t.Helper()
	var d object
	ts.must(200, "GET", ep.path+"/deliveries/"+id, key, nil, &d)
	return d
}
