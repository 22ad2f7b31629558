package app

import (
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// CheckBacklogs raises and clears the backlog alerts (SPEC 14): an
// endpoint whose oldest due delivery has waited longer than BacklogAlert
// gets webhook_endpoint.backlogged, once per episode, and
// webhook_endpoint.backlog_cleared when none has waited that long any
// more. This is the alert for the service's own lag (busy workers, a rate
// limit, the cap), which no failure shows. Each change is made, and its
// event stored, under the endpoint's lock, so that in a cluster one
// process alone raises (or clears) an episode's alert. It returns how
// many alerts it raised or cleared.
func (a *App) CheckBacklogs(ctx context.Context) (int, error) {
	if a.cfg.Maintenance == nil || a.cfg.BacklogAlert <= 0 {
		return 0, nil
	}
	now := a.cfg.Now()
	cutoff := now.Add(-a.cfg.BacklogAlert)
	backlogs, alerted, err := a.cfg.Maintenance.Backlogs(ctx, now, cutoff)
	if err != nil {
		return 0, err
	}
	over := func(b webhooks.Backlog) bool { return !b.OldestDue.IsZero() && b.OldestDue.Before(cutoff) }
	by := make(map[string]webhooks.Backlog, len(backlogs))
	for _, b := range backlogs {
		by[b.EndpointID] = b
	}
	on := make(map[string]bool, len(alerted))
	n := 0
	for _, id := range alerted {
		on[id] = true
		if b := by[id]; !over(b) {
			b.EndpointID = id
			changed, err := a.setBacklogged(ctx, b, false, now)
			if err != nil {
				return n, err
			}
			n += changed
		}
	}
	for _, b := range backlogs {
		if over(b) && !on[b.EndpointID] {
			changed, err := a.setBacklogged(ctx, b, true, now)
			if err != nil {
				return n, err
			}
			n += changed
		}
	}
	if n > 0 {
		a.cfg.WakeOutbox()
	}
	return n, nil
}

// setBacklogged raises (on) or clears the backlog alert of b's endpoint,
// if it is not so already, and stores its event in the same transaction.
// It returns 1 if it changed the endpoint.
func (a *App) setBacklogged(ctx context.Context, b webhooks.Backlog, on bool, now time.Time) (int, error) {
	changed := 0
	err := a.cfg.Store.InTx(ctx, func(tx Tx) error {
		changed = 0
		ep, err := tx.LockEndpoint(ctx, b.EndpointID)
		if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
			return nil // deleted since
		} else if err != nil {
			return err
		}
		if ep.BackloggedSince.IsZero() != on || ep.Scope == webhooks.ScopePlatform {
			// Another process did it; or it is a platform endpoint,
			// whose events would go to the platform endpoints, maybe to
			// itself.
			return nil
		}
		typ := webhooks.EventBacklogCleared
		ep.BackloggedSince = time.Time{}
		if on {
			typ, ep.BackloggedSince = webhooks.EventEndpointBacklogged, now
		}
		if err := tx.UpdateEndpoint(ctx, ep); err != nil {
			return err
		}
		changed = 1
		return tx.InsertOutbox(ctx, []*webhooks.OutboxEntry{webhooks.NewAnnouncement(typ, ep, webhooks.BacklogObject(b), now)})
	})
	if err != nil {
		return 0, err
	}
	if changed == 1 {
		if on {
			a.cfg.Logger.Warn("endpoint backlog: the oldest due delivery has waited longer than the alert", "endpoint_id", b.EndpointID,
				"oldest_due_at", b.OldestDue, "due", b.Due, "alert", a.cfg.BacklogAlert.String())
		} else {
			a.cfg.Logger.Info("endpoint backlog: cleared", "endpoint_id", b.EndpointID, "due", b.Due)
		}
	}
	return changed, nil
}

// EndpointBacklog returns the due deliveries now (SPEC 14) of ep, an
// endpoint the caller was allowed to see (Endpoint): how many, and since
// when the oldest has waited.
func (a *App) EndpointBacklog(ctx context.Context, ep *webhooks.Endpoint) (webhooks.Backlog, error) {
	if a.cfg.Maintenance == nil {
		return webhooks.Backlog{EndpointID: ep.ID}, nil
	}
	return a.cfg.Maintenance.Backlog(ctx, ep.ID, a.cfg.Now())
}
