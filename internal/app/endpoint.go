package app

import (
	"context"
	"slices"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/signature"
)

// Owner is what endpoints belong to: a company or an account.
type Owner struct {
	Scope webhooks.Scope
	ID    string // the company's or the account's id
}

// CompanyOwner and AccountOwner name an owner.
func CompanyOwner(id string) Owner { return Owner{Scope: webhooks.ScopeCompany, ID: id} }

// AccountOwner names an account as the owner of its account endpoints.
func AccountOwner(id string) Owner { return Owner{Scope: webhooks.ScopeAccount, ID: id} }

// PlatformOwner names the platform as the owner of the platform endpoints,
// which only the admin key reaches.
func PlatformOwner() Owner { return Owner{Scope: webhooks.ScopePlatform} }

// EndpointRef names an endpoint the way a caller does: under the owner
// its path names (the API), or, with a zero Owner, under any owner the
// caller may see (the portal, whose paths name the endpoint alone).
type EndpointRef struct {
	Owner Owner
	ID    string
}

// OwnedEndpoint is an endpoint with what its owner is: the account its
// changes are audited under and, on a company endpoint, the company.
type OwnedEndpoint struct {
	*webhooks.Endpoint
	OwnerAccount string
	Company      *webhooks.Company // company scope only
}

// owner resolves o for c: the account it is or belongs to, and the company.
// An owner c may not see is "not found", exactly as a missing one.
func (a *App) owner(ctx context.Context, c Caller, o Owner) (string, *webhooks.Company, error) {
	switch o.Scope {
	case webhooks.ScopePlatform:
		return "", nil, c.requireAdmin()
	case webhooks.ScopeCompany:
		co, err := a.Company(ctx, c, o.ID)
		if err != nil {
			return "", nil, err
		}
		return co.AccountID, co, nil
	}
	acct, err := a.Account(ctx, c, o.ID)
	if err != nil {
		return "", nil, err
	}
	return acct.ID, nil, nil
}

// Endpoint returns the endpoint ref names, if c may see it: an endpoint of
// another owner is "not found", whoever asks.
func (a *App) Endpoint(ctx context.Context, c Caller, ref EndpointRef) (*OwnedEndpoint, error) {
	var accountID string
	var co *webhooks.Company
	if ref.Owner != (Owner{}) {
		var err error
		if accountID, co, err = a.owner(ctx, c, ref.Owner); err != nil {
			return nil, err
		}
	}
	if !webhooks.ValidID(ref.ID) {
		return nil, webhooks.NotFound("webhook endpoint")
	}
	ep, err := a.cfg.Store.FindEndpoint(ctx, ref.ID)
	if err != nil {
		return nil, err
	}
	switch {
	case ref.Owner != (Owner{}):
		if ep.Scope != ref.Owner.Scope || (ep.Scope == webhooks.ScopeCompany && ep.CompanyID != ref.Owner.ID) ||
			(ep.Scope == webhooks.ScopeAccount && ep.AccountID != ref.Owner.ID) {
			return nil, webhooks.NotFound("webhook endpoint")
		}
	case ep.Scope == webhooks.ScopePlatform:
		// The portal names endpoints without an owner: a platform endpoint
		// is none of an account's.
		return nil, webhooks.NotFound("webhook endpoint")
	default:
		if accountID, co, err = a.endpointAccount(ctx, ep); err != nil {
			return nil, err
		}
	}
	if ep.Scope != webhooks.ScopePlatform && !c.canSee(accountID) {
		return nil, webhooks.NotFound("webhook endpoint")
	}
	return &OwnedEndpoint{Endpoint: ep, OwnerAccount: accountID, Company: co}, nil
}

// endpointAccount returns the account an endpoint belongs to, which its
// changes are audited under: its own, or its company's (with the
// company), or none for a platform endpoint.
func (a *App) endpointAccount(ctx context.Context, ep *webhooks.Endpoint) (string, *webhooks.Company, error) {
	switch ep.Scope {
	case webhooks.ScopeAccount:
		return ep.AccountID, nil, nil
	case webhooks.ScopeCompany:
		co, err := a.cfg.Store.FindCompany(ctx, ep.CompanyID)
		if err != nil {
			return "", nil, err
		}
		return co.AccountID, co, nil
	}
	return "", nil, nil
}

// ListEndpoints lists an owner's endpoints, newest first.
func (a *App) ListEndpoints(ctx context.Context, c Caller, o Owner, p webhooks.Page) (*webhooks.List[*webhooks.Endpoint], error) {
	if _, _, err := a.owner(ctx, c, o); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	f := webhooks.EndpointFilter{CompanyID: o.ID}
	switch o.Scope {
	case webhooks.ScopeAccount:
		f = webhooks.EndpointFilter{AccountID: o.ID}
	case webhooks.ScopePlatform:
		f = webhooks.EndpointFilter{Platform: true}
	}
	return a.cfg.Store.ListEndpoints(ctx, f, p)
}

// EndpointInput is what a caller gives to create an endpoint.
type EndpointInput struct {
	URL           string
	EnabledEvents []string
	// Relationships apply to account endpoints; nil takes the default
	// (own and managed).
	Relationships *[]webhooks.Relationship
	APIVersion    string // empty: the newest
	Livemode      *bool  // nil: true
	Description   string
	// StandardWebhooks, RateLimit (zero: none), Ordered and AutoRecover
	// are the endpoint's options (SPEC 14, 15, 18).
	StandardWebhooks bool
	RateLimit        int
	Ordered          bool
	AutoRecover      bool
	// Relay asks for a relay endpoint (SPEC 20): no URL, its deliveries
	// carried over a `webhooks listen` connection.
	Relay bool
}

// CreateEndpoint creates an endpoint of the owner, with a new secret, which
// the returned endpoint carries (shown once, at creation).
func (a *App) CreateEndpoint(ctx context.Context, c Caller, o Owner, in EndpointInput) (*OwnedEndpoint, error) {
	accountID, co, err := a.owner(ctx, c, o)
	if err != nil {
		return nil, err
	}
	now := a.cfg.Now()
	ep := &webhooks.Endpoint{
		ID: webhooks.NewID(), Scope: o.Scope, URL: in.URL, EnabledEvents: in.EnabledEvents, APIVersion: in.APIVersion,
		Livemode: in.Livemode == nil || *in.Livemode, Description: in.Description, Status: webhooks.EndpointEnabled,
		StandardWebhooks: in.StandardWebhooks, RateLimit: in.RateLimit, Ordered: in.Ordered, AutoRecover: in.AutoRecover,
		Relay: in.Relay, Created: now, Updated: now,
	}
	switch o.Scope {
	case webhooks.ScopeCompany:
		ep.CompanyID = o.ID
	case webhooks.ScopeAccount:
		ep.AccountID = o.ID
	}
	if in.Relationships != nil {
		if o.Scope != webhooks.ScopeAccount {
			return nil, webhooks.Errorf(webhooks.EINVALID, "relationships only apply to account endpoints.")
		}
		ep.Relationships = *in.Relationships
		if ep.Relationships == nil {
			ep.Relationships = []webhooks.Relationship{}
		}
	}
	if err := ep.Validate(); err != nil {
		return nil, err
	}
	if err := a.checkSubscriptions(ctx, ep.EnabledEvents); err != nil {
		return nil, err
	}
	if err := a.checkURL(ctx, ep); err != nil {
		return nil, err
	}
	if ep.Secret, err = newSecret(); err != nil {
		return nil, err
	}
	err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
		if err := tx.InsertEndpoint(ctx, ep); err != nil {
			return err
		}
		return insertAudit(ctx, tx, c.audit(accountID, webhooks.AuditEndpointCreated, webhooks.TargetEndpoint, ep.ID, now))
	})
	if err != nil {
		return nil, err
	}
	return &OwnedEndpoint{Endpoint: ep, OwnerAccount: accountID, Company: co}, nil
}

// newSecret makes an endpoint's signing secret: every one is made here, at
// creation and at rotation.
func newSecret() (string, error) { return signature.NewSecret() }

// checkURL runs the SSRF guard's check on ep's URL, and keeps the URL in
// the form the guard parsed it to.
func (a *App) checkURL(ctx context.Context, ep *webhooks.Endpoint) error {
	// A relay endpoint has no URL: the service dials nothing for it, the
	// listener connects out to the service (SPEC 20).
	if a.cfg.URLs == nil || ep.Relay {
		return nil
	}
	u, err := a.cfg.URLs.CheckURL(ctx, ep.URL, ep.Livemode && !a.cfg.AllowHTTP)
	if err != nil {
		return err
	}
	ep.URL = u.String()
	return nil
}

// UpdateEndpoint applies u to the endpoint. A refused change is audited: a
// URL pointed at an internal address is worth knowing of.
func (a *App) UpdateEndpoint(ctx context.Context, c Caller, ref EndpointRef, u webhooks.EndpointUpdate) (*webhooks.Endpoint, error) {
	oe, err := a.Endpoint(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	refuse := func(err error) error {
		return a.refused(ctx, c, oe.OwnerAccount, webhooks.AuditEndpointUpdated, webhooks.TargetEndpoint, oe.ID, err)
	}
	// Validate on a copy first, so that a bad URL is refused before the
	// guard resolves it, and the guard sees the final URL (and livemode).
	check := *oe.Endpoint
	if err := u.Apply(&check); err != nil {
		return nil, refuse(err)
	}
	if err := a.checkSubscriptions(ctx, addedPatterns(oe.EnabledEvents, check.EnabledEvents)); err != nil {
		return nil, refuse(err)
	}
	if check.URL == oe.URL {
		u.URL = nil
	} else {
		if err := a.checkURL(ctx, &check); err != nil {
			return nil, refuse(err)
		}
		u.URL = &check.URL
	}
	var updated *webhooks.Endpoint
	now := a.cfg.Now()
	err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
		// Apply again to the endpoint as it is now: another change may
		// have committed since it was read.
		old, err := lockForChange(ctx, tx, oe.Endpoint)
		if err != nil {
			return err
		}
		e := *old
		e.EnabledEvents = slices.Clone(old.EnabledEvents)
		e.Relationships = slices.Clone(old.Relationships)
		if err := u.Apply(&e); err != nil {
			return err
		}
		e.Updated = now
		switch {
		case old.Enabled() && !e.Enabled():
			e.Disable(webhooks.DisabledManual, now)
		case !old.Enabled() && e.Enabled():
			e.Enable()
		}
		if err := saveEndpoint(ctx, tx, old, &e, now); err != nil {
			return err
		}
		if err := announceStatus(ctx, tx, c, old, &e, now); err != nil {
			return err
		}
		for _, action := range webhooks.EndpointChangeActions(old, &e) {
			if err := insertAudit(ctx, tx, c.audit(oe.OwnerAccount, action, webhooks.TargetEndpoint, e.ID, now)); err != nil {
				return err
			}
		}
		updated = &e
		return nil
	})
	if err != nil {
		return nil, refuse(err)
	}
	if updated.Enabled() != oe.Enabled() {
		a.cfg.WakeOutbox()
	}
	return updated, nil
}

// announceStatus stores, in tx, the announcement of an endpoint's status
// changed by a caller from old to e: webhook_endpoint.enabled or
// .disabled, with who did it (none for a platform endpoint's).
func announceStatus(ctx context.Context, tx Tx, c Caller, old, e *webhooks.Endpoint, now time.Time) error {
	if old.Enabled() == e.Enabled() || e.Scope == webhooks.ScopePlatform {
		return nil
	}
	typ := webhooks.EventEndpointEnabled
	if !e.Enabled() {
		typ = webhooks.EventEndpointDisabled
	}
	ann := webhooks.NewAnnouncement(typ, e, webhooks.OperationalObject{Actor: webhooks.NewOperationalActor(c.Actor)}, now)
	return tx.InsertOutbox(ctx, []*webhooks.OutboxEntry{ann})
}

// lockForChange locks an endpoint this transaction changes in a way that
// routing sees (its subscriptions, its status, its deletion): its owner's
// routes first, then the endpoint.
func lockForChange(ctx context.Context, tx Tx, ep *webhooks.Endpoint) (*webhooks.Endpoint, error) {
	if err := tx.LockRoutes(ctx, routesOwner(ep)); err != nil {
		return nil, err
	}
	return tx.LockEndpoint(ctx, ep.ID)
}

// saveEndpoint writes e, which was old when lockForChange locked it. If
// the change disables it, its pending deliveries end failed: nothing is
// lost while it is off, since they and what it would receive meanwhile
// are failed deliveries, which recover sends once it is on again.
func saveEndpoint(ctx context.Context, tx Tx, old, e *webhooks.Endpoint, now time.Time) error {
	if err := tx.UpdateEndpoint(ctx, e); err != nil {
		return err
	}
	if old.Enabled() && !e.Enabled() {
		return tx.EndPending(ctx, e.ID, webhooks.ReasonEndpointDisabled, now)
	}
	return nil
}

// routesOwner is the key of the routes an endpoint is part of (see
// Tx.LockRoutes): its company's, its account's, or the platform's.
func routesOwner(e *webhooks.Endpoint) string {
	switch e.Scope {
	case webhooks.ScopeCompany:
		return e.CompanyID
	case webhooks.ScopeAccount:
		return e.AccountID
	}
	return webhooks.PlatformRoutes
}

// DeleteEndpoint deletes the endpoint; its pending deliveries end failed
// and its history is kept.
func (a *App) DeleteEndpoint(ctx context.Context, c Caller, ref EndpointRef) error {
	oe, err := a.Endpoint(ctx, c, ref)
	if err != nil {
		return err
	}
	now := a.cfg.Now()
	return a.cfg.Store.InTx(ctx, func(tx Tx) error {
		if _, err := lockForChange(ctx, tx, oe.Endpoint); err != nil {
			return err
		}
		if err := tx.DeleteEndpoint(ctx, oe.ID, now); err != nil {
			return err
		}
		if err := tx.EndPending(ctx, oe.ID, webhooks.ReasonEndpointDeleted, now); err != nil {
			return err
		}
		return insertAudit(ctx, tx, c.audit(oe.OwnerAccount, webhooks.AuditEndpointDeleted, webhooks.TargetEndpoint, oe.ID, now))
	})
}

// RevealSecret returns the endpoint's secret, and audits that it was shown.
func (a *App) RevealSecret(ctx context.Context, c Caller, ref EndpointRef) (*OwnedEndpoint, error) {
	oe, err := a.Endpoint(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	if err := a.record(ctx, c.audit(oe.OwnerAccount, webhooks.AuditEndpointSecretRevealed, webhooks.TargetEndpoint, oe.ID, a.cfg.Now())); err != nil {
		return nil, err
	}
	return oe, nil
}

// Rotation is a rotated secret: the new one, and when the previous one
// stops signing (now, when the overlap is 0).
type Rotation struct {
	Endpoint        *OwnedEndpoint // with its new secrets
	Secret          string
	PreviousExpires time.Time
	// PreviousStopped is set when the previous secret stopped at once.
	PreviousStopped bool
}

// RotateSecret gives the endpoint a new secret; the old one keeps signing
// for expiresIn seconds (nil: DefaultSecretOverlap; 0: it stops now).
func (a *App) RotateSecret(ctx context.Context, c Caller, ref EndpointRef, expiresIn *int64) (*Rotation, error) {
	oe, err := a.Endpoint(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	overlap := webhooks.DefaultSecretOverlap
	if expiresIn != nil {
		if overlap, err = webhooks.Seconds("expires_in", *expiresIn, webhooks.MaxSecretOverlap); err != nil {
			return nil, a.refused(ctx, c, oe.OwnerAccount, webhooks.AuditEndpointSecretRotated, webhooks.TargetEndpoint, oe.ID,
				webhooks.Errorf(webhooks.EINVALID, "expires_in must be from 0 (the old secret stops now) to %d seconds (7 days).", int64(webhooks.MaxSecretOverlap/time.Second)))
		}
	}
	secret, err := newSecret()
	if err != nil {
		return nil, err
	}
	now := a.cfg.Now()
	// Whole seconds: the API shows unix seconds, and the old secret must
	// stop exactly at the moment announced.
	expires := now.Add(overlap).Truncate(time.Second)
	err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
		// Locked: two rotations at once chain (the second keeps the
		// first's new secret as its previous one) instead of both keeping
		// the same old one and losing a secret that was handed out.
		e, err := tx.LockEndpoint(ctx, oe.ID)
		if err != nil {
			return err
		}
		e.Rotate(secret, expires, now)
		if err := tx.UpdateEndpoint(ctx, e); err != nil {
			return err
		}
		oe.Endpoint = e
		return insertAudit(ctx, tx, c.audit(oe.OwnerAccount, webhooks.AuditEndpointSecretRotated, webhooks.TargetEndpoint, oe.ID, now))
	})
	if err != nil {
		return nil, err
	}
	return &Rotation{Endpoint: oe, Secret: secret, PreviousExpires: expires, PreviousStopped: overlap == 0}, nil
}

// SendTestEvent sends a ping event to the endpoint alone.
func (a *App) SendTestEvent(ctx context.Context, c Caller, ref EndpointRef) (*webhooks.Delivery, error) {
	return a.sendPing(ctx, c, ref, false, webhooks.AuditEndpointTestSent)
}

// SendRehearsal starts an outage rehearsal (SPEC 17): a ping to the
// endpoint alone whose delivery follows the whole retry schedule with
// every wait divided so that it ends within about ten minutes, each
// attempt recorded as usual, ending failed_permanently if the receiver
// stays down (and sending the operational events a real outage would).
func (a *App) SendRehearsal(ctx context.Context, c Caller, ref EndpointRef) (*webhooks.Delivery, error) {
	return a.sendPing(ctx, c, ref, true, webhooks.AuditEndpointRehearsal)
}

// sendPing sends a ping event to the endpoint alone, an outage rehearsal's
// if rehearsal is set, audited as action.
func (a *App) sendPing(ctx context.Context, c Caller, ref EndpointRef, rehearsal bool, action string) (*webhooks.Delivery, error) {
	oe, err := a.Endpoint(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	now := a.cfg.Now()
	var d *webhooks.Delivery
	err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
		ep, err := tx.ShareEndpoint(ctx, oe.ID) // it may not be disabled until this commits
		if err != nil {
			return err
		}
		if !ep.Enabled() {
			return webhooks.Errorf(webhooks.EENDPOINTDISABLED, "the endpoint is disabled: enable it before sending a test event.")
		}
		ev := webhooks.NewTestEvent(ep, oe.OwnerAccount, now)
		if d, err = webhooks.NewDelivery(ev, ep, now); err != nil {
			return err
		}
		if rehearsal {
			d.Rehearse(a.cfg.Policy)
		}
		if err := tx.InsertEvent(ctx, ev); err != nil {
			return err
		}
		if _, err := tx.InsertDeliveries(ctx, []*webhooks.Delivery{d}); err != nil {
			return err
		}
		return insertAudit(ctx, tx, c.audit(oe.OwnerAccount, action, webhooks.TargetEndpoint, oe.ID, now))
	})
	if err != nil {
		return nil, a.refused(ctx, c, oe.OwnerAccount, action, webhooks.TargetEndpoint, oe.ID, err)
	}
	a.cfg.Wake()
	return d, nil
}
