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
	}
	if !ep.Enabled() {
		d.Status, d.Reason, d.NextAttemptAt = DeliveryFailed, ReasonEndpointDisabled, time.Time{}
	}
	if ep.Ordered && !ev.Test {
		d.OrderingKey = ev.OrderingKey
	}
	return d, nil
}

// OwnersKey is what an event's routing depends on: the company and account
// it names, and whether it is an account.* event (which reaches no company
// endpoint) or an operational one (which reaches the platform's alone).
// Events with one key route alike, so what routing reads is read (and
// cached) once per key.
type OwnersKey struct {
	Company, Account string // as the event names them
	AccountEvent     bool
	Operational      bool
}

// OwnersKeyOf returns ev's key.
func OwnersKeyOf(ev *Event) OwnersKey {
	return OwnersKey{Company: ev.CompanyID, Account: ev.AccountID, AccountEvent: ev.IsAccountEvent(), Operational: ev.IsOperational()}
}

// RoutesOwner is the routes key, besides its accounts', whose endpoints
// an event of key k may reach: its company's, the platform's for an
// operational event, or none ("") for an account.* event.
func (k OwnersKey) RoutesOwner() string {
	switch {
	case k.Operational:
		return PlatformRoutes
	case k.AccountEvent:
		return ""
	}
	return k.Company
}

// Owners is what routing an event reads, in the transaction that registers
// it: the account of the company it names ("" when there is no such
// company), its account ("" when there is none), the account that
// provisioned that one, and the live endpoints of each (the platform's,
// for an operational event). A backend reads it after it has locked the
// routes of each owner shared (see Owners.Locks), so that a change of
// those endpoints commits before or after the registration, never across
// it. It is shared once read: routing must not change it.
type Owners struct {
	CompanyAccount string
	Account        string
	Manager        string
	Endpoints      []*Endpoint
}

// Locks returns the routes keys an event of key k locks shared before it
// reads or trusts its owners: its account's, its company's (or the
// platform's), and the provisioning account's.
func (o *Owners) Locks(k OwnersKey) []string {
	keys := []string{o.Account, o.Manager, k.RoutesOwner()}
	return slices.DeleteFunc(keys, func(s string) bool { return s == "" })
}

// Candidates checks ev against its owners (an unknown company or account,
// an account that is not the company's), fills in ev's account, and sorts
// the endpoints by how ev may reach them.
func (o *Owners) Candidates(ev *Event) (Candidates, error) {
	var c Candidates
	if err := ev.Attribute(o.CompanyAccount); err != nil {
		return c, err
	}
	if o.Account == "" || (ev.AccountID != "" && ev.AccountID != o.Account) {
		return c, UnknownAccount(ev.AccountID)
	}
	ev.AccountID = o.Account
	for _, e := range o.Endpoints {
		switch {
		case e.Scope == ScopePlatform:
			c.Platform = append(c.Platform, e)
		case e.Scope == ScopeCompany:
			c.Company = append(c.Company, e)
		case e.AccountID == ev.AccountID:
			c.Own = append(c.Own, e)
		default:
			c.Manager = append(c.Manager, e)
		}
	}
	if ev.IsOperational() {
		c.Company, c.Own, c.Manager = nil, nil, nil
	} else {
		c.Platform = nil
	}
	return c, nil
}
