package app

import (
	"context"
	"net/http"
	"slices"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// systemActor is the service itself, as the actor of what the engine does
// to an endpoint: disable one that is dead.
var systemActor = webhooks.Actor{Type: webhooks.ActorSystem}

// ObserveAttempts acts on the stored attempt records the engine finds
// noteworthy (SPEC 14): it registers the operational events they call for
// (webhook_endpoint.failing once per episode, .recovered at the 2xx that
// ends one, webhook_delivery.exhausted per delivery that ended
// failed_permanently) and disables an endpoint that answered 410 Gone, or
// whose every attempt has failed for Config.DisableAfter. Operational
// events about a platform endpoint are not sent (they would go to the
// platform endpoints, maybe to the failing one itself); a dead one is
// still disabled. Errors are logged: the next failed attempt decides
// again.
func (a *App) ObserveAttempts(ctx context.Context, records []*webhooks.AttemptRecord) {
	for _, r := range records {
		if err := a.observe(ctx, r); err != nil {
			a.cfg.Logger.Error("endpoint health: acting on an attempt failed", "endpoint_id", r.EndpointID,
				"delivery_id", r.Attempt.DeliveryID, "err", err)
		}
	}
}

func (a *App) observe(ctx context.Context, r *webhooks.AttemptRecord) error {
	now := a.cfg.Now()
	h := r.Health
	if h == nil {
		h = &webhooks.Health{}
	}
	exhausted := r.Transition.Status == webhooks.DeliveryFailedPermanently
	reason := ""
	switch {
	case r.Attempt.ResponseStatus == http.StatusGone:
		reason = webhooks.DisabledGone
	case h.FailingFor(a.cfg.DisableAfter, now):
		reason = webhooks.DisabledFailing
	}
	if h.Failing == nil && h.Recovered == nil && !exhausted && reason == "" {
		return nil // a failure of a failing endpoint, not yet dead: nothing to do
	}
	ep, err := a.cfg.Store.FindEndpoint(ctx, r.EndpointID)
	if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
		return nil // deleted since
	} else if err != nil {
		return err
	}
	account, _, err := a.endpointAccount(ctx, ep)
	if err != nil {
		return err
	}
	notify := ep.Scope != webhooks.ScopePlatform
	last := webhooks.NewOperationalTry(r.Attempt)
	var events []*webhooks.Event
	emit := func(typ string, about webhooks.Endpoint, obj webhooks.OperationalObject) error {
		if !notify {
			return nil
		}
		ev, err := webhooks.NewOperationalEvent(typ, &about, account, obj, now)
		if err == nil {
			events = append(events, ev)
		}
		return err
	}
	// The endpoint as the streak that fired the event was.
	during := func(st *webhooks.Streak) webhooks.Endpoint {
		about := *ep
		about.FailureStreak, about.FailingSince = st.Length, st.Since
		return about
	}
	// In the order the attempts made them: a batch may end an episode and
	// begin the next, or begin one and end it.
	streaks := []struct {
		typ string
		st  *webhooks.Streak
	}{{webhooks.EventEndpointRecovered, h.Recovered}, {webhooks.EventEndpointFailing, h.Failing}}
	if h.FailingFirst {
		slices.Reverse(streaks)
	}
	for _, s := range streaks {
		if s.st == nil {
			continue
		}
		if err := emit(s.typ, during(s.st), webhooks.OperationalObject{LastAttempt: last}); err != nil {
			return err
		}
	}
	if exhausted && notify {
		target, err := a.exhaustedDelivery(ctx, r.Attempt.DeliveryID)
		if err != nil {
			return err
		}
		if target != nil {
			if err := emit(webhooks.EventDeliveryExhausted, *ep, webhooks.OperationalObject{LastAttempt: last, Delivery: target}); err != nil {
				return err
			}
		}
	}
	if reason != "" && ep.Enabled() {
		disabled, err := a.disable(ctx, ep, account, Caller{Actor: systemActor}, reason, now)
		if err != nil {
			return err
		}
		if disabled != nil {
			if err := emit(webhooks.EventEndpointDisabled, *disabled, webhooks.OperationalObject{
				Actor: webhooks.NewOperationalActor(systemActor), LastAttempt: last}); err != nil {
				return err
			}
		}
	}
	return a.registerOperational(ctx, events)
}

// exhaustedDelivery describes the delivery id for its
// webhook_delivery.exhausted, or returns nil if it is not
// failed_permanently. An attempt's record says so when the attempt asked
// for it, which the store may not have done: it drops a record whose
// claim lapsed (another worker has the delivery), and keeps the end of a
// delivery whose endpoint was disabled or deleted while the attempt was
// in flight (Transition.OverridesEnd).
func (a *App) exhaustedDelivery(ctx context.Context, id string) (*webhooks.OperationalTarget, error) {
	d, err := a.cfg.Store.FindDelivery(ctx, id)
	if err != nil || d.Status != webhooks.DeliveryFailedPermanently {
		return nil, err
	}
	target := &webhooks.OperationalTarget{ID: d.ID, EventID: d.EventID, EventType: d.EventType, AttemptCount: d.AttemptCount}
	if d.Reason != "" {
		target.Reason = &d.Reason
	}
	if d.LastResponseStatus != 0 {
		target.LastResponseStatus = &d.LastResponseStatus
	}
	return target, nil
}

// disable disables an enabled endpoint on the engine's behalf, as a
// customer's PATCH would (its pending deliveries end failed, nothing is
// lost), with the reason and the moment, audited as the system's. It
// returns the endpoint disabled, or nil if it was not enabled any more.
func (a *App) disable(ctx context.Context, ep *webhooks.Endpoint, account string, c Caller, reason string, now time.Time) (*webhooks.Endpoint, error) {
	var out *webhooks.Endpoint
	err := a.cfg.Store.InTx(ctx, func(tx Tx) error {
		cur, err := lockForChange(ctx, tx, ep)
		if err != nil || !cur.Enabled() {
			return err
		}
		e := *cur
		e.Disable(reason, now)
		e.Updated = now
		if err := saveEndpoint(ctx, tx, cur, &e, now); err != nil {
			return err
		}
		out = &e
		return insertAudit(ctx, tx, c.audit(account, webhooks.AuditEndpointDisabled, webhooks.TargetEndpoint, e.ID, now))
	})
	if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
		return nil, nil
	}
	if out != nil {
		a.cfg.Logger.Warn("endpoint health: endpoint disabled", "endpoint_id", ep.ID, "reason", reason,
			"failing_since", out.FailingSince, "consecutive_failures", out.FailureStreak)
	}
	return out, err
}

// registerOperational registers operational events, each routed to the
// platform endpoints like any event (signed, retried, in the history).
func (a *App) registerOperational(ctx context.Context, events []*webhooks.Event) error {
	for _, ev := range events {
		// Not counted by Registered: that counts the producer's events.
		if _, _, _, err := a.cfg.Store.RegisterEvent(ctx, ev, nil); err != nil {
			return err
		}
	}
	return nil
}

// EnableAndRecover enables a disabled endpoint and recovers what it
// missed, in one action (the portal's, SPEC 14): every failed delivery
// created since the episode that led to the disable could have begun to
// be retried, that is one retry schedule before it began to fail (or, if
// it never failed, before it was disabled). It returns the endpoint and
// how many deliveries are sent again.
func (a *App) EnableAndRecover(ctx context.Context, c Caller, ref EndpointRef) (*webhooks.Endpoint, int, error) {
	oe, err := a.Endpoint(ctx, c, ref)
	if err != nil {
		return nil, 0, err
	}
	if oe.Enabled() {
		return nil, 0, webhooks.Errorf(webhooks.EINVALID, "the endpoint is enabled already: use recover to send what failed.")
	}
	began := oe.DisabledAt
	if !oe.FailingSince.IsZero() && (began.IsZero() || oe.FailingSince.Before(began)) {
		began = oe.FailingSince
	}
	if began.IsZero() {
		began = oe.Updated
	}
	since := began.Add(-a.cfg.Policy.Length()).Unix()
	enabled := webhooks.EndpointEnabled
	ep, err := a.UpdateEndpoint(ctx, c, ref, webhooks.EndpointUpdate{Status: &enabled})
	if err != nil {
		return nil, 0, err
	}
	n, err := a.Recover(ctx, c, ref, RecoverInput{Since: &since})
	return ep, n, err
}
