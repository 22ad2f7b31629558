package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// sink is a test receiver that counts the connections it accepts and the
// requests it answers, to show that a refused delivery sent nothing.
type sink struct {
	srv      *httptest.Server
	port     string
	conns    atomic.Int64
	requests atomic.Int64
}

// newSink starts a sink on 127.0.0.1, or on [::1] when v6 is set.
func newSink(t *testing.T, v6 bool) *sink {
	t.Helper()
	s := &sink{}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	if v6 {
		ln, err := net.Listen("tcp6", "[::1]:0")
		if err != nil {
			t.Skipf("no IPv6 loopback on this machine: %v", err)
		}
		s.srv.Listener.Close()
		s.srv.Listener = ln
	}
	s.srv.Config.ConnState = func(c net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	_, s.port, _ = net.SplitHostPort(s.srv.Listener.Addr().String())
	return s
}

// mustBeUntouched fails if anything reached s. It first makes one request of
// its own, without the guard: the server accepts connections in order, so
// once that request is answered any earlier connection would have been
// counted too.
func (s *sink) mustBeUntouched(t *testing.T) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(s.srv.URL)
	if err != nil {
		t.Fatalf("probe of the sink: %v", err)
	}
	resp.Body.Close()
	if got := s.conns.Load(); got != 1 {
		t.Errorf("sink connections: got %d, want 1 (the probe's own)", got)
	}
	if got := s.requests.Load(); got != 1 {
		t.Errorf("sink requests: got %d, want 1 (the probe's own)", got)
	}
}

// newClient returns a client like the delivery engine's: the guard's
// transport, redirects not followed.
func newClient(g *Guard) *http.Client {
	return &http.Client{
		Transport: g.Transport(),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// loopbackNames is what the stub resolver knows in the dial tests.
var loopbackNames = map[string][]string{
	"sink.example":   {"127.0.0.1"},
	"sink6.example":  {"::1"},
	"both.example":   {"127.0.0.1", "::1"},
	"mixed.example":  {"10.0.0.1", "169.254.169.254", "127.0.0.1"},
	"mapped.example": {"::ffff:127.0.0.1"},
	"many.example": {
		"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6", "127.0.0.1",
	},
}

// dialCases are the loopback forms a refused delivery could be sent to.
var dialCases = []struct {
	name    string
	v6      bool   // the sink listens on [::1]
	url     string // %s is the sink's port
	allow   string // networks that let the delivery through
	mention []string
}{
	{name: "127.0.0.1", url: "http://127.0.0.1:%s/", allow: "127.0.0.0/8", mention: []string{"127.0.0.1 is a loopback address"}},
	{name: "127.0.0.2", url: "http://127.0.0.2:%s/", mention: []string{"127.0.0.2 is a loopback address"}},
	{name: "[::1]", v6: true, url: "http://[::1]:%s/", allow: "::1", mention: []string{"::1 is the loopback address"}},
	{name: "[::ffff:127.0.0.1]", url: "http://[::ffff:127.0.0.1]:%s/", allow: "127.0.0.0/8", mention: []string{"::ffff:127.0.0.1 is an IPv4-mapped form of 127.0.0.1"}},
	{name: "name to 127.0.0.1", url: "http://sink.example:%s/hook", allow: "127.0.0.0/8", mention: []string{"sink.example resolves only to refused addresses", "127.0.0.1"}},
	{name: "name to ::1", v6: true, url: "http://sink6.example:%s/", allow: "::1", mention: []string{"sink6.example", "::1"}},
	{name: "name to 127.0.0.1 and ::1", url: "http://both.example:%s/", allow: "127.0.0.0/8", mention: []string{"both.example", "127.0.0.1", "::1"}},
	{name: "name to a mapped address", url: "http://mapped.example:%s/", allow: "127.0.0.0/8", mention: []string{"mapped.example", "::ffff:127.0.0.1"}},
	{name: "name to internal addresses only", url: "http://mixed.example:%s/", allow: "127.0.0.0/8", mention: []string{"10.0.0.1 is a private address", "169.254.169.254 is the cloud metadata address", "127.0.0.1"}},
	{name: "many addresses", url: "http://many.example:%s/", allow: "127.0.0.0/8", mention: []string{"10.0.0.4", "and 3 more"}},
}

func TestGuard_DialContext_Refused(t *testing.T) {
	t.Parallel()
	for _, tt := range dialCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSink(t, tt.v6)
			client := newClient(New(nil, WithLookupNetIP(stubResolver(loopbackNames))))
			defer client.CloseIdleConnections()
			resp, err := client.Post(fmt.Sprintf(tt.url, s.port), "application/json", strings.NewReader(`{"id":"x"}`))
			if err == nil {
				resp.Body.Close()
				t.Fatalf("POST: got status %d, want an error wrapping ErrAddressNotAllowed", resp.StatusCode)
			}
			if !errors.Is(err, ErrAddressNotAllowed) {
				t.Fatalf("POST: got %v, want an error wrapping ErrAddressNotAllowed", err)
			}
			for _, m := range tt.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("POST: got error %q, want it to mention %q", err, m)
				}
			}
			s.mustBeUntouched(t)
		})
	}
}

func TestGuard_DialContext_Exempt(t *testing.T) {
	t.Parallel()
	for _, tt := range dialCases {
		if tt.allow == "" {
			continue // 127.0.0.2: test traffic goes only to 127.0.0.1 and [::1]
		}
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSink(t, tt.v6)
			allow, err := ParseNetworks(tt.allow)
			if err != nil {
				t.Fatal(err)
			}
			client := newClient(New(allow, WithLookupNetIP(stubResolver(loopbackNames))))
			defer client.CloseIdleConnections()
			resp, err := client.Post(fmt.Sprintf(tt.url, s.port), "application/json", strings.NewReader(`{"id":"x"}`))
			if err != nil {
				t.Fatalf("POST exempting %s: got %v, want a response", tt.allow, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				t.Errorf("POST exempting %s: got status %d, want %d", tt.allow, resp.StatusCode, http.StatusNoContent)
			}
			if got := s.requests.Load(); got != 1 {
				t.Errorf("sink requests: got %d, want 1", got)
			}
		})
	}
}

// TestGuard_DialContext_Rebinding shows the dial-time check catching a name
// that CheckURL accepted and that resolves to loopback afterwards.
func TestGuard_DialContext_Rebinding(t *testing.T) {
	t.Parallel()
	s := newSink(t, false)
	var lookups atomic.Int64
	rebinding := func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		if lookups.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	g := New(nil, WithLookupNetIP(rebinding))
	raw := "http://rebind.example:" + s.port + "/webhooks"
	if _, err := g.CheckURL(context.Background(), raw, false); err != nil {
		t.Fatalf("CheckURL while the name is public: got %v, want nil", err)
	}
	client := newClient(g)
	defer client.CloseIdleConnections()
	resp, err := client.Post(raw, "application/json", strings.NewReader(`{}`))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("POST after rebinding: got status %d, want an error", resp.StatusCode)
	}
	if !errors.Is(err, ErrAddressNotAllowed) {
		t.Fatalf("POST after rebinding: got %v, want an error wrapping ErrAddressNotAllowed", err)
	}
	if got := lookups.Load(); got != 2 {
		t.Errorf("lookups: got %d, want 2 (one by CheckURL, one by the dial)", got)
	}
	s.mustBeUntouched(t)
}

// TestGuard_control shows the second line of defence: the dialer itself
// refuses an internal address before connect, whoever asked for it.
func TestGuard_control(t *testing.T) {
	t.Parallel()
	s := newSink(t, false)
	g := New(nil)
	conn, err := g.dialer.DialContext(context.Background(), "tcp", "127.0.0.1:"+s.port)
	if err == nil {
		conn.Close()
		t.Fatal("dialer.DialContext(127.0.0.1): got a connection, want an error")
	}
	if !errors.Is(err, ErrAddressNotAllowed) {
		t.Fatalf("dialer.DialContext(127.0.0.1): got %v, want an error wrapping ErrAddressNotAllowed", err)
	}
	if !strings.Contains(err.Error(), "refused before connect") {
		t.Errorf("dialer.DialContext(127.0.0.1): got %q, want it to say refused before connect", err)
	}
	s.mustBeUntouched(t)

	if err := g.control("tcp4", "not an address", nil); !errors.Is(err, ErrAddressNotAllowed) {
		t.Errorf("control(not an address): got %v, want an error wrapping ErrAddressNotAllowed", err)
	}
	if err := g.control("tcp4", "93.184.216.34:443", nil); err != nil {
		t.Errorf("control(93.184.216.34:443): got %v, want nil", err)
	}
}

func TestGuard_DialContext_LiteralSkipsDNS(t *testing.T) {
	t.Parallel()
	s := newSink(t, false)
	var lookups atomic.Int64
	count := func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		lookups.Add(1)
		return nil, errors.New("unexpected lookup")
	}
	allow, _ := ParseNetworks("127.0.0.0/8")
	g := New(allow, WithLookupNetIP(count))
	conn, err := g.DialContext(context.Background(), "tcp", "127.0.0.1:"+s.port)
	if err != nil {
		t.Fatalf("DialContext(127.0.0.1) exempting 127.0.0.0/8: got %v, want a connection", err)
	}
	conn.Close()
	if _, err := g.DialContext(context.Background(), "tcp", "10.0.0.1:80"); !errors.Is(err, ErrAddressNotAllowed) {
		t.Errorf("DialContext(10.0.0.1): got %v, want an error wrapping ErrAddressNotAllowed", err)
	}
	if got := lookups.Load(); got != 0 {
		t.Errorf("lookups: got %d, want 0", got)
	}
}

func TestGuard_DialContext_Errors(t *testing.T) {
	t.Parallel()
	allow, _ := ParseNetworks("127.0.0.0/8")
	g := New(allow, WithLookupNetIP(stubResolver(loopbackNames)))
	ctx := context.Background()

	// A resolver failure is not a refusal: the engine retries it.
	_, err := g.DialContext(ctx, "tcp", "unknown.example:443")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || errors.Is(err, ErrAddressNotAllowed) {
		t.Errorf("DialContext(unknown.example): got %v, want a *net.DNSError that is not ErrAddressNotAllowed", err)
	}
	// Only an IPv4 address, exempted, but an IPv6 dial: nothing to dial.
	_, err = g.DialContext(ctx, "tcp6", "sink.example:443")
	if err == nil || errors.Is(err, ErrAddressNotAllowed) {
		t.Errorf("DialContext(tcp6, sink.example): got %v, want a no-address error", err)
	}
	if _, err := g.DialContext(ctx, "udp", "127.0.0.1:53"); err == nil {
		t.Errorf("DialContext(udp): got nil, want an error")
	}
	if _, err := g.DialContext(ctx, "tcp", "no-port"); err == nil {
		t.Errorf("DialContext(no-port): got nil, want an error")
	}
	if _, err := g.DialContext(ctx, "tcp", "[fe80::1%lo]:80"); !errors.Is(err, ErrAddressNotAllowed) {
		t.Errorf("DialContext([fe80::1%%lo]): got %v, want an error wrapping ErrAddressNotAllowed", err)
	}
}

func TestGuard_Transport(t *testing.T) {
	t.Parallel()
	tr := New(nil).Transport()
	if tr.Proxy != nil {
		t.Errorf("Proxy: got a function, want nil (a proxy would bypass the guard)")
	}
	if tr.DialContext == nil || tr.DialTLSContext != nil {
		t.Errorf("dialers: got DialContext set %t, DialTLSContext set %t, want only DialContext", tr.DialContext != nil, tr.DialTLSContext != nil)
	}
	if tr.MaxIdleConnsPerHost < 64 {
		t.Errorf("MaxIdleConnsPerHost: got %d, want at least 64", tr.MaxIdleConnsPerHost)
	}
	if !tr.ForceAttemptHTTP2 {
		t.Errorf("ForceAttemptHTTP2: got false, want true")
	}
	if tr.TLSHandshakeTimeout <= 0 {
		t.Errorf("TLSHandshakeTimeout: got %v, want a limit", tr.TLSHandshakeTimeout)
	}
}
