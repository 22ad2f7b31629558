package webhooks

import (
	"slices"
	"time"
)

// Candidates are the endpoints an event may reach, as a store loads them in
// the transaction that registers the event. Deleted endpoints are left out;
// disabled ones are included, because they still get a (failed) delivery.
type Candidates struct {
	Company  []*Endpoint // the company endpoints of the event's company
	Own      []*Endpoint // the account endpoints of the event's account
	Manager  []*Endpoint // the account endpoints of the account that provisioned it
	Platform []*Endpoint // the platform endpoints, for an operational event
}

// PlatformRoutes is the key of the platform endpoints' routes, where a
// company's or an account's id keys theirs (see app.Tx.LockRoutes).
const PlatformRoutes = "platform"

// All returns every candidate endpoint.
func (c Candidates) All() []*Endpoint { return slices.Concat(c.Company, c.Own, c.Manager, c.Platform) }

// Route returns the deliveries of ev: one for every company endpoint of its
// company that admits it (none for an account.* event), every account
// endpoint of its account that admits it and lists "own", and every account
// endpoint of the provisioning account that admits it and lists "managed".
// Each body is rendered here, once. A disabled endpoint's delivery is
// created failed, so that nothing is lost while it is off.
func Route(ev *Event, c Candidates, now time.Time) ([]*Delivery, error) {
	var out []*Delivery
	add := func(ep *Endpoint, rel Relationship) error {
		d, err := newDelivery(ev, ep, rel, now)
		if err == nil {
			out = append(out, d)
		}
		return err
	}
	if ev.IsOperational() {
		// The service's own events reach the platform alone.
		for _, ep := range c.Platform {
			if ep.Admits(ev) {
				if err := add(ep, ""); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	if !ev.IsAccountEvent() {
		for _, ep := range c.Company {
			if ep.Admits(ev) {
				if err := add(ep, ""); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, ep := range c.Own {
		if ep.Admits(ev) && ep.HasRelationship(RelationshipOwn) {
			if err := add(ep, RelationshipOwn); err != nil {
				return nil, err
			}
		}
	}
	for _, ep := range c.Manager {
		if ep.Admits(ev) && ep.HasRelationship(RelationshipManaged) {
			if err := add(ep, RelationshipManaged); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// NewDelivery returns the delivery of an event to one endpoint regardless of
// its subscriptions: the test event of "send test event", which goes to that
// endpoint alone (as "own" on an account endpoint).
func NewDelivery(ev *Event, ep *Endpoint, now time.Time) (*Delivery, error) {
	var rel Relationship
	if ep.Scope == ScopeAccount {
		rel = RelationshipOwn
	}
	return newDelivery(ev, ep, rel, now)
}

func newDelivery(ev *Event, ep *Endpoint, rel Relationship, now time.Time) (*Delivery, error) {
	body, err := RenderBody(ev, ep, rel)
	if err != nil {
		return nil, err
	}
	d := &Delivery{
		ID:            NewID(),
		EndpointID:    ep.ID,
		EventID:       ev.ID,
		EventType:     ev.Type,
		Relationship:  rel,
		Status:        DeliveryPending,
		NextAttemptAt: now,
		Body:          body,
		Created:       now,
		Updated:       now,
	}
	if !ep.Enabled() {
		d.Status, d.Reason, d.NextAttemptAt = DeliveryFailed, ReasonEndpointDisabled, time.Time{}
	}
	return d, nil
}
