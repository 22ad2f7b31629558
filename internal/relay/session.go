package relay

import (
	"context"
	"errors"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// ErrTakenOver ends a connection that a newer one of its endpoint
// replaced (a listener that reconnected after a drop the service had not
// noticed yet).
var ErrTakenOver = errors.New("relay: a newer connection took the endpoint over")

// ErrShutdown ends the connections of a process that is shutting down:
// the listener reconnects, to another process or to this one restarted.
var ErrShutdown = errors.New("relay: the service is shutting down")

// session is one connection this process holds.
type session struct {
	id       string
	endpoint string
	wake     chan struct{} // a request was put for it in this process
	cancel   context.CancelCauseFunc
}

// lostAnswer answers the requests a connection took and could not answer.
var lostAnswer = webhooks.RelayAnswer{Error: webhooks.RelayLost}

// Serve holds the endpoint's relay for one connection, and sends down it
// every request put for the endpoint, in order, until ctx ends, send
// fails, a newer connection takes the endpoint over (ErrTakenOver) or
// the hub shuts down (ErrShutdown). send(nil) says the connection holds
// the endpoint, first, and then keeps it alive: it is called every Renew,
// so that a connection that died is noticed.
//
// When it returns, the requests it sent that have no answer are answered
// webhooks.RelayLost: their attempts fail and are retried.
func (h *Hub) Serve(ctx context.Context, endpointID string, send func(*webhooks.RelayRequest) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s := &session{id: webhooks.NewID(), endpoint: endpointID, wake: make(chan struct{}, 1), cancel: cancel}
	if err := h.cfg.Store.ConnectRelay(ctx, endpointID, s.id, h.cfg.Now().Add(h.cfg.Lease), lostAnswer); err != nil {
		return err
	}
	if !h.add(s) {
		h.disconnect(s)
		return ErrShutdown
	}
	defer func() {
		h.remove(s)
		h.disconnect(s)
	}()
	if err := send(nil); err != nil {
		return err
	}
	renew := time.NewTicker(h.cfg.Renew)
	defer renew.Stop()
	poll := time.NewTicker(h.cfg.Poll)
	defer poll.Stop()
	// A step cut short by the end of ctx reports why ctx ended.
	fail := func(err error) error {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return err
	}
	for {
		if err := h.sendTaken(ctx, s, send); err != nil {
			return fail(err)
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-s.wake:
		case <-poll.C:
		case <-renew.C:
			held, err := h.cfg.Store.RenewRelay(ctx, endpointID, s.id, h.cfg.Now().Add(h.cfg.Lease))
			if err != nil {
				return fail(err)
			}
			if !held {
				return ErrTakenOver
			}
			if err := send(nil); err != nil {
				return fail(err)
			}
		}
	}
}

// sendTaken takes the endpoint's unsent requests and sends them.
func (h *Hub) sendTaken(ctx context.Context, s *session, send func(*webhooks.RelayRequest) error) error {
	for {
		since := h.cfg.Now().Add(-2 * h.cfg.MaxWait)
		rs, err := h.cfg.Store.TakeRelayRequests(ctx, s.endpoint, s.id, since, 100)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if err := send(r); err != nil {
				return err
			}
		}
		if len(rs) < 100 {
			return nil
		}
	}
}

// disconnect ends s's hold in the store, even when its context ended.
func (h *Hub) disconnect(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.cfg.Store.DisconnectRelay(ctx, s.endpoint, s.id, lostAnswer); err != nil {
		// The hold lapses by itself within Lease; the requests it took wait
		// for their attempts' timeout.
		h.cfg.Logger.Warn("relay: disconnect", "endpoint_id", s.endpoint, "error", err)
	}
}

// add makes s the endpoint's connection in this process, ending the one
// it replaces; false once the hub shut down.
func (h *Hub) add(s *session) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	if old := h.sessions[s.endpoint]; old != nil {
		old.cancel(ErrTakenOver)
	}
	h.sessions[s.endpoint] = s
	h.all[s] = struct{}{}
	return true
}

func (h *Hub) remove(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions[s.endpoint] == s {
		delete(h.sessions, s.endpoint)
	}
	delete(h.all, s)
}

// Shutdown ends every connection this process holds (ErrShutdown), and
// refuses new ones: an HTTP server's shutdown waits for its requests,
// and a connection would otherwise last until the listener hangs up.
func (h *Hub) Shutdown() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.all {
		s.cancel(ErrShutdown)
	}
}
