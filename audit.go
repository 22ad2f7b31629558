package webhooks

import "time"

// Audit actions.
const (
	AuditEndpointCreated        = "webhook_endpoint.created"
	AuditEndpointUpdated        = "webhook_endpoint.updated"
	AuditEndpointEnabled        = "webhook_endpoint.enabled"
	AuditEndpointDisabled       = "webhook_endpoint.disabled"
	AuditEndpointDeleted        = "webhook_endpoint.deleted"
	AuditEndpointSecretRotated  = "webhook_endpoint.secret_rotated"
	AuditEndpointSecretRevealed = "webhook_endpoint.secret_revealed"
	AuditEndpointRecovered      = "webhook_endpoint.recovered"
	AuditEndpointTestSent       = "webhook_endpoint.test_sent"
	AuditEndpointRehearsal      = "webhook_endpoint.rehearsal_started"
	AuditDeliveryRetried        = "webhook_delivery.retried"
	AuditDeliveryReplayed       = "webhook_delivery.replayed"
	AuditAPIKeyCreated          = "api_key.created"
	AuditAPIKeyRevoked          = "api_key.revoked"
	AuditAccountUpdated         = "account.updated"
	AuditAccountDeleted         = "account.deleted"
	AuditCompanyUpdated         = "company.updated"
	AuditCompanyDeleted         = "company.deleted"
	AuditEventErased            = "event.erased"
)

// Actor types.
const (
	ActorAdmin  = "admin"
	ActorAPIKey = "api_key"
	ActorPortal = "portal"
	// ActorSystem is the service itself: the engine disabling an endpoint
	// that is dead (SPEC 14), a platform endpoint's too.
	ActorSystem = "system"
)

// Audit outcomes.
const (
	AuditSucceeded = "succeeded"
	AuditRefused   = "refused"
)

// Actor is who made a change: the admin key, an account's API key (ID is
// the key's id) or a portal session (ID is the session's id).
type Actor struct {
	Type string
	ID   string
}

// AuditEntry records one change to an account's webhooks configuration, or
// one refused attempt at it. It never holds a secret, a payload or a token.
type AuditEntry struct {
	ID string
	// AccountID is the account whose log holds the entry; "" for the
	// platform's own log (SPEC 8): the changes to platform endpoints,
	// which belong to no account.
	AccountID  string
	Actor      Actor
	Action     string
	TargetType string // "webhook_endpoint", "webhook_delivery", "api_key", "account", "company" or "event"
	TargetID   string
	Outcome    string
	ErrorCode  string // for a refused change
	Created    time.Time
}

// Audit target types.
const (
	TargetEndpoint = "webhook_endpoint"
	TargetDelivery = "webhook_delivery"
	TargetAPIKey   = "api_key"
	TargetAccount  = "account"
	TargetCompany  = "company"
	TargetEvent    = "event"
)
