package app

import (
	"context"

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
	resend, auditAction := a.cfg.Store.RetryDelivery, webhooks.AuditDeliveryRetried
	if action == webhooks.ActionReplay {
		resend, auditAction = a.cfg.Store.ReplayDelivery, webhooks.AuditDeliveryReplayed
	}
	out, err := resend(ctx, d.ID, a.cfg.Now(), c.audit())
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
	n, err := a.cfg.Store.Recover(ctx, oe.ID, since, until, now, c.audit())
	if err != nil {
		return 0, refuse(err)
	}
	if n > 0 {
		a.cfg.Wake()
	}
	return n, nil
}
