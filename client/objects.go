package client

import (
	"encoding/json"
)

// Account is an account object: a customer of the platform, managed when
// ProvisionedBy names the account that provisions it.
type Account struct {
	ID            string  `json:"id"`
	Object        string  `json:"object"` // "account"
	Name          string  `json:"name"`
	ProvisionedBy *string `json:"provisioned_by"`
	Created       int64   `json:"created"` // unix seconds
}

// AccountInput is the body of CreateAccount.
type AccountInput struct {
	Name string `json:"name"`
	// ProvisionedBy, if set, makes the account a managed account of that
	// one (which must not be managed itself).
	ProvisionedBy string `json:"provisioned_by,omitempty"`
}

// Company is a company object: a business identified by its NIF, owned by
// one account.
type Company struct {
	ID        string `json:"id"`
	Object    string `json:"object"` // "company"
	AccountID string `json:"account_id"`
	NIF       string `json:"nif"`
	Name      string `json:"name"`
	Created   int64  `json:"created"` // unix seconds
}

// CompanyInput is the body of CreateCompany.
type CompanyInput struct {
	AccountID string `json:"account_id"`
	// NIF is a NIF, NIE or CIF (e.g. B12345674), unique on the platform.
	NIF  string `json:"nif"`
	Name string `json:"name"`
}

// Event is an event object, as the event log and POST /v1/events answer
// it.
type Event struct {
	// ID is the event id, assigned by the service once: the body's id,
	// Factuarea-Event-Id and Idempotency-Key of every delivery of it.
	ID            string    `json:"id"`
	Object        string    `json:"object"` // "event"
	Type          string    `json:"type"`
	APIVersion    string    `json:"api_version"`
	Created       int64     `json:"created"` // unix seconds
	Livemode      bool      `json:"livemode"`
	Test          bool      `json:"test"`
	CorrelationID *string   `json:"correlation_id"`
	AccountID     string    `json:"account_id"`
	CompanyID     *string   `json:"company_id"`
	Data          EventData `json:"data"` // empty once the event is erased
	// ErasedAt is when the event's payload was erased (unix seconds), nil
	// while it is not.
	ErasedAt *int64 `json:"erased_at"`
}

// EventData is an event's data: its type and the resource it is about, as
// the JSON the producer registered.
type EventData struct {
	Type   string          `json:"type,omitempty"`
	Object json.RawMessage `json:"object"`
}

// EventInput is what a producer registers: the body of POST /v1/events,
// and one item of POST /v1/events/batch.
type EventInput struct {
	// Type is a lowercase dotted name, e.g. invoice.sent.
	Type string `json:"type"`
	// CompanyID is the company the event is about; required unless Type is
	// account.*.
	CompanyID string `json:"company_id,omitempty"`
	// AccountID is for account.* events; the service fills it from the
	// company otherwise (and refuses one that disagrees).
	AccountID string `json:"account_id,omitempty"`
	// CorrelationID links the events one operation caused.
	CorrelationID string `json:"correlation_id,omitempty"`
	// Livemode is true when nil.
	Livemode *bool          `json:"livemode,omitempty"`
	Data     EventInputData `json:"data"`
	// IdempotencyKey is this registration's key (at most 255 characters):
	// the same key within 24 hours returns the first event and registers
	// nothing. Empty: the client makes a random one for this call and its
	// retries. A key derived from your own data ("FAC-2026-00042-sent")
	// also protects a registration that you send again after a crash.
	// It is sent as the Idempotency-Key header, or as a batch item's
	// idempotency_key.
	IdempotencyKey string `json:"-"`
}

// EventInputData is the data of an EventInput.
type EventInputData struct {
	// Object is the resource the event is about (a JSON object), e.g. an
	// invoice.
	Object json.RawMessage `json:"object"`
}

// Endpoint is a webhook_endpoint object. Secret is set only in the answer
// that creates it.
type Endpoint struct {
	ID                      string   `json:"id"`
	Object                  string   `json:"object"` // "webhook_endpoint"
	Scope                   string   `json:"scope"`  // "company", "account" or "platform"
	CompanyID               string   `json:"company_id,omitempty"`
	AccountID               string   `json:"account_id,omitempty"`
	URL                     string   `json:"url"` // empty on a relay endpoint
	EnabledEvents           []string `json:"enabled_events"`
	Relationships           []string `json:"relationships,omitempty"`
	APIVersion              string   `json:"api_version"`
	Livemode                bool     `json:"livemode"`
	Description             string   `json:"description"`
	Status                  string   `json:"status"` // "enabled" or "disabled"
	StandardWebhooks        bool     `json:"standard_webhooks"`
	RateLimit               *int     `json:"rate_limit"`
	Relay                   bool     `json:"relay"` // deliveries go over a webhooks listen connection
	FailingSince            *int64   `json:"failing_since"`
	DisabledAt              *int64   `json:"disabled_at"`
	DisabledReason          *string  `json:"disabled_reason"`
	PreviousSecretExpiresAt *int64   `json:"previous_secret_expires_at"`
	Created                 int64    `json:"created"` // unix seconds
	Secret                  string   `json:"secret,omitempty"`
}

// Owner returns the company or the account the endpoint belongs to, to
// name it in GetEndpoint, ListDeliveries and GetDelivery. It is the zero
// Owner, which those calls refuse, for a platform endpoint.
func (e *Endpoint) Owner() Owner {
	switch e.Scope {
	case scopeCompany:
		return CompanyOwner(e.CompanyID)
	case scopeAccount:
		return AccountOwner(e.AccountID)
	}
	return Owner{}
}

// EndpointInput is the body of CreateEndpoint.
type EndpointInput struct {
	URL string `json:"url"`
	// EnabledEvents are types: exact (invoice.sent), a prefix (invoice.*)
	// or *.
	EnabledEvents []string `json:"enabled_events"`
	// Relationships is for account endpoints only: "own", "managed" or
	// both (the default).
	Relationships []string `json:"relationships,omitempty"`
	// APIVersion is the payload version; the newest when empty.
	APIVersion string `json:"api_version,omitempty"`
	// Livemode is true when nil.
	Livemode         *bool  `json:"livemode,omitempty"`
	Description      string `json:"description,omitempty"`
	StandardWebhooks bool   `json:"standard_webhooks,omitempty"`
	// RateLimit is at most this many deliveries per second; nil for none.
	RateLimit *int `json:"rate_limit,omitempty"`
}

// Delivery is a webhook_delivery object: one event sent to one endpoint.
// Attempts is set by GetDelivery only.
type Delivery struct {
	ID                 string    `json:"id"`
	Object             string    `json:"object"` // "webhook_delivery"
	EndpointID         string    `json:"endpoint_id"`
	EventID            string    `json:"event_id"`
	EventType          string    `json:"event_type"`
	Status             string    `json:"status"` // pending, delivered, failed, failed_permanently
	AttemptCount       int       `json:"attempt_count"`
	NextAttemptAt      *int64    `json:"next_attempt_at"`
	LastResponseStatus *int      `json:"last_response_status"`
	Reason             *string   `json:"reason"`
	ReplayOf           *string   `json:"replay_of"`
	Rehearsal          bool      `json:"rehearsal"`
	Created            int64     `json:"created"` // unix seconds
	Attempts           []Attempt `json:"attempts,omitempty"`
}

// Attempt is one HTTP request of a delivery, with its outcome.
type Attempt struct {
	Number         int     `json:"number"`
	StartedAt      int64   `json:"started_at"` // unix seconds
	DurationMS     int64   `json:"duration_ms"`
	ResponseStatus *int    `json:"response_status"` // nil when no answer came
	ResponseBody   string  `json:"response_body"`   // its first 1 KiB
	Error          *string `json:"error"`
	Manual         bool    `json:"manual"`
}

// List is one page of a list: {"object": "list", "data": [...],
// "has_more": bool}, newest first. The next page starts after the last
// item's id.
type List[T any] struct {
	Object  string `json:"object"` // "list"
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
}
