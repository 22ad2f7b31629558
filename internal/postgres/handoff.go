package postgres

import (
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

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
// deliveries: the engine took a slot for each, and the statement that
// inserts them keeps those within their endpoints' caps.
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

// queueLocks queues in b, before the deliveries' insert, the statement
// that takes the claim locks of the offers' endpoints, without waiting: an
// endpoint whose lock a claimer holds gets no lease (its deliveries wait
// for a claim). Claimers take the same lock before they count an
// endpoint's claims, so the count the insert makes under it (in a later
// statement, whose snapshot sees every claim committed before the lock) is
// the cluster's, and stays so until the commit: the cap holds across
// processes. The locked endpoints pass to the insert in a transaction
// setting.
func (o *offers) queueLocks(b *pgx.Batch) {
	if len(o.ids) == 0 {
		return
	}
	distinct := slices.Clone(o.endpoints)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	b.Queue(`SELECT set_config('webhooks.leasable', coalesce(string_agg(e, ','), ''), true)
		FROM unnest($1::text[]) AS e WHERE pg_try_advisory_xact_lock($2, hashtext(e))`, distinct, lockClaim)
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
