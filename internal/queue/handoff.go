package queue

import (
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// handoff is the leases a registration group's transaction takes from the
// engine for its pending deliveries: inserted claimed by the engine, and
// handed to it if the group commits; given back if it does not, or for a
// delivery that was not inserted.
type handoff struct {
	engine Engine
	claims []*webhooks.Claim // in the order of the deliveries
	until  []time.Time       // claims[i]'s lease end
	leases map[string]*webhooks.Claim
	full   bool // a delivery was left for a claim because the engine had no room
}

// reset gives back the leases of a plan that is made again.
func (h *handoff) reset() {
	h.unlease(h.claims)
	h.claims, h.until, h.leases, h.full = nil, nil, map[string]*webhooks.Claim{}, false
}

// offer leases d, pending, to the engine if it has room.
func (h *handoff) offer(d *webhooks.Delivery, ep *webhooks.Endpoint, traceparent string) {
	if h.engine == nil || d.Status != webhooks.DeliveryPending || ep == nil {
		return
	}
	token, until, ok := h.engine.Lease(d.EndpointID, d.Created)
	if !ok {
		if !h.engine.HasRoom() {
			h.full = true
		}
		return
	}
	c := &webhooks.Claim{Delivery: d, Endpoint: ep, Token: token, Traceparent: traceparent}
	h.claims, h.until = append(h.claims, c), append(h.until, until)
	h.leases[d.ID] = c
}

// driverLeases returns the leases as the backend inserts them.
func (h *handoff) driverLeases() map[string]driver.Lease {
	if len(h.claims) == 0 {
		return nil
	}
	out := make(map[string]driver.Lease, len(h.claims))
	for i, c := range h.claims {
		out[c.Delivery.ID] = driver.Lease{Token: c.Token, Until: h.until[i]}
	}
	return out
}

// settle hands the engine the claims of the deliveries inserted (none
// when the transaction did not commit) and gives back the other leases.
func (h *handoff) settle(inserted map[string]bool) {
	if h.engine == nil || len(h.claims) == 0 {
		return
	}
	var handed, back []*webhooks.Claim
	for _, c := range h.claims {
		if inserted[c.Delivery.ID] {
			handed = append(handed, c)
		} else {
			back = append(back, c)
			delete(h.leases, c.Delivery.ID)
		}
	}
	h.unlease(back)
	h.claims, h.until = nil, nil
	h.engine.Hand(handed)
}

func (h *handoff) unlease(claims []*webhooks.Claim) {
	if h.engine == nil || len(claims) == 0 {
		return
	}
	ids := make([]string, len(claims))
	for i, c := range claims {
		ids[i] = c.Endpoint.ID
	}
	h.engine.Unlease(ids)
}
