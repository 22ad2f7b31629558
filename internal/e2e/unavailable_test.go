package e2e

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/pgtest"
	"github.com/factuarea/webhooks/internal/service"
)

// tcpProxy forwards connections to a target until it is cut: then it
// closes every connection it carries and every one it is sent, as a
// database that went down does.
type tcpProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns map[net.Conn]bool
	down  bool
}

// startBehindProxy starts the service on a fresh PostgreSQL schema that it
// reaches through a proxy the test can cut.
func startBehindProxy(t *testing.T) (*testService, *tcpProxy) {
	t.Helper()
	u, err := url.Parse(pgtest.SchemaURL(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	return startService(t, "", func(c *service.Config) { c.Database = u.String() }), proxy
}

func newProxy(t *testing.T, target string) *tcpProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *tcpProxy) forward(c net.Conn) {
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		c.Close()
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	go func() { io.Copy(s, c); s.Close() }()
	io.Copy(c, s)
	c.Close()
}

// cut closes every connection and refuses new ones until restore.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *tcpProxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// TestUnavailable: while the database does not answer, every request that
// needs it answers 503 service_unavailable with Retry-After, so that
// producers and load balancers retry; it used to be 500 internal_error.
// Once the database is back, the service answers again by itself.
func TestUnavailable(t *testing.T) {
	ts, proxy := startBehindProxy(t)
	acme := ts.newAccount("Acme", "", "B12345674")
	a := "/v1/accounts/" + acme.accountID
	event := object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": object{"object": "invoice"}}}

	proxy.cut()
	for _, c := range []struct {
		method, path, key string
		body              any
	}{
		{"GET", a, adminKey, nil},
		{"GET", a, acme.key, nil}, // the key is looked up in the database
		{"POST", "/v1/events", adminKey, event},
		{"POST", a + "/webhook_endpoints", acme.key, object{"url": "https://hooks.example.com/x", "enabled_events": []string{"*"}}},
		{"GET", "/v1/companies/" + acme.companyID + "/events", acme.key, nil},
		{"GET", "/readyz", "", nil},
	} {
		status, raw := ts.raw(c.method, c.path, c.key, c.body, nil)
		e := replyError(raw)
		if status != http.StatusServiceUnavailable || e.Error.Code != "service_unavailable" {
			t.Errorf("%s %s with the database down: got %d %s, want 503 service_unavailable", c.method, c.path, status, clip(raw))
		}
	}
	req, _ := http.NewRequest("GET", ts.url+a, nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if got := resp.Header.Get("Retry-After"); got != "5" {
			t.Errorf("Retry-After: got %q, want 5", got)
		}
	}

	proxy.restore()
	ts.waitFor("the service to answer again", 15*time.Second, func() bool {
		status, _ := ts.raw("GET", a, acme.key, nil, nil)
		return status == http.StatusOK
	})
	ts.must(201, "POST", "/v1/events", adminKey, event, nil)
}
