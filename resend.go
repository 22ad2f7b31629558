package webhooks

import (
	"time"
)

// Resend windows: how old an event may be for its delivery to be sent again
// by hand.
const (
	RetryWindow  = 30 * 24 * time.Hour
	ReplayWindow = 90 * 24 * time.Hour
)

// Resend actions.
const (
	ActionRetry  = "retry"
	ActionReplay = "replay"
)

// ResendAction returns the manual resend an endpoint's scope takes: retry
// re-arms an account endpoint's delivery; replay creates a new delivery on a
// company endpoint.
func ResendAction(scope Scope) string {
	if scope == ScopeAccount {
		return ActionRetry
	}
	return ActionReplay
}

// ResendWindow is how old an event may be for action.
func ResendWindow(action string) time.Duration {
	if action == ActionReplay {
		return ReplayWindow
	}
	return RetryWindow
}

// Replay returns a new delivery of d's event with d's body, for one manual
// attempt at now. ReplayOf names the original, also when d is a replay.
func (d *Delivery) Replay(now time.Time) *Delivery {
	r := &Delivery{
		ID: NewID(), EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		Relationship: d.Relationship, ReplayOf: d.ID, Status: DeliveryPending, NextAttemptAt: now,
		Manual: true, Body: d.Body, Created: now,
	}
	// A replay by hand is sent at once, whatever the order (SPEC 18): it
	// is in no chain; a recovery puts its replays back in theirs.
	if d.ReplayOf != "" {
		r.ReplayOf = d.ReplayOf
	}
	return r
}

// CheckResend reports whether d, a delivery of ep whose event was created at
// eventCreated, may be sent again by hand with action at now.
func CheckResend(action string, ep *Endpoint, d *Delivery, eventCreated, now time.Time) error {
	if want := ResendAction(ep.Scope); action != want {
		return Errorf(EWRONGRESEND, "%s endpoints do not %s deliveries: use %s, which %s.", ep.Scope, action, want, map[string]string{
			ActionRetry:  "re-arms the same delivery",
			ActionReplay: "creates a new delivery with the same event id",
		}[want])
	}
	if !ep.Enabled() {
		return Errorf(EENDPOINTDISABLED, "the endpoint is disabled: enable it before sending deliveries again.")
	}
	if !d.Resendable() {
		return Errorf(ENOTRESENDABLE, "only failed or failed_permanently deliveries can be sent again; this one is %s.", d.Status)
	}
	window := ResendWindow(action)
	if now.Sub(eventCreated) >= window {
		return Errorf(EOUTSIDEWINDOW, "the event is older than the %d-day %s window.", int(window/(24*time.Hour)), action)
	}
	return nil
}

// NewTestEvent returns the ping event of an endpoint's "send test event":
// test true, the endpoint's livemode, and, on an account endpoint, the
// endpoint's account with no company.
func NewTestEvent(ep *Endpoint, accountID string, now time.Time) *Event {
	ev := &Event{
		ID:         NewID(),
		Type:       PingEventType,
		APIVersion: LatestAPIVersion,
		Created:    now,
		Livemode:   ep.Livemode,
		Test:       true,
		AccountID:  accountID,
	}
	if ep.Scope == ScopeCompany {
		ev.CompanyID = ep.CompanyID
	}
	ev.Object = []byte(`{"object":"webhook_endpoint","id":"` + ep.ID + `","message":"A test event sent from your webhook settings."}`)
	return ev
}

// NewProbe returns the ping of automatic recovery (SPEC 14) to ep, which
// is disabled, under accountID, and its delivery: pending at now though
// the endpoint is disabled, for one attempt (a manual one, which is not
// retried), whose 2xx says the endpoint is back.
func NewProbe(ep *Endpoint, accountID string, now time.Time) (*Event, *Delivery, error) {
	ev := NewTestEvent(ep, accountID, now)
	d, err := NewDelivery(ev, ep, now)
	if err != nil {
		return nil, nil, err
	}
	d.Status, d.Reason, d.NextAttemptAt, d.Manual = DeliveryPending, "", now, true
	return ev, d, nil
}
