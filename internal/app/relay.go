package app

import (
	"context"

	webhooks "github.com/factuarea/webhooks"
)

// RelayHub is the process's side of the local relay (SPEC 20,
// internal/relay's Hub): the connections it holds and the listeners'
// answers.
type RelayHub interface {
	Serve(ctx context.Context, endpointID string, send func(*webhooks.RelayRequest) error) error
	Answer(ctx context.Context, endpointID, id string, a webhooks.RelayAnswer) error
	Connected(ctx context.Context, endpointID string) (bool, error)
}

// relayEndpoint returns the relay endpoint ref names, if c may see it.
func (a *App) relayEndpoint(ctx context.Context, c Caller, ref EndpointRef) (*OwnedEndpoint, error) {
	oe, err := a.Endpoint(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	if !oe.Relay {
		return nil, webhooks.Errorf(webhooks.EINVALID, "this endpoint is not a relay endpoint: only an endpoint created with relay: true is connected by webhooks listen.")
	}
	if a.cfg.Relay == nil {
		return nil, webhooks.Errorf(webhooks.EUNAVAILABLE, "this service does not relay.")
	}
	return oe, nil
}

// ServeRelay holds the relay endpoint ref names for one listener's
// connection, calling send for each request to carry and, with nil, once
// the connection holds the endpoint and then for each keep-alive, until
// ctx ends or the connection is replaced.
func (a *App) ServeRelay(ctx context.Context, c Caller, ref EndpointRef, send func(*webhooks.RelayRequest) error) error {
	oe, err := a.relayEndpoint(ctx, c, ref)
	if err != nil {
		return err
	}
	first := true
	return a.cfg.Relay.Serve(ctx, oe.ID, func(r *webhooks.RelayRequest) error {
		if r == nil && !first {
			// At each keep-alive: an endpoint deleted meanwhile (by the
			// API, the portal, its company's deletion) ends its
			// connection, whose listener then hears 404 and stops.
			if _, err := a.cfg.Store.FindEndpoint(ctx, oe.ID); err != nil {
				return err
			}
		}
		first = false
		return send(r)
	})
}

// AnswerRelay stores a listener's answer to a request of the relay
// endpoint ref names: the outcome of that attempt. ENOTFOUND when the
// attempt no longer waits for it.
func (a *App) AnswerRelay(ctx context.Context, c Caller, ref EndpointRef, requestID string, answer webhooks.RelayAnswer) error {
	oe, err := a.relayEndpoint(ctx, c, ref)
	if err != nil {
		return err
	}
	return a.cfg.Relay.Answer(ctx, oe.ID, requestID, answer)
}

// RelayConnected reports whether a listener holds the relay endpoint ep
// now (false for an endpoint that is not one).
func (a *App) RelayConnected(ctx context.Context, ep *webhooks.Endpoint) (bool, error) {
	if !ep.Relay || a.cfg.Relay == nil {
		return false, nil
	}
	return a.cfg.Relay.Connected(ctx, ep.ID)
}
