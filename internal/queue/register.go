package queue

import (
	"cmp"
	"context"
	"errors"
	"runtime/pprof"
	"slices"
	"sync/atomic"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/groupcommit"
)

// ErrCatalogChanged is Register's answer to a registration checked
// against a version of the event-type catalog that is no longer the
// database's: it registered nothing, and the caller checks the event
// against the catalog as it is now.
var ErrCatalogChanged = errors.New("queue: the event-type catalog changed since the event was checked")

// Registrar registers events, in groups: concurrent registrations share
// one transaction and one wait for the disk (see groupcommit), which is
// most of what a registration costs on a busy machine.
type Registrar struct {
	drv       driver.Registrar
	routes    routes
	engine    Engine // nil: none to hand deliveries to
	announce  func()
	committer *groupcommit.Committer[*registration]
	shared    bool // registrations and records share one writer
	// behind is set when the last group found the engine without room
	// (see Engine.Pace).
	behind atomic.Bool
}

// NewRegistrar returns a registrar on drv. announce, if set, is called
// after a group committed pending deliveries that no engine was handed:
// it wakes the engines that claim them (this process's, and the others'
// when this one has no room).
func NewRegistrar(drv driver.Registrar, announce func()) *Registrar {
	if announce == nil {
		announce = func() {}
	}
	gc := drv.GroupCommit()
	r := &Registrar{drv: drv, announce: announce, shared: gc.SharedWriter}
	// The workers inherit the label, so that a CPU profile tells the
	// registration groups' cost apart (go tool pprof -tagfocus role=registrar).
	pprof.Do(context.Background(), pprof.Labels("role", "registrar"), func(context.Context) {
		window := func() time.Duration { return gc.Scaled(gc.Window) }
		r.committer = groupcommit.StartWindow(max(gc.Registrars, 1), max(gc.MaxGroup, 1), window, r.commitGroup)
	})
	return r
}

// SetEngine makes the registrar hand the deliveries it registers to e:
// each pending one is inserted claimed by e, if e has room for it, and
// passed over once its group commits; the rest wait for a claim, and
// announce is called for them. Call it before the registrar serves.
func (r *Registrar) SetEngine(e Engine) { r.engine = e }

// Close stops the registrar once the groups being committed are done.
func (r *Registrar) Close() { r.committer.Close() }

// Registration is an event to register.
type Registration struct {
	Event *webhooks.Event
	// Key, if set, makes a registration that Repeats a stored one return
	// the first event, and register nothing.
	Key *webhooks.IdempotencyKey
	// Catalog is the version of the catalog Event was checked against,
	// if Checked: a registration whose transaction finds another is
	// refused with ErrCatalogChanged.
	Catalog int64
	Checked bool
}

// Register stores the event and, in the same transaction, its deliveries
// (webhooks.Route over the endpoints existing now), and returns them. A
// key that repeats a recent registration returns the first event, created
// false, and registers nothing. Returns EUNKNOWNCOMPANY or EUNKNOWNACCOUNT
// for a reference to nothing, EUNPROCESSABLE when account_id and the
// company's account disagree, EIDEMPOTENCYREUSED, and ErrCatalogChanged.
// The event's AccountID is filled from its company.
func (r *Registrar) Register(ctx context.Context, reg Registration) (ev *webhooks.Event, deliveries []*webhooks.Delivery, created bool, err error) {
	g := &registration{ctx: ctx, Registration: reg}
	if err := r.committer.Do(ctx, g); err != nil {
		return nil, nil, false, err
	}
	if g.err != nil {
		return nil, nil, false, g.err
	}
	if g.first != nil {
		return g.first, nil, false, nil
	}
	return reg.Event, g.deliveries, true, nil
}

// registration is one Register waiting for its group's commit.
type registration struct {
	ctx context.Context // the caller's: if it ends before the group begins, the registration is left out
	Registration

	firstID    string          // the first event's id, for a repeated key
	first      *webhooks.Event // …read back
	deliveries []*webhooks.Delivery
	err        error
}

// maxPacing bounds how long a group waits for the engine (see
// Engine.Pace): an engine held up by slow endpoints paces registration no
// slower than a group per maxPacing.
const maxPacing = 20 * time.Millisecond

// commitGroup registers group and answers each registration.
//
// One Idempotency-Key twice in a group (a producer's retry racing its
// first try): the second is registered after the first commits, and finds
// its key. The rest are sorted by key, so that groups lock keys in one
// order and cannot deadlock. A registration the domain refuses writes
// nothing and refuses no other; when the database refuses the group's
// writes as a whole, each of its registrations is registered alone, so
// that only the one at fault fails.
//
// The group's transaction runs with a context of its own, not the
// callers': a caller that gives up while its registration is being
// written would otherwise roll back everyone's. (Its registration may then
// commit without its caller being told, as groupcommit.Committer.Do says.)
func (r *Registrar) commitGroup(group []*registration) {
	group, later := splitRepeatedKeys(group)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if r.shared && r.engine != nil {
		r.engine.Pace(ctx, r.behind.Load(), maxPacing)
	}
	if err := r.write(ctx, group); err != nil {
		for _, g := range group {
			if g.err != nil {
				continue
			}
			if len(group) == 1 {
				g.err = err
			} else if err := r.write(ctx, []*registration{g}); err != nil {
				g.err = err
			}
		}
	}
	if len(later) > 0 {
		r.commitGroup(later)
	}
}

// splitRepeatedKeys returns the registrations of group sorted by key, but
// for those whose key an earlier one has, which it returns apart.
func splitRepeatedKeys(group []*registration) (first, later []*registration) {
	seen := map[string]bool{}
	for _, g := range group {
		if g.Key != nil && seen[g.Key.Key] {
			later = append(later, g)
			continue
		}
		if g.Key != nil {
			seen[g.Key.Key] = true
		}
		first = append(first, g)
	}
	slices.SortStableFunc(first, func(a, b *registration) int { return cmp.Compare(keyOf(a), keyOf(b)) })
	return first, later
}

func keyOf(g *registration) string {
	if g.Key == nil {
		return ""
	}
	return g.Key.Key
}

// write registers group in one transaction; the error is the database's,
// for the whole group (a refusal of one registration is in its err).
func (r *Registrar) write(ctx context.Context, group []*registration) error {
	h := handoff{engine: r.engine}
	written, err := r.drv.RegisterGroup(ctx, func(tx driver.RegisterTx) (*driver.GroupWrites, error) {
		h.reset()
		return r.plan(ctx, tx, group, &h)
	})
	if err != nil {
		h.settle(nil)
		for _, g := range group {
			g.deliveries, g.firstID = nil, ""
		}
		return err
	}
	h.settle(written.Inserted)
	pending := false
	for _, g := range group {
		if g.err != nil {
			continue
		}
		if g.firstID != "" {
			if g.first = written.Firsts[g.firstID]; g.first == nil {
				g.err = webhooks.NotFound("event")
			}
			continue
		}
		g.deliveries = slices.DeleteFunc(g.deliveries, func(d *webhooks.Delivery) bool { return !written.Inserted[d.ID] })
		pending = pending || slices.ContainsFunc(g.deliveries, func(d *webhooks.Delivery) bool {
			return d.Status == webhooks.DeliveryPending && h.leases[d.ID] == nil && !d.Waiting()
		})
	}
	r.behind.Store(h.full)
	if pending {
		r.announce()
	}
	return nil
}

// plan reads what group needs in tx and returns what it writes: each
// registration's event, key and deliveries, or its refusal in its err.
func (r *Registrar) plan(ctx context.Context, tx driver.RegisterTx, group []*registration, h *handoff) (*driver.GroupWrites, error) {
	var live []*registration
	for _, g := range group {
		g.err, g.firstID, g.first, g.deliveries = g.ctx.Err(), "", nil, nil
		if g.err == nil {
			live = append(live, g)
		}
	}
	keys := make([]webhooks.OwnersKey, len(live))
	for i, g := range live {
		keys[i] = webhooks.OwnersKeyOf(g.Event)
	}
	// The owners the cache holds are trusted once their routes are
	// locked and the routing version, read after the locks, is still the
	// one they were read at; the others are read after the version, so
	// that what they read is at least as new as the version they are
	// cached at.
	owners, cachedAt := r.routes.get(keys)
	var reads driver.GroupReads
	missing := map[webhooks.OwnersKey]int{} // key → its index in reads.Owners
	for i, o := range owners {
		if o != nil {
			reads.Locks = append(reads.Locks, o.Locks(keys[i])...)
		} else if _, ok := missing[keys[i]]; !ok {
			missing[keys[i]] = len(reads.Owners)
			reads.Owners = append(reads.Owners, keys[i])
		}
		if k := live[i].Key; k != nil {
			reads.Keys = append(reads.Keys, k.Key)
		}
	}
	slices.Sort(reads.Locks)
	reads.Locks = slices.Compact(reads.Locks)
	facts, err := tx.Begin(ctx, reads)
	if err != nil {
		return nil, err
	}
	read := map[webhooks.OwnersKey]*webhooks.Owners{}
	for k, i := range missing {
		read[k] = facts.Owners[i]
	}
	if len(reads.Locks) > 0 && facts.RoutingVersion != cachedAt {
		// Routing changed since the cached reads: read them all again.
		r.routes.reset()
		distinct := slices.Compact(slices.SortedFunc(slices.Values(keys), compareKeys))
		again, err := tx.ReadOwners(ctx, distinct)
		if err != nil {
			return nil, err
		}
		for i, k := range distinct {
			read[k] = again[i]
		}
		clear(owners)
	}
	r.routes.put(facts.RoutingVersion, read)
	w := &driver.GroupWrites{}
	endpoints := map[string]*webhooks.Endpoint{}
	for i, g := range live {
		o := owners[i]
		if o == nil {
			o = read[keys[i]]
		}
		if g.Checked && g.Catalog != facts.CatalogVersion {
			// Checked against a catalog that has changed since: it writes
			// nothing, and the use case checks it again.
			g.err = ErrCatalogChanged
			continue
		}
		if g.Key != nil {
			var stored *webhooks.IdempotencyKey
			sk := facts.Keys[g.Key.Key]
			if sk != nil {
				stored = &sk.IdempotencyKey
			}
			repeat, err := g.Key.Repeats(stored)
			if err != nil {
				g.err = err
				continue
			}
			if repeat {
				g.firstID = sk.EventID
				w.Firsts = append(w.Firsts, sk.EventID)
				continue
			}
		}
		c, err := o.Candidates(g.Event)
		if err != nil {
			g.err = err
			continue
		}
		if g.deliveries, g.err = webhooks.Route(g.Event, c, g.Event.Created); g.err != nil {
			continue
		}
		w.Events, w.Keys = append(w.Events, g.Event), append(w.Keys, g.Key)
		w.Deliveries = append(w.Deliveries, g.deliveries...)
		for _, e := range c.All() {
			endpoints[e.ID] = e
		}
	}
	// The deliveries of ordered endpoints join their chains (SPEC 18), in
	// the group's order, behind what each chain has pending.
	if chains := webhooks.Chains(w.Deliveries); len(chains) > 0 {
		tails, err := tx.Tails(ctx, chains)
		if err != nil {
			return nil, err
		}
		webhooks.Chain(w.Deliveries, tails)
	}
	for _, g := range live {
		if g.err != nil {
			continue
		}
		for _, d := range g.deliveries {
			if !d.Waiting() {
				h.offer(d, endpoints[d.EndpointID], g.Event.Traceparent)
			}
		}
	}
	w.Leases = h.driverLeases()
	return w, nil
}

func compareKeys(a, b webhooks.OwnersKey) int {
	return cmp.Or(cmp.Compare(a.Company, b.Company), cmp.Compare(a.Account, b.Account),
		compareBool(a.AccountEvent, b.AccountEvent), compareBool(a.Operational, b.Operational))
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
