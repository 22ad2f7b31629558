package sqlite

import (
	"context"
	"slices"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// SetEngine makes the store hand the deliveries it registers to e: each
// pending one is inserted already leased to e, if e has room for it, and
// passed over in memory once its group commits (see app.Engine); the rest
// wait for a claim, and e is woken for them. Call it before the store
// serves.
func (s *Store) SetEngine(e app.Engine) { s.engine = e }

// leases are the leases a group's transaction took, to hand over if it
// commits and give back if it does not.
type leases struct {
	claims   []*webhooks.Claim
	unleased bool // a pending delivery was left for a claim
	full     bool // because the engine had no room
}

// insertDeliveries inserts the deliveries a registration routed to
// endpoints, leasing to the engine those it has room for.
func (s *Store) insertDeliveries(ctx context.Context, tx *txn, ds []*webhooks.Delivery, endpoints func(id string) *webhooks.Endpoint) ([]*webhooks.Delivery, error) {
	out := ds[:0:0]
	for _, d := range ds {
		queued, err := joinsQueue(ctx, tx, d)
		if err != nil {
			return nil, err
		}
		var token string
		var until time.Time
		if d.Status == webhooks.DeliveryPending && !queued && s.engine != nil {
			var ok bool
			if token, until, ok = s.engine.Lease(d.EndpointID, d.Created); !ok && !s.engine.HasRoom() {
				s.group.full = true
			}
		}
		inserted, err := insertDelivery1(ctx, tx, d, queued, token, until)
		if token != "" && (err != nil || !inserted) {
			s.engine.Unlease([]string{d.EndpointID})
		}
		if err != nil {
			return nil, err
		}
		if !inserted {
			continue
		}
		out = append(out, d)
		if token != "" {
			s.group.claims = append(s.group.claims, &webhooks.Claim{Delivery: d, Endpoint: endpoints(d.EndpointID), Token: token})
		} else if d.Status == webhooks.DeliveryPending {
			s.group.unleased = true
		}
	}
	return out, nil
}

// unlease gives back the leases taken since the first n.
func (g *leases) unlease(e app.Engine, n int) {
	ids := make([]string, 0, len(g.claims)-n)
	for _, c := range g.claims[n:] {
		ids = append(ids, c.Endpoint.ID)
	}
	if len(ids) > 0 {
		e.Unlease(ids)
	}
	g.claims = g.claims[:n]
}

// settle ends a group's transaction for its leases: the engine gets the
// claims if it committed, and their slots back if not.
func (s *Store) settle(committed bool) {
	g := s.group
	s.group = leases{}
	s.behind = committed && g.full
	if s.engine == nil {
		return
	}
	if !committed {
		g.unlease(s.engine, 0)
		return
	}
	s.engine.Hand(g.claims)
	if g.unleased {
		s.engine.Wake()
	}
}

// endpointsOf returns a lookup of the endpoints among c.
func endpointsOf(c webhooks.Candidates) func(id string) *webhooks.Endpoint {
	all := c.All()
	return func(id string) *webhooks.Endpoint {
		if i := slices.IndexFunc(all, func(e *webhooks.Endpoint) bool { return e.ID == id }); i >= 0 {
			return all[i]
		}
		return nil
	}
}
