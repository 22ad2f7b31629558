package delivery

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Relay carries the attempts of relay endpoints (SPEC 20) to the
// `webhooks listen` connection that holds them (internal/relay's Hub).
type Relay interface {
	// Exchange sends one attempt's signed request and returns the
	// listener's answer; an error when none came (the error's text is the
	// attempt's error: relay_not_connected when no listener holds the
	// endpoint).
	Exchange(ctx context.Context, endpointID, deliveryID string, header map[string][]string, body []byte) (*webhooks.RelayAnswer, error)
}

// errNoRelay fails the attempts of relay endpoints when the engine has no
// Relay: no listener can be connected.
var errNoRelay = errors.New(webhooks.RelayNotConnected)

// relayedError is the error the listener met forwarding a request (its
// target refused the connection, timed out…), recorded as it said it.
type relayedError string

func (e relayedError) Error() string { return "forward: " + string(e) }

// relay makes req, the request of an attempt to a relay endpoint, over
// its listener's connection instead of the network. It answers as the
// client would: the forward target's status and body as a response, or
// an error. local is how long the forward took on the listener's machine:
// the attempt's duration, as for a POST to a URL.
func (e *Engine) relay(req *http.Request, d *webhooks.Delivery, ep *webhooks.Endpoint) (resp *http.Response, local time.Duration, err error) {
	if e.cfg.Relay == nil {
		return nil, 0, errNoRelay
	}
	a, err := e.cfg.Relay.Exchange(req.Context(), ep.ID, d.ID, req.Header, d.Body)
	if err != nil {
		return nil, 0, err
	}
	if a.Error != "" {
		return nil, a.Duration, relayedError(a.Error)
	}
	return &http.Response{
		StatusCode: a.Status,
		Header:     http.Header{},
		Body:       io.NopCloser(strings.NewReader(a.Body)),
	}, a.Duration, nil
}
