package postgres

import (
	"slices"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// SetEngine makes the store hand the deliveries it registers to e (see
// app.Engine): each pending one is inserted leased to e, if e has room for
// it and its endpoint is under its cap across every process, and passed
// over in memory once its group commits. The rest wait for a claim, and e
// (and, if e has no room, the other processes) is woken for them. Call it
// before the store serves.
func (s *Store) SetEngine(e app.Engine) { s.engine = e }

// offers are the leases a registration group's transaction offers its
// deliveries: the engine took a slot for each (within its own count of the
// endpoint's claims), and the statement that inserts them keeps them
// within the endpoints' caps across the cluster, as counted in the
// database when it starts.
//
// That count takes no lock: claimers take the endpoint's claim lock in
// turn and count again under it, so claims keep the cap strictly, but two
// processes' registrations that commit at once may each see the other's
// leases uncommitted, and go over the cap by what they hand over together
// (a few deliveries: what one group routes to the endpoint). A lock there
// made the registrations of a busy endpoint wait for each other across the
// cluster, or (tried without waiting) fail to lease at all: with three
// processes on one endpoint most deliveries went through claims. The
// overshoot cannot build up: an endpoint at its cap, as a slow one stays,
// gets no lease until its claims end.
type offers struct {
	engine    app.Engine
	ids       []string // deliveries offered a lease
	until     []time.Time
	tokens    []string
	endpoints []string // ids[i]'s endpoint
	cap       int
	now       time.Time
	claims    map[string]*webhooks.Claim // by delivery id
}

// offer takes from the engine a slot for each pending delivery of ds, to
// an endpoint endpointOf finds. The deliveries' creation is the time the
// leases start from (the service's clock).
func (s *Store) offer(ds []*webhooks.Delivery, endpointOf func(id string) *webhooks.Endpoint) *offers {
	o := &offers{engine: s.engine, claims: map[string]*webhooks.Claim{}}
	if s.engine == nil {
		return o
	}
	o.cap = s.engine.PerEndpoint()
	if o.cap <= 0 {
		o.cap = 1 << 30
	}
	for _, d := range ds {
		if d.Status != webhooks.DeliveryPending {
			continue
		}
		token, until, ok := s.engine.Lease(d.EndpointID, d.Created)
		if !ok {
			continue
		}
		if d.Created.After(o.now) {
			o.now = d.Created
		}
		o.ids, o.until, o.tokens, o.endpoints = append(o.ids, d.ID), append(o.until, until), append(o.tokens, token), append(o.endpoints, d.EndpointID)
		o.claims[d.ID] = &webhooks.Claim{Delivery: d, Endpoint: endpointOf(d.EndpointID), Token: token}
	}
	return o
}

// distinct returns the offers' endpoints, once each.
func (o *offers) distinct() []string {
	d := slices.Clone(o.endpoints)
	slices.Sort(d)
	return slices.Compact(d)
}

// settle hands the engine the leases that committed and gives back the
// rest; leased is nil when the transaction did not commit.
func (o *offers) settle(leased map[string]bool) {
	if o.engine == nil || len(o.ids) == 0 {
		return
	}
	var handed []*webhooks.Claim
	var back []string
	for i, id := range o.ids {
		if leased[id] {
			handed = append(handed, o.claims[id])
		} else {
			back = append(back, o.endpoints[i])
		}
	}
	if len(back) > 0 {
		o.engine.Unlease(back)
	}
	o.engine.Hand(handed)
}
