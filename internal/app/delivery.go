package app

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// DeliveryQuery filters an endpoint's deliveries.
type DeliveryQuery struct {
	Status  string // empty: any
	EventID string // empty: any
}

// ListDeliveries lists an endpoint's deliveries, newest first.
func (a *App) ListDeliveries(ctx context.Context, c Caller, ref EndpointRef, q DeliveryQuery, p webhooks.Page) (*webhooks.List[*webhooks.Delivery], error) {
	oe, err := a.Endpoint(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	if q.Status != "" && !webhooks.KnownDeliveryStatus(q.Status) {
		return nil, webhooks.Errorf(webhooks.EINVALID, "status must be pending, delivered, failed or failed_permanently.")
	}
	if q.EventID != "" && !webhooks.ValidID(q.EventID) {
		return nil, webhooks.Errorf(webhooks.EINVALID, "event_id must be an event id.")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return a.cfg.Store.ListDeliveries(ctx, webhooks.DeliveryFilter{EndpointID: oe.ID, Status: q.Status, EventID: q.EventID}, p)
}

// Delivery returns a delivery of the endpoint ref names, with its attempts:
// a delivery of another endpoint is "not found".
func (a *App) Delivery(ctx context.Context, c Caller, ref EndpointRef, id string) (*OwnedEndpoint, *webhooks.Delivery, error) {
	oe, err := a.Endpoint(ctx, c, ref)
	if err != nil {
		return nil, nil, err
	}
	if !webhooks.ValidID(id) {
		return nil, nil, webhooks.NotFound("webhook delivery")
	}
	d, err := a.cfg.Store.FindDelivery(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if d.EndpointID != oe.ID {
		return nil, nil, webhooks.NotFound("webhook delivery")
	}
	return oe, d, nil
}

// Resend sends a delivery again by hand, for one attempt now: action is
// webhooks.ActionRetry (account endpoints re-arm the delivery) or
// webhooks.ActionReplay (company endpoints make a new one), or empty for
// the endpoint's own. It returns the delivery that will be attempted.
func (a *App) Resend(ctx context.Context, c Caller, ref EndpointRef, deliveryID, action string) (*webhooks.Delivery, error) {
	oe, d, err := a.Delivery(ctx, c, ref, deliveryID)
	if err != nil {
		return nil, err
	}
	if action == "" {
		action = webhooks.ResendAction(oe.Scope)
	}
	auditAction := webhooks.AuditDeliveryRetried
	if action == webhooks.ActionReplay {
		auditAction = webhooks.AuditDeliveryReplayed
	}
	now := a.cfg.Now()
	var out *webhooks.Delivery
	err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
		// The endpoint may not be disabled until this commits, and two
		// resends of one delivery take turns: the second finds it pending.
		// Endpoint before delivery is the order every change takes them in.
		ep, err := tx.ShareEndpoint(ctx, oe.ID)
		if err != nil {
			return err
		}
		locked, err := tx.LockDelivery(ctx, d.ID)
		if err != nil {
			return err
		}
		ev, err := tx.FindEvent(ctx, locked.EventID)
		if err != nil {
			return err
		}
		if ev.Erased() {
			return webhooks.EventErased(ev.ID) // nothing is left to send
		}
		if err := webhooks.CheckResend(action, ep, locked, ev.Created, now); err != nil {
			return err
		}
		if action == webhooks.ActionRetry {
			locked.Rearm(now)
			locked.OutOfOrder()
			if err := tx.Rearm(ctx, []*webhooks.Delivery{locked}); err != nil {
				return err
			}
			out = locked
		} else {
			out = locked.Replay(now)
			if _, err := tx.InsertDeliveries(ctx, []*webhooks.Delivery{out}); err != nil {
				return err
			}
		}
		return insertAudit(ctx, tx, c.audit(oe.OwnerAccount, auditAction, webhooks.TargetDelivery, out.ID, now))
	})
	if err != nil {
		return nil, a.refused(ctx, c, oe.OwnerAccount, auditAction, webhooks.TargetDelivery, d.ID, err)
	}
	a.cfg.Wake()
	return out, nil
}

// RecoverInput is the range of a recovery, in unix seconds.
type RecoverInput struct {
	Since *int64 // required
	Until *int64 // nil: now
}

// Recover retries or replays every failed delivery of the endpoint created
// in [since, until), and returns how many.
func (a *App) Recover(ctx context.Context, c Caller, ref EndpointRef, in RecoverInput) (int, error) {
	oe, err := a.Endpoint(ctx, c, ref)
	if err != nil {
		return 0, err
	}
	refuse := func(err error) error {
		return a.refused(ctx, c, oe.OwnerAccount, webhooks.AuditEndpointRecovered, webhooks.TargetEndpoint, oe.ID, err)
	}
	now := a.cfg.Now()
	if in.Since == nil {
		return 0, refuse(webhooks.Errorf(webhooks.EINVALID, "since is required: the start of the range, in unix seconds."))
	}
	since, err := webhooks.UnixTime("since", *in.Since)
	if err != nil {
		return 0, refuse(err)
	}
	until := now
	if in.Until != nil {
		if until, err = webhooks.UnixTime("until", *in.Until); err != nil {
			return 0, refuse(err)
		}
	}
	if !since.Before(until) {
		return 0, refuse(webhooks.Errorf(webhooks.EINVALID, "since must be before until (which defaults to now)."))
	}
	n := 0
	err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
		// Locked: two recoveries of one endpoint take turns, and the second
		// finds the first's retries pending and its replays newer; and the
		// endpoint cannot be disabled until this commits.
		ep, err := tx.LockEndpoint(ctx, oe.ID)
		if err != nil {
			return err
		}
		if !ep.Enabled() {
			return webhooks.Errorf(webhooks.EENDPOINTDISABLED, "the endpoint is disabled: enable it before recovering its deliveries.")
		}
		if n, err = recoverIn(ctx, tx, ep, since, until, now); err != nil {
			return err
		}
		return insertAudit(ctx, tx, c.audit(oe.OwnerAccount, webhooks.AuditEndpointRecovered, webhooks.TargetEndpoint, oe.ID, now))
	})
	if err != nil {
		return 0, refuse(err)
	}
	if n > 0 {
		a.cfg.Wake()
	}
	return n, nil
}

// recoverIn sends again, in tx, every failed delivery of ep (locked,
// enabled) created in [since, until) that a resend by hand would allow,
// and returns how many.
func recoverIn(ctx context.Context, tx Tx, ep *webhooks.Endpoint, since, until, now time.Time) (int, error) {
	action := webhooks.ResendAction(ep.Scope)
	cands, err := tx.RecoverCandidates(ctx, webhooks.RecoverFilter{
		EndpointID: ep.ID, CreatedGTE: since, CreatedLT: until, Statuses: webhooks.ResendableStatuses,
	})
	if err != nil {
		return 0, err
	}
	// What a resend by hand of each would allow, test events aside but
	// for an outage rehearsal's, whose recovery it rehearses, and erased
	// events, which have nothing left to send; replays are made in the
	// order of their originals.
	var ds []*webhooks.Delivery
	for _, cd := range cands {
		if (!cd.EventTest || cd.Delivery.Rehearsal) && !cd.EventErased && webhooks.CheckResend(action, ep, cd.Delivery, cd.EventCreated, now) == nil {
			ds = append(ds, cd.Delivery)
		}
	}
	if len(ds) == 0 {
		return 0, nil
	}
	slices.SortFunc(ds, func(a, b *webhooks.Delivery) int {
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
	})
	// On an ordered endpoint what is sent again goes back into its chain,
	// in registration order, behind what the chain has pending (SPEC 18).
	if !ep.Ordered {
		for _, d := range ds {
			d.OutOfOrder()
		}
	}
	sent := ds
	if action == webhooks.ActionRetry {
		for _, d := range ds {
			d.Rearm(now)
		}
	} else {
		sent = make([]*webhooks.Delivery, len(ds))
		for i, d := range ds {
			sent[i] = d.Replay(now)
			sent[i].OrderingKey = d.OrderingKey
		}
	}
	if chains := webhooks.Chains(sent); len(chains) > 0 {
		tails, err := tx.Tails(ctx, chains)
		if err != nil {
			return 0, err
		}
		webhooks.Chain(sent, tails)
	}
	if action == webhooks.ActionRetry {
		err = tx.Rearm(ctx, sent)
	} else {
		_, err = tx.InsertDeliveries(ctx, sent)
	}
	return len(ds), err
}
