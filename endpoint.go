package webhooks

import (
	"slices"
	"strings"
	"time"

	"github.com/factuarea/webhooks/signature"
)

// Scope says what an endpoint belongs to.
type Scope string

// Endpoint scopes.
const (
	ScopeCompany Scope = "company"
	ScopeAccount Scope = "account"
	// ScopePlatform endpoints belong to the platform, which the admin key
	// creates them for: they receive the operational events (SPEC 14) and
	// nothing else.
	ScopePlatform Scope = "platform"
)

// Relationship is how an account endpoint is related to an event's account.
type Relationship string

// Relationships.
const (
	RelationshipOwn     Relationship = "own"     // the event's account is the endpoint's
	RelationshipManaged Relationship = "managed" // the endpoint's account provisioned the event's
)

// Endpoint statuses.
const (
	EndpointEnabled  = "enabled"
	EndpointDisabled = "disabled"
)

// Limits on endpoint fields.
const (
	MaxEnabledEvents     = 100
	MaxDescriptionLength = 500
	MaxURLLength         = 2048
	DefaultSecretOverlap = 24 * time.Hour
	MaxSecretOverlap     = 7 * 24 * time.Hour
	MaxRateLimit         = 10000 // deliveries per second
)

// RateInterval is the spacing of an endpoint's attempts at a rate limit of
// perSecond (SPEC 14): a second divided by the rate, and 5 % more, so that
// perSecond+1 starts span 1.05 s: an attempt may start up to RateLateness
// late (or it is not made then) and the way to the receiver may vary a
// little more, and still no second holds more than perSecond at the
// receiver.
func RateInterval(perSecond int) time.Duration {
	return time.Second * 105 / time.Duration(100*perSecond)
}

// RateLateness is how late an attempt to a rate-limited endpoint may start
// after its reserved start: one that wakes later (a loaded machine) takes
// a new start instead, since going late would crowd the next ones.
const RateLateness = 20 * time.Millisecond

// Why an endpoint is disabled (SPEC 14).
const (
	DisabledManual  = "manual"  // a customer's or the platform's change
	DisabledFailing = "failing" // every attempt failed for the disable-after time
	DisabledGone    = "gone"    // the endpoint answered 410 Gone
)

// EnabledRecovered is the reason of the service's own enable of an endpoint
// it had disabled for failing, once a probe got a 2xx (AutoRecover).
const EnabledRecovered = "recovered"

// Endpoint is a customer URL that receives events: a company endpoint
// belongs to a company, an account endpoint to an account.
type Endpoint struct {
	ID            string
	Scope         Scope
	CompanyID     string // company scope
	AccountID     string // account scope
	URL           string
	EnabledEvents []string
	Relationships []Relationship // account scope
	APIVersion    string
	Livemode      bool
	Description   string
	Status        string
	Created       time.Time
	Updated       time.Time

	// StandardWebhooks asks for the Standard Webhooks headers beside
	// Factuarea-Signature (SPEC 15).
	StandardWebhooks bool
	// RateLimit caps the deliveries started per second to the endpoint,
	// across every process; zero means no limit.
	RateLimit int
	// Ordered asks for the deliveries of events that share an ordering key
	// one at a time, in registration order (SPEC 18). AutoRecover asks the
	// service to probe the endpoint once it was disabled for failing, and
	// to enable it again and recover what it missed at its first 2xx (SPEC
	// 14).
	Ordered     bool
	AutoRecover bool
	// Relay marks an endpoint whose deliveries are carried over a
	// `webhooks listen` connection instead of POSTed to a URL (SPEC 20):
	// it has no URL, and the service never dials anything for it. It is
	// set at creation and never changes.
	Relay bool

	// The endpoint's health (SPEC 14), kept by the engine: FailureStreak
	// counts the attempts that failed in a row since the last 2xx, and
	// FailingSince is when the first of them started (zero when the streak
	// is zero). DisabledAt and DisabledReason say when and why the endpoint
	// was disabled (zero while enabled).
	FailureStreak  int
	FailingSince   time.Time
	DisabledAt     time.Time
	DisabledReason string
	// BackloggedSince is when the backlog alert of the episode under way
	// fired (webhook_endpoint.backlogged): zero when none is; ProbedAt is
	// when the service last probed the endpoint, disabled for failing,
	// with a ping (AutoRecover). Both are kept by the service (SPEC 14).
	BackloggedSince time.Time
	ProbedAt        time.Time

	// Secret signs every attempt. During a rotation's overlap the previous
	// secret signs too, until PreviousSecretExpires.
	Secret                string
	PreviousSecret        string
	PreviousSecretExpires time.Time
}

// SigningSecrets returns the secrets that sign an attempt made at now: the
// current one, then the previous one while its overlap lasts.
func (e *Endpoint) SigningSecrets(now time.Time) []string {
	if e.PreviousSecret != "" && now.Before(e.PreviousSecretExpires) {
		return []string{e.Secret, e.PreviousSecret}
	}
	return []string{e.Secret}
}

// Rotate makes secret the endpoint's secret. The current one keeps signing
// until previousExpires, unless that is not after now; a previous secret
// still in its overlap stops at once (only one is kept).
func (e *Endpoint) Rotate(secret string, previousExpires, now time.Time) {
	e.PreviousSecret, e.PreviousSecretExpires = e.Secret, previousExpires
	if !previousExpires.After(now) {
		e.PreviousSecret, e.PreviousSecretExpires = "", time.Time{}
	}
	e.Secret, e.Updated = secret, now
}

// Disable disables the endpoint at now for reason (DisabledManual,
// DisabledFailing or DisabledGone).
func (e *Endpoint) Disable(reason string, now time.Time) {
	e.Status, e.DisabledAt, e.DisabledReason = EndpointDisabled, now, reason
}

// Enable enables the endpoint: a new start, the streak of failures that
// led to a disable over.
func (e *Endpoint) Enable() {
	e.Status, e.DisabledAt, e.DisabledReason = EndpointEnabled, time.Time{}, ""
	e.FailureStreak, e.FailingSince, e.ProbedAt = 0, time.Time{}, time.Time{}
}

// Enabled reports whether the endpoint is receiving deliveries.
func (e *Endpoint) Enabled() bool { return e.Status == EndpointEnabled }

// Admits reports whether the endpoint wants ev: the same livemode, and one of
// its enabled events matches the type. Relationships are checked by Route.
func (e *Endpoint) Admits(ev *Event) bool {
	if e.Livemode != ev.Livemode {
		return false
	}
	if e.Scope == ScopeCompany && ev.IsAccountEvent() {
		return false
	}
	for _, p := range e.EnabledEvents {
		if MatchEventType(p, ev.Type) {
			return true
		}
	}
	return false
}

// HasRelationship reports whether an account endpoint lists r.
func (e *Endpoint) HasRelationship(r Relationship) bool {
	return slices.Contains(e.Relationships, r)
}

// MatchEventType reports whether an enabled_events pattern matches typ: the
// exact type, a prefix wildcard ("invoice.*" matches every type under
// "invoice."), or "*".
func MatchEventType(pattern, typ string) bool {
	if pattern == "*" {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(typ, prefix)
	}
	return pattern == typ
}

// validatePattern checks one enabled_events entry.
func validatePattern(scope Scope, p string) error {
	if p == "*" {
		return nil
	}
	typ, wildcard := strings.CutSuffix(p, ".*")
	if wildcard {
		// "invoice.*" is checked as the type "invoice.x" would be.
		if err := ValidateEventType(typ + ".x"); err != nil {
			return Errorf(EINVALID, "enabled_events entry %q is not an event type, a prefix such as invoice.*, or *.", p)
		}
	} else if err := ValidateEventType(p); err != nil {
		return Errorf(EINVALID, "enabled_events entry %q is not an event type, a prefix such as invoice.*, or *.", p)
	}
	if scope == ScopeCompany && (p == "account.*" || IsAccountEventType(p)) {
		return Errorf(EINVALID, "a company endpoint cannot subscribe to %q: account.* events only reach account endpoints.", p)
	}
	switch operational := IsOperationalType(p); {
	case scope == ScopePlatform && !operational && p != "*":
		return Errorf(EINVALID, "a platform endpoint receives the operational events only: subscribe to webhook_endpoint.*, webhook_delivery.*, one of %s, or *.", strings.Join(OperationalEventTypes(), ", "))
	case scope != ScopePlatform && operational:
		return Errorf(EINVALID, "%q is an operational event, which only platform endpoints (/v1/webhook_endpoints) receive.", p)
	}
	return nil
}

// Validate checks the endpoint's fields and fills defaults. It does not
// check where the URL points: the SSRF guard does that.
func (e *Endpoint) Validate() error {
	switch e.Scope {
	case ScopeCompany:
		if !ValidID(e.CompanyID) {
			return Errorf(EINVALID, "company_id must be a company id.")
		}
		if len(e.Relationships) > 0 {
			return Errorf(EINVALID, "relationships only apply to account endpoints.")
		}
	case ScopeAccount:
		if !ValidID(e.AccountID) {
			return Errorf(EINVALID, "account_id must be an account id.")
		}
		if e.Relationships == nil {
			e.Relationships = []Relationship{RelationshipOwn, RelationshipManaged}
		}
		if len(e.Relationships) == 0 {
			return Errorf(EINVALID, "relationships must list own, managed or both.")
		}
		for _, r := range e.Relationships {
			if r != RelationshipOwn && r != RelationshipManaged {
				return Errorf(EINVALID, "relationships entry %q must be own or managed.", r)
			}
		}
		e.Relationships = dedupe(e.Relationships)
	case ScopePlatform:
		if e.CompanyID != "" || e.AccountID != "" || len(e.Relationships) > 0 {
			return Errorf(EINVALID, "a platform endpoint belongs to no company or account, and has no relationships.")
		}
	default:
		return Errorf(EINVALID, "scope must be company, account or platform.")
	}
	switch {
	case e.Relay && e.URL != "":
		return Errorf(EINVALID, "a relay endpoint has no url: its deliveries go over the webhooks listen connection. Leave url out, or set relay to false.")
	case e.Relay && e.Scope == ScopePlatform:
		return Errorf(EINVALID, "a platform endpoint cannot be a relay endpoint: relay endpoints belong to a company or an account.")
	case !e.Relay && e.URL == "":
		return Errorf(EINVALID, "url is required (or relay: true, for a webhooks listen connection).")
	}
	if len(e.URL) > MaxURLLength {
		return Errorf(EINVALID, "url must be at most %d characters.", MaxURLLength)
	}
	if err := CheckText("url", e.URL); err != nil {
		return err
	}
	if len(e.EnabledEvents) == 0 {
		return Errorf(EINVALID, "enabled_events must list at least one event type, prefix (invoice.*) or *.")
	}
	if len(e.EnabledEvents) > MaxEnabledEvents {
		return Errorf(EINVALID, "enabled_events must list at most %d entries.", MaxEnabledEvents)
	}
	for _, p := range e.EnabledEvents {
		if err := validatePattern(e.Scope, p); err != nil {
			return err
		}
	}
	e.EnabledEvents = dedupe(e.EnabledEvents)
	if e.APIVersion == "" {
		e.APIVersion = LatestAPIVersion
	}
	if !KnownAPIVersion(e.APIVersion) {
		return Errorf(EINVALID, "api_version %q is not one of %s.", e.APIVersion, strings.Join(APIVersions(), ", "))
	}
	if err := CheckLength("description", e.Description, MaxDescriptionLength); err != nil {
		return err
	}
	if e.Status == "" {
		e.Status = EndpointEnabled
	}
	if e.Status != EndpointEnabled && e.Status != EndpointDisabled {
		return Errorf(EINVALID, "status must be enabled or disabled.")
	}
	if e.RateLimit < 0 || e.RateLimit > MaxRateLimit {
		return Errorf(EINVALID, "rate_limit must be between 1 and %d deliveries per second, or null for no limit.", MaxRateLimit)
	}
	return nil
}

// EndpointUpdate holds the fields a PATCH may change; nil leaves a field as
// it is.
type EndpointUpdate struct {
	URL           *string
	EnabledEvents *[]string
	Relationships *[]Relationship
	APIVersion    *string
	Description   *string
	Status        *string
	// StandardWebhooks and RateLimit: a nil RateLimit leaves it, a pointer
	// to zero removes the limit.
	StandardWebhooks *bool
	RateLimit        *int
	Ordered          *bool
	AutoRecover      *bool
}

// Apply changes e as u says and validates the result. On error e may be
// partly changed: callers apply to a copy.
func (u *EndpointUpdate) Apply(e *Endpoint) error {
	if u.URL != nil {
		if e.Relay {
			return Errorf(EINVALID, "a relay endpoint has no url, and cannot be given one: create an endpoint with a url instead.")
		}
		e.URL = *u.URL
	}
	if u.EnabledEvents != nil {
		e.EnabledEvents = *u.EnabledEvents
		if e.EnabledEvents == nil {
			e.EnabledEvents = []string{}
		}
	}
	if u.Relationships != nil {
		if e.Scope != ScopeAccount {
			return Errorf(EINVALID, "relationships only apply to account endpoints.")
		}
		e.Relationships = *u.Relationships
		if e.Relationships == nil {
			e.Relationships = []Relationship{}
		}
	}
	if u.APIVersion != nil {
		e.APIVersion = *u.APIVersion
		if e.APIVersion == "" {
			return Errorf(EINVALID, "api_version cannot be empty.")
		}
	}
	if u.Description != nil {
		e.Description = *u.Description
	}
	if u.Status != nil {
		e.Status = *u.Status
		if e.Status == "" {
			return Errorf(EINVALID, "status must be enabled or disabled.")
		}
	}
	if u.StandardWebhooks != nil {
		if *u.StandardWebhooks && !e.StandardWebhooks && !signature.StandardCompatible(e.Secret) {
			return Errorf(ESECRETNOTCOMPATIBLE, "this endpoint's secret predates the Standard Webhooks format (it is not standard base64 after whsec_): rotate the secret first, then turn standard_webhooks on.")
		}
		e.StandardWebhooks = *u.StandardWebhooks
	}
	if u.RateLimit != nil {
		e.RateLimit = *u.RateLimit
	}
	if u.Ordered != nil {
		e.Ordered = *u.Ordered
	}
	if u.AutoRecover != nil {
		e.AutoRecover = *u.AutoRecover
	}
	return e.Validate()
}

func dedupe[T comparable](s []T) []T {
	out := make([]T, 0, len(s))
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// EndpointChangeActions returns the audit actions a change from old to e
// records: enabled or disabled when the status changed, and updated when
// anything else did.
func EndpointChangeActions(old, e *Endpoint) []string {
	var actions []string
	if old.URL != e.URL || !slices.Equal(old.EnabledEvents, e.EnabledEvents) ||
		!slices.Equal(old.Relationships, e.Relationships) || old.APIVersion != e.APIVersion ||
		old.Description != e.Description || old.StandardWebhooks != e.StandardWebhooks || old.RateLimit != e.RateLimit ||
		old.Ordered != e.Ordered || old.AutoRecover != e.AutoRecover {
		actions = append(actions, AuditEndpointUpdated)
	}
	if old.Status != e.Status {
		if e.Enabled() {
			actions = append(actions, AuditEndpointEnabled)
		} else {
			actions = append(actions, AuditEndpointDisabled)
		}
	}
	return actions
}
