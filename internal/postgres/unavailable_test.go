package postgres

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/factuarea/webhooks"
)

// TestPoolConfig: a connection attempt gives up after DefaultConnectTimeout
// unless the URL sets connect_timeout, and the pool holds DefaultMaxConns
// unless the URL or WithMaxConns sets another size.
func TestPoolConfig(t *testing.T) {
	for _, c := range []struct {
		url        string
		o          options
		timeout    time.Duration
		maxConns   int32
		searchPath string
	}{
		{url: "postgres://u@127.0.0.1:5432/db", timeout: DefaultConnectTimeout, maxConns: DefaultMaxConns},
		{url: "host=127.0.0.1 dbname=db", timeout: DefaultConnectTimeout, maxConns: DefaultMaxConns},
		{url: "postgres://u@127.0.0.1:5432/db?connect_timeout=2&pool_max_conns=3", timeout: 2 * time.Second, maxConns: 3},
		{url: "host=127.0.0.1 dbname=db connect_timeout=1", o: options{maxConns: 5, searchPath: "t1"}, timeout: time.Second, maxConns: 5, searchPath: "t1"},
	} {
		cfg, err := poolConfig(c.url, c.o)
		if err != nil {
			t.Fatalf("poolConfig(%q): %v", c.url, err)
		}
		if got := cfg.ConnConfig.ConnectTimeout; got != c.timeout {
			t.Errorf("%s: connect timeout: got %s, want %s", c.url, got, c.timeout)
		}
		if cfg.MaxConns != c.maxConns {
			t.Errorf("%s: max conns: got %d, want %d", c.url, cfg.MaxConns, c.maxConns)
		}
		if got := cfg.ConnConfig.RuntimeParams["search_path"]; got != c.searchPath {
			t.Errorf("%s: search_path: got %q, want %q", c.url, got, c.searchPath)
		}
	}
}

// TestUnavailable_NoAnswer: a database host that takes the connection and
// never answers (a host gone behind a load balancer, a partition) fails the
// attempt at the connect timeout, not the caller's deadline, with an error
// that is ErrUnavailable: a 503 the producer retries.
func TestUnavailable_NoAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	cfg, err := poolConfig("postgres://u@"+ln.Addr().String()+"/db?sslmode=disable&connect_timeout=1", options{})
	if err != nil {
		t.Fatal(err)
	}
	// The caller's deadline is far beyond the connect timeout: it must not
	// be what ends the attempt.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err == nil {
		conn.Close(ctx)
		t.Fatal("connecting to a host that never answers: got a connection")
	}
	if ctx.Err() != nil {
		t.Errorf("the caller's deadline ended the attempt, not the connect timeout: %v", err)
	}
	if got := txError(err); !errors.Is(got, webhooks.ErrUnavailable) {
		t.Errorf("txError(%v): got %v (%s), want ErrUnavailable", err, got, webhooks.ErrorCode(got))
	}
}
