package app

import (
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// EnableAndRecover enables a disabled endpoint and recovers what it
// missed, in one transaction (the portal's action, SPEC 14). It returns
// the endpoint and how many deliveries are sent again.
func (a *App) EnableAndRecover(ctx context.Context, c Caller, ref EndpointRef) (*webhooks.Endpoint, int, error) {
	oe, err := a.Endpoint(ctx, c, ref)
	if err != nil {
		return nil, 0, err
	}
	now := a.cfg.Now()
	var ep *webhooks.Endpoint
	var n int
	err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
		cur, err := lockForChange(ctx, tx, oe.Endpoint)
		if err != nil {
			return err
		}
		if cur.Enabled() {
			return webhooks.Errorf(webhooks.EINVALID, "the endpoint is enabled already: use recover to send what failed.")
		}
		ep, n, err = a.enableAndRecover(ctx, tx, c, oe.OwnerAccount, cur, time.Time{}, "", now)
		return err
	})
	if err != nil {
		return nil, 0, a.refused(ctx, c, oe.OwnerAccount, webhooks.AuditEndpointEnabled, webhooks.TargetEndpoint, oe.ID, err)
	}
	a.cfg.WakeOutbox()
	if n > 0 {
		a.cfg.Wake()
	}
	return ep, n, nil
}

// enableAndRecover enables cur, disabled and locked by lockForChange, in
// tx, for c (announced with reason: empty for a caller's enable), and
// sends again every failed delivery created since the episode that led
// to the disable could have begun to be retried: one retry schedule
// before it began to fail (at began, or cur's FailingSince, whichever is
// earlier), or, if it never failed, before it was disabled. It returns
// the endpoint and how many deliveries are sent again.
func (a *App) enableAndRecover(ctx context.Context, tx Tx, c Caller, account string, cur *webhooks.Endpoint, began time.Time, reason string, now time.Time) (*webhooks.Endpoint, int, error) {
	for _, t := range []time.Time{cur.FailingSince, cur.DisabledAt} {
		if !t.IsZero() && (began.IsZero() || t.Before(began)) {
			began = t
		}
	}
	if began.IsZero() {
		began = cur.Updated
	}
	e := *cur
	e.Enable()
	e.Updated = now
	if err := saveEndpoint(ctx, tx, cur, &e, now); err != nil {
		return nil, 0, err
	}
	if e.Scope != webhooks.ScopePlatform {
		obj := webhooks.OperationalObject{Actor: webhooks.NewOperationalActor(c.Actor)}
		if reason != "" {
			obj.Reason = &reason
		}
		ann := webhooks.NewAnnouncement(webhooks.EventEndpointEnabled, &e, obj, now)
		if err := tx.InsertOutbox(ctx, []*webhooks.OutboxEntry{ann}); err != nil {
			return nil, 0, err
		}
	}
	if err := insertAudit(ctx, tx, c.audit(account, webhooks.AuditEndpointEnabled, webhooks.TargetEndpoint, e.ID, now)); err != nil {
		return nil, 0, err
	}
	n, err := recoverIn(ctx, tx, &e, began.Add(-a.cfg.Policy.Length()), now, now)
	if err != nil {
		return nil, 0, err
	}
	return &e, n, insertAudit(ctx, tx, c.audit(account, webhooks.AuditEndpointRecovered, webhooks.TargetEndpoint, e.ID, now))
}

// recoverDisabled acts on an OutboxRecover entry (SPEC 14's automatic
// recovery): the endpoint, disabled for failing and asking for it,
// answered 2xx, so it is enabled again by the system, announced with
// reason "recovered", and what it missed is sent again. One disabled
// otherwise (gone, manual), or enabled since, is left as it is.
func (a *App) recoverDisabled(ctx context.Context, tx Tx, e *webhooks.OutboxEntry, now time.Time) (bool, error) {
	ep, account, cur, err := a.outboxEndpoint(ctx, tx, e.EndpointID)
	if err != nil || cur == nil || !recoverable(cur) {
		return false, err
	}
	_, n, err := a.enableAndRecover(ctx, tx, Caller{Actor: systemActor}, account, cur, e.Since, webhooks.EnabledRecovered, now)
	if err != nil {
		return false, err
	}
	a.cfg.Logger.Info("endpoint health: endpoint recovered and enabled again", "endpoint_id", ep.ID, "recovered_deliveries", n)
	a.cfg.WakeOutbox()
	return n > 0, nil
}

// recoverable reports whether the service may enable ep again by itself:
// disabled for failing, and asking for it.
func recoverable(ep *webhooks.Endpoint) bool {
	return !ep.Enabled() && ep.DisabledReason == webhooks.DisabledFailing && ep.AutoRecover
}

// ProbeDisabled sends the recovery probes that are due (SPEC 14): a ping
// test event to each endpoint disabled for failing that asks for
// automatic recovery, every RecoveryProbe for RecoveryFor after its
// disable. Each is one attempt (a manual one: it is not retried); its
// first 2xx enables the endpoint again (see recoverDisabled). It probes
// up to limit endpoints and returns how many: call it again while that is
// limit. In a cluster each endpoint is probed by one process, once per
// period.
func (a *App) ProbeDisabled(ctx context.Context, limit int) (int, error) {
	if a.cfg.Maintenance == nil || a.cfg.RecoveryProbe <= 0 || a.cfg.RecoveryFor <= 0 {
		return 0, nil
	}
	now := a.cfg.Now()
	before := now.Add(-a.cfg.RecoveryProbe)
	eps, err := a.cfg.Maintenance.ToProbe(ctx, now.Add(-a.cfg.RecoveryFor), before, limit)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ep := range eps {
		account, _, err := a.endpointAccount(ctx, ep)
		if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
			continue
		} else if err != nil {
			return n, err
		}
		err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
			cur, err := tx.LockEndpoint(ctx, ep.ID)
			if err != nil {
				return err
			}
			// Another process may have probed it, or it changed, since
			// it was read.
			if !recoverable(cur) || cur.DisabledAt.After(before) || (!cur.ProbedAt.IsZero() && cur.ProbedAt.After(before)) {
				return nil
			}
			cur.ProbedAt = now
			if err := tx.UpdateEndpoint(ctx, cur); err != nil {
				return err
			}
			ev, d, err := webhooks.NewProbe(cur, account, now)
			if err != nil {
				return err
			}
			if err := tx.InsertEvent(ctx, ev); err != nil {
				return err
			}
			_, err = tx.InsertDeliveries(ctx, []*webhooks.Delivery{d})
			return err
		})
		if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
			continue
		} else if err != nil {
			return n, err
		}
		n++
	}
	if n > 0 {
		a.cfg.Wake()
	}
	return len(eps), nil
}
