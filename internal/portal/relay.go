package portal

import (
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// What the pages show of a relay endpoint (SPEC 20) where an endpoint's URL
// would be.
const (
	relayConnected    = "relay: connected"
	relayNotConnected = "relay: not connected"
)

// endpointView is endpointView with a relay endpoint's connection as it is
// now: a page that cannot read it says "not connected", which is what its
// attempts meet when the reading fails too.
func (h *Handler) endpointView(ctx context.Context, ep *webhooks.Endpoint, company *webhooks.Company, now time.Time) EndpointView {
	v := endpointView(ep, company, now)
	if !ep.Relay {
		return v
	}
	if connected, err := h.cfg.App.RelayConnected(ctx, ep); err == nil && connected {
		v.RelayConnected, v.URL = true, relayConnected
	} else if err != nil {
		h.cfg.Logger.Warn("portal: relay state", "endpoint_id", ep.ID, "error", err)
	}
	return v
}

// endpointLabel names an endpoint in a title or a list: its URL, short, or
// for a relay endpoint, which has none, "Relay endpoint" and the end of
// its id.
func endpointLabel(ep *webhooks.Endpoint) string {
	if ep.Relay {
		return "Relay endpoint " + ep.ID[max(0, len(ep.ID)-8):]
	}
	return shortURL(ep.URL)
}
