package webhooks

import (
	"slices"
	"strings"
	"time"
)

// Scope says what an endpoint belongs to.
type Scope string

// Endpoint scopes.
const (
	ScopeCompany Scope = "company"
	ScopeAccount Scope = "account"
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
)

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
	default:
		return Errorf(EINVALID, "scope must be company or account.")
	}
	if e.URL == "" {
		return Errorf(EINVALID, "url is required.")
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
}

// Apply changes e as u says and validates the result. On error e may be
// partly changed: callers apply to a copy.
func (u *EndpointUpdate) Apply(e *Endpoint) error {
	if u.URL != nil {
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
		old.Description != e.Description {
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
