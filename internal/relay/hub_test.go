package relay_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/relay"
	"github.com/factuarea/webhooks/internal/sqlite"
)

// newHubs returns two hubs on one store: two processes sharing a database.
func newHubs(t *testing.T) (*relay.Hub, *relay.Hub) {
	t.Helper()
	t.Parallel()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "relay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := relay.Config{Store: st, Poll: 10 * time.Millisecond, MaxWait: 2 * time.Second, Renew: 50 * time.Millisecond}
	return relay.New(cfg), relay.New(cfg)
}

// serve holds endpointID on h until the test ends, passing each request
// to onRequest; it returns once the connection holds the endpoint, and a
// channel that gets Serve's error.
func serve(t *testing.T, ctx context.Context, h *relay.Hub, endpointID string, onRequest func(*webhooks.RelayRequest)) <-chan error {
	t.Helper()
	held := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		first := true
		done <- h.Serve(ctx, endpointID, func(r *webhooks.RelayRequest) error {
			if first {
				first = false
				close(held)
				return nil
			}
			if r != nil {
				go onRequest(r)
			}
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	return done
}

var header = map[string][]string{"Factuarea-Signature": {"t=1,v1=ab"}}

func TestHub_NotConnected(t *testing.T) {
	h, _ := newHubs(t)
	_, err := h.Exchange(t.Context(), webhooks.NewID(), webhooks.NewID(), header, []byte(`{}`))
	if !errors.Is(err, relay.ErrNotConnected) || err.Error() != "relay_not_connected" {
		t.Errorf("Exchange with no connection: got %v, want relay_not_connected", err)
	}
}

// TestHub_AcrossProcesses: the attempt is made by one hub, the connection
// held by the other; the answer comes back through the store.
func TestHub_AcrossProcesses(t *testing.T) {
	attempter, holder := newHubs(t)
	ep := webhooks.NewID()
	serve(t, t.Context(), holder, ep, func(r *webhooks.RelayRequest) {
		if string(r.Body) != `{"n":1}` || r.Header["Factuarea-Signature"][0] != "t=1,v1=ab" {
			t.Errorf("request: got %q %v", r.Body, r.Header)
		}
		// The answer may come back to either process.
		if err := attempter.Answer(context.Background(), ep, r.ID, webhooks.RelayAnswer{Status: 204, Duration: 3 * time.Millisecond}); err != nil {
			t.Errorf("Answer: %v", err)
		}
	})
	if ok, _ := attempter.Connected(t.Context(), ep); !ok {
		t.Error("Connected from the other process: got false")
	}
	a, err := attempter.Exchange(t.Context(), ep, webhooks.NewID(), header, []byte(`{"n":1}`))
	if err != nil || a.Status != 204 || a.Duration != 3*time.Millisecond {
		t.Fatalf("Exchange: got %+v, %v; want 204 in 3 ms", a, err)
	}
}

// TestHub_Lost: a connection that ends with a request unanswered fails
// that attempt at once (not at its timeout), and a late answer is refused.
func TestHub_Lost(t *testing.T) {
	h, _ := newHubs(t)
	ep := webhooks.NewID()
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan *webhooks.RelayRequest, 1)
	done := serve(t, ctx, h, ep, func(r *webhooks.RelayRequest) { got <- r; cancel() })
	start := time.Now()
	_, err := h.Exchange(t.Context(), ep, webhooks.NewID(), header, []byte(`{}`))
	if !errors.Is(err, relay.ErrLost) || time.Since(start) > time.Second {
		t.Errorf("Exchange over a connection that ended: got %v after %s, want relay connection lost at once", err, time.Since(start))
	}
	<-done
	r := <-got
	if err := h.Answer(t.Context(), ep, r.ID, webhooks.RelayAnswer{Status: 200}); webhooks.ErrorCode(err) != webhooks.ENOTFOUND {
		t.Errorf("a late Answer: got %v, want not_found", err)
	}
	if ok, _ := h.Connected(t.Context(), ep); ok {
		t.Error("Connected after the connection ended: got true")
	}
}

// TestHub_TakeOver: a newer connection of the endpoint ends the older
// one, in this process at once, in another at its next renewal.
func TestHub_TakeOver(t *testing.T) {
	h1, h2 := newHubs(t)
	ep := webhooks.NewID()
	nothing := func(*webhooks.RelayRequest) {}
	first := serve(t, t.Context(), h1, ep, nothing)
	second := serve(t, t.Context(), h1, ep, nothing)
	if err := <-first; !errors.Is(err, relay.ErrTakenOver) {
		t.Errorf("the replaced connection (same process): got %v, want ErrTakenOver", err)
	}
	serve(t, t.Context(), h2, ep, nothing)
	select {
	case err := <-second:
		if !errors.Is(err, relay.ErrTakenOver) {
			t.Errorf("the replaced connection (other process): got %v, want ErrTakenOver", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the connection replaced from another process did not end")
	}
}

func TestHub_Shutdown(t *testing.T) {
	h, _ := newHubs(t)
	done := serve(t, t.Context(), h, webhooks.NewID(), func(*webhooks.RelayRequest) {})
	h.Shutdown()
	if err := <-done; !errors.Is(err, relay.ErrShutdown) {
		t.Errorf("Serve after Shutdown: got %v, want ErrShutdown", err)
	}
	if err := h.Serve(t.Context(), webhooks.NewID(), func(*webhooks.RelayRequest) error { return nil }); !errors.Is(err, relay.ErrShutdown) {
		t.Errorf("a new Serve after Shutdown: got %v, want ErrShutdown", err)
	}
}

func TestHub_AnswerRefused(t *testing.T) {
	h, _ := newHubs(t)
	ep := webhooks.NewID()
	for name, a := range map[string]webhooks.RelayAnswer{
		"no status nor error": {},
		"both":                {Status: 200, Error: "x"},
		"status out of range": {Status: 42},
		"negative duration":   {Status: 200, Duration: -time.Second},
	} {
		if err := h.Answer(t.Context(), ep, webhooks.NewID(), a); webhooks.ErrorCode(err) != webhooks.EINVALID {
			t.Errorf("%s: got %v, want invalid_request", name, err)
		}
	}
	if err := h.Answer(t.Context(), ep, "not-an-id", webhooks.RelayAnswer{Status: 200}); webhooks.ErrorCode(err) != webhooks.ENOTFOUND {
		t.Errorf("a malformed request id: got %v, want not_found", err)
	}
}
