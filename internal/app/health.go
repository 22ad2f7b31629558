package app

import (
	"context"
	"slices"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// systemActor is the service itself, as the actor of what it does to an
// endpoint on its own: disable one that is dead, enable one that
// recovered.
var systemActor = webhooks.Actor{Type: webhooks.ActorSystem}

// DrainOutbox acts on the outbox (SPEC 14): it registers the operational
// events its entries announce, each routed to the platform endpoints like
// any event (signed, retried, in the history), and disables the endpoints
// they say are dead (answered 410 Gone, or failed every attempt for too
// long; see webhooks.HealthRule), auditing and announcing each disable.
// Each entry is acted on in the transaction that deletes it, so that a
// crash at any instant neither loses an event nor registers it twice.
// It takes up to limit entries, oldest first, and returns how many it
// took: call it again while that is limit. An entry that fails is left
// for the next call, and the others go on.
func (a *App) DrainOutbox(ctx context.Context, limit int) (int, error) {
	n, err := a.drainOutbox(ctx, limit, 0)
	if err != nil && ctx.Err() == nil {
		// One entry at a time, so that one that fails holds back no other.
		n = 0
		for skip := 0; skip < limit && ctx.Err() == nil; {
			m, err := a.drainOutbox(ctx, 1, skip)
			if err != nil {
				a.cfg.Logger.Error("outbox: acting on an entry failed; it waits for the next drain", "err", err)
				skip++ // it stays first: the next one is after it
				continue
			}
			if m == 0 {
				break
			}
			n += m
		}
		return n, nil
	}
	return n, err
}

// drainOutbox acts on up to limit entries, past the first skip, in one
// transaction.
func (a *App) drainOutbox(ctx context.Context, limit, skip int) (int, error) {
	now := a.cfg.Now()
	var n int
	var due bool
	err := a.cfg.Store.InTx(ctx, func(tx Tx) error {
		entries, err := tx.Outbox(ctx, limit+skip)
		if err != nil {
			return err
		}
		entries = entries[min(skip, len(entries)):]
		n, due = len(entries), false
		ids := make([]string, len(entries))
		for i, e := range entries {
			ids[i] = e.ID
			pending, err := a.act(ctx, tx, e, now)
			if err != nil {
				return err
			}
			due = due || pending
		}
		return tx.DeleteOutbox(ctx, ids)
	})
	if err != nil {
		return 0, err
	}
	if due {
		a.cfg.Wake()
	}
	if n > 0 {
		a.cfg.Drained()
	}
	return n, nil
}

// act acts on one outbox entry in tx, and reports whether it made
// deliveries due. An entry about what no longer exists (a deleted
// endpoint, company or account) does nothing.
func (a *App) act(ctx context.Context, tx Tx, e *webhooks.OutboxEntry, now time.Time) (bool, error) {
	switch e.Kind {
	case webhooks.OutboxDisable:
		return a.disableDead(ctx, tx, e, now)
	case webhooks.OutboxRecover:
		return a.recoverDisabled(ctx, tx, e, now)
	}
	account := e.AccountID
	if account == "" && e.CompanyID != "" {
		co, err := tx.FindCompany(ctx, e.CompanyID)
		if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
			return false, nil
		} else if err != nil {
			return false, err
		}
		account = co.AccountID
	}
	ev, err := e.Event(account)
	if err != nil {
		return false, err
	}
	return registerIn(ctx, tx, ev, now)
}

// registerIn registers an operational event in tx, routed to the platform
// endpoints, and reports whether it made deliveries due.
func registerIn(ctx context.Context, tx Tx, ev *webhooks.Event, now time.Time) (bool, error) {
	owners, err := tx.ReadOwners(ctx, []webhooks.OwnersKey{webhooks.OwnersKeyOf(ev)})
	if err != nil {
		return false, err
	}
	c, err := owners[0].Candidates(ev)
	if webhooks.ErrorCode(err) == webhooks.EUNKNOWNACCOUNT {
		return false, nil // the account was deleted since
	} else if err != nil {
		return false, err
	}
	ds, err := webhooks.Route(ev, c, now)
	if err != nil {
		return false, err
	}
	if err := tx.InsertEvent(ctx, ev); err != nil {
		return false, err
	}
	ds, err = tx.InsertDeliveries(ctx, ds)
	return slices.ContainsFunc(ds, func(d *webhooks.Delivery) bool { return d.Status == webhooks.DeliveryPending }), err
}

// outboxEndpoint finds the endpoint an outbox entry names, its account,
// and its current state locked for a change; cur is nil if the endpoint,
// or its owner, was deleted since the entry was stored: the entry has
// nothing left to act on.
func (a *App) outboxEndpoint(ctx context.Context, tx Tx, id string) (ep *webhooks.Endpoint, account string, cur *webhooks.Endpoint, err error) {
	gone := func(err error) bool { return webhooks.ErrorCode(err) == webhooks.ENOTFOUND }
	if ep, err = a.cfg.Store.FindEndpoint(ctx, id); gone(err) {
		return nil, "", nil, nil
	} else if err != nil {
		return nil, "", nil, err
	}
	if account, _, err = a.endpointAccount(ctx, ep); gone(err) {
		return nil, "", nil, nil
	} else if err != nil {
		return nil, "", nil, err
	}
	if cur, err = lockForChange(ctx, tx, ep); gone(err) {
		return nil, "", nil, nil
	}
	return ep, account, cur, err
}

// disableDead disables the endpoint of an OutboxDisable entry, if it is
// still enabled, as a customer's PATCH would (its pending deliveries end
// failed, nothing is lost), with the entry's reason and moment, audited
// as the system's, and announces it: webhook_endpoint.disabled, whose id
// is the entry's.
func (a *App) disableDead(ctx context.Context, tx Tx, e *webhooks.OutboxEntry, now time.Time) (bool, error) {
	ep, account, cur, err := a.outboxEndpoint(ctx, tx, e.EndpointID)
	if err != nil || cur == nil || !cur.Enabled() {
		return false, err
	}
	disabled := *cur
	disabled.Disable(e.Reason, e.At)
	disabled.Updated = now
	if err := saveEndpoint(ctx, tx, cur, &disabled, now); err != nil {
		return false, err
	}
	system := Caller{Actor: systemActor}
	if err := insertAudit(ctx, tx, system.audit(account, webhooks.AuditEndpointDisabled, webhooks.TargetEndpoint, ep.ID, now)); err != nil {
		return false, err
	}
	a.cfg.Logger.Warn("endpoint health: endpoint disabled", "endpoint_id", ep.ID, "reason", e.Reason,
		"failing_since", disabled.FailingSince, "consecutive_failures", disabled.FailureStreak)
	if ep.Scope == webhooks.ScopePlatform {
		return false, nil
	}
	ann := webhooks.NewAnnouncement(webhooks.EventEndpointDisabled, &disabled, webhooks.OperationalObject{
		Actor: webhooks.NewOperationalActor(systemActor), LastAttempt: e.LastAttempt}, e.At)
	ann.ID = e.ID
	ev, err := ann.Event(account)
	if err != nil {
		return false, err
	}
	return registerIn(ctx, tx, ev, now)
}
