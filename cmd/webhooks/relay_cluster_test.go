package main

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/pgtest"
)

// cutProxy forwards TCP connections to an address, and can cut them all
// at once: a network drop between the listener and the service.
type cutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newCutProxy(t *testing.T, upstream string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
	return p
}

func (p *cutProxy) url() string { return "http://" + p.ln.Addr().String() }

// cut resets every connection through the proxy.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.Close()
	}
	p.conns = nil
}

// TestRelay_TwoProcesses runs two serve processes on one PostgreSQL
// database, at their default SSRF settings. The listener is connected to
// the first, through a proxy; events are registered through both, so that
// the second process claims and attempts deliveries whose connection the
// first holds. Midway the network between the listener and the service
// drops. Every event arrives; the second process made attempts (carried
// over the first's connection); no delivery arrived more often than it
// has attempts recorded, and every one ends delivered.
func TestRelay_TwoProcesses(t *testing.T) {
	const adminKey = "relay-cluster-admin-key"
	db := pgtest.SchemaURL(t)
	env := []string{"WEBHOOKS_DATABASE=" + db, "WEBHOOKS_ADMIN_KEY=" + adminKey,
		"WEBHOOKS_RETRY_SCHEDULE=1s,1s,2s,2s,3s,3s,5s", "WEBHOOKS_LOG_LEVEL=info"}
	procs := []*process{startServe(t, env...), startServe(t, env...)}
	_, key, companyID := relaySetUp(t, procs[0], adminKey, "B12345674")
	tg := newTarget(t)
	proxy := newCutProxy(t, procs[0].url[len("http://"):])
	l := startListen(t, "--api", proxy.url(), "--key", key, "--company", companyID, "--forward-to", tg.URL+"/webhooks")
	tg.mu.Lock()
	tg.secret = l.secret
	tg.mu.Unlock()
	const events = 60
	register := func(from, to int) {
		for i := from; i < to; i++ {
			procs[i%2].api(t, adminKey, "POST", "/v1/events", map[string]any{"type": "invoice.sent", "company_id": companyID,
				"data": map[string]any{"object": map[string]any{"object": "invoice", "n": i}}}, 201)
		}
	}
	register(0, events/2)
	waitUntil(t, "the first half arrives", 30*time.Second, func() bool { return tg.distinct() >= events/2 })
	// The network drops, with deliveries on the way.
	var wg sync.WaitGroup
	wg.Go(func() { register(events/2, events) })
	waitUntil(t, "some of the second half arrive", 30*time.Second, func() bool { return tg.distinct() > events/2 })
	proxy.cut()
	wg.Wait()
	waitUntil(t, "every delivery arrives", 90*time.Second, func() bool { return tg.distinct() >= events })

	epPath := "/v1/companies/" + companyID + "/webhook_endpoints/" + l.endpoint
	var attempts map[string][]map[string]any
	relayWait(t, "every delivery is delivered", 30*time.Second, func() bool {
		var status map[string]string
		attempts, status = attemptsOf(t, procs[1], key, epPath)
		n := 0
		for _, s := range status {
			if s == "delivered" {
				n++
			}
		}
		return len(status) == events && n == events
	})
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if len(tg.bad) > 0 {
		t.Errorf("requests that failed the receiver's checks: %v", tg.bad)
	}
	for id, as := range attempts {
		if n := tg.arrivals[id]; n > len(as) {
			t.Errorf("delivery %s arrived %d times with %d attempts recorded", id, n, len(as))
		}
	}
	if made := metric(t, procs[1], `webhooks_attempts_total{outcome="delivered"}`); made == 0 {
		t.Errorf("the process without the connection made no delivered attempt: nothing was carried across processes")
	}
	if got := l.output(); !containsLine(got, "Reconnected.") {
		t.Errorf("listen did not reconnect after the drop:\n%s", got)
	}
}

func containsLine(out, line string) bool {
	for _, l := range strings.Split(out, "\n") {
		if l == line {
			return true
		}
	}
	return false
}
