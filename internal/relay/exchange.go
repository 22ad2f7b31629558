package relay

import (
	"context"
	"errors"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// ErrNotConnected is the error of an attempt to a relay endpoint that no
// connection holds: its message is the attempt's error as recorded.
var ErrNotConnected = errors.New(webhooks.RelayNotConnected)

// ErrLost is the error of an attempt whose connection ended before the
// listener answered (webhooks.RelayLost).
var ErrLost = errors.New(webhooks.RelayLost)

// Exchange carries one attempt's request (its signed headers and body) to
// the endpoint's listener, and returns the listener's answer: what its
// forward target answered, or the error it met (Error set). It returns
// ErrNotConnected when no connection holds the endpoint, ErrLost when the
// connection ended before the answer, and ctx's error when no answer came
// in time.
func (h *Hub) Exchange(ctx context.Context, endpointID, deliveryID string, header map[string][]string, body []byte) (*webhooks.RelayAnswer, error) {
	session, err := h.cfg.Store.RelaySession(ctx, endpointID, h.cfg.Now())
	if err != nil {
		return nil, err
	}
	if session == "" {
		return nil, ErrNotConnected
	}
	r := &webhooks.RelayRequest{ID: webhooks.NewID(), EndpointID: endpointID, DeliveryID: deliveryID, Header: header, Body: body, Created: h.cfg.Now()}
	woken := make(chan struct{}, 1)
	h.mu.Lock()
	h.waiters[r.ID] = woken
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.waiters, r.ID)
		h.mu.Unlock()
		// The row goes, answered or not: a late answer finds nothing to
		// answer (404 to the listener), and a connection that would take
		// it later does not send it.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := h.cfg.Store.DeleteRelayRequest(dctx, r.ID); err != nil {
			h.cfg.Logger.Warn("relay: delete request", "endpoint_id", endpointID, "error", err)
		}
	}()
	if err := h.cfg.Store.PutRelayRequest(ctx, r); err != nil {
		return nil, err
	}
	h.wakeSession(endpointID)
	poll := time.NewTicker(h.cfg.Poll)
	defer poll.Stop()
	check := time.Now()
	for {
		a, err := h.cfg.Store.RelayAnswer(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		if a != nil && a.Error == webhooks.RelayLost {
			return nil, ErrLost
		}
		if a != nil {
			return a, nil
		}
		// A holder that died without disconnecting stops holding within
		// Lease: the attempt fails then, not at its timeout.
		if time.Since(check) >= time.Second {
			check = time.Now()
			if s, err := h.cfg.Store.RelaySession(ctx, endpointID, h.cfg.Now()); err == nil && s == "" {
				return nil, ErrNotConnected
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-woken:
		case <-poll.C:
		}
	}
}

// wakeSession tells this process's connection of the endpoint, if it
// holds it, that a request is there.
func (h *Hub) wakeSession(endpointID string) {
	h.mu.Lock()
	s := h.sessions[endpointID]
	h.mu.Unlock()
	if s != nil {
		wake(s.wake)
	}
}

// Answer stores a listener's answer to the endpoint's request id. It
// returns ENOTFOUND when the endpoint has no such request waiting (its
// attempt gave up: it ended, timed out, or its connection was lost).
func (h *Hub) Answer(ctx context.Context, endpointID, id string, a webhooks.RelayAnswer) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if !webhooks.ValidID(id) {
		return webhooks.NotFound("relay request")
	}
	stored, err := h.cfg.Store.AnswerRelayRequest(ctx, endpointID, id, a)
	if err != nil {
		return err
	}
	if !stored {
		return webhooks.NotFound("relay request")
	}
	h.mu.Lock()
	w := h.waiters[id]
	h.mu.Unlock()
	if w != nil {
		wake(w)
	}
	return nil
}

// Connected reports whether a connection holds the endpoint now, in any
// process.
func (h *Hub) Connected(ctx context.Context, endpointID string) (bool, error) {
	s, err := h.cfg.Store.RelaySession(ctx, endpointID, h.cfg.Now())
	return s != "", err
}
