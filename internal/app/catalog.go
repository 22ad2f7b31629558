package app

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/catalog"
	"github.com/factuarea/webhooks/internal/queue"
)

// The event-type catalog on the registration path. Registration is hot
// (thousands a second) and the catalog changes seldom, so the use cases
// check events against a catalog held in memory, compiled once per
// version, and read no catalog from the database per event. The
// registrar makes that exact: the event is registered with the version it
// was checked against (queue.Registration.Catalog), and a registering
// transaction that finds another version registers nothing and answers
// queue.ErrCatalogChanged; the use case then reads the catalog again and
// checks the event anew. A change made by another process on the same
// database is so seen by the first registration after it, at the cost of
// one refused attempt, and never missed. A refusal is not the store's to
// check: the use case confirms it on the catalog read again (one query,
// on refusals only).

// maxCatalogRetries bounds how many times one registration is checked
// again because the catalog changed meanwhile: each retry reads the new
// catalog, so only a catalog changing faster than a registration commits
// could exhaust it.
const maxCatalogRetries = 5

// catalogs holds the catalog that events are checked against.
type catalogs struct {
	// current is the catalog of the last version read; nil when it must
	// be read again (this process changed it, or a store found it stale).
	current atomic.Pointer[catalog.Catalog]
	mu      sync.Mutex       // one read of the catalog at a time
	last    *catalog.Catalog // the last read, which lends its compiled schemas to the next (guarded by mu)
}

// catalog returns the catalog held in memory, read from the store if
// there is none.
func (a *App) catalog(ctx context.Context) (*catalog.Catalog, error) {
	if c := a.catalogs.current.Load(); c != nil {
		return c, nil
	}
	return a.readCatalog(ctx, false)
}

// freshCatalog returns the catalog as the store has it now: for the checks
// that are not on the hot path (subscriptions, the portal's form), which
// read it rather than rely on a version that another process may have
// changed.
func (a *App) freshCatalog(ctx context.Context) (*catalog.Catalog, error) {
	return a.readCatalog(ctx, true)
}

// readCatalog reads the catalog from the store and holds it; unless fresh,
// a catalog that another caller read meanwhile will do. Schemas are
// compiled only when the version moved, and then only those that changed.
func (a *App) readCatalog(ctx context.Context, fresh bool) (*catalog.Catalog, error) {
	cs := &a.catalogs
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c := cs.current.Load(); c != nil && !fresh {
		return c, nil
	}
	v, types, err := a.cfg.Store.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	c := cs.last
	if c == nil || c.Version() != v {
		c = catalog.New(v, types, cs.last)
	}
	cs.last = c
	cs.current.Store(c)
	return c, nil
}

// catalogChanged drops the catalog held, after this process changed it.
func (a *App) catalogChanged() { a.catalogs.current.Store(nil) }

// register registers a validated event with its key (nil: none), checked
// against the catalog (see above), and returns the event registered, or
// the first one of a repeated key, and whether it was created now.
func (a *App) register(ctx context.Context, ev *webhooks.Event, key *webhooks.IdempotencyKey) (*webhooks.Event, []*webhooks.Delivery, bool, error) {
	if webhooks.CatalogExempt(ev.Type) {
		return a.cfg.Registrar.Register(ctx, queue.Registration{Event: ev, Key: key})
	}
	for range maxCatalogRetries + 1 {
		c, err := a.catalog(ctx)
		if err != nil {
			return nil, nil, false, err
		}
		if err := c.CheckEvent(ev.Type, ev.Object); err != nil {
			// The store checks only what it registers: a refusal is
			// confirmed on the catalog as it is now, which another process
			// may have changed (declared the type, say).
			if now, ferr := a.freshCatalog(ctx); ferr != nil {
				return nil, nil, false, ferr
			} else if now.Version() != c.Version() {
				continue
			}
			if webhooks.ErrorCode(err) == webhooks.EINTERNAL {
				a.cfg.Logger.Error("catalog: an event type's stored schema does not compile", "type", ev.Type, "err", err)
			}
			return nil, nil, false, err
		}
		got, ds, created, err := a.cfg.Registrar.Register(ctx, queue.Registration{Event: ev, Key: key, Catalog: c.Version(), Checked: true})
		if !errors.Is(err, queue.ErrCatalogChanged) {
			return got, ds, created, err
		}
		a.catalogs.current.CompareAndSwap(c, nil)
	}
	return nil, nil, false, webhooks.Errorf(webhooks.EUNAVAILABLE, "The event-type catalog is changing too fast to check the event against it: try again in a moment.")
}
