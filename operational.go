package webhooks

import (
	"encoding/json"
	"strings"
	"time"
)

// Operational event types: the events the service registers about its own
// deliveries (SPEC 14). They reach platform endpoints alone.
const (
	EventEndpointFailing    = "webhook_endpoint.failing"
	EventEndpointRecovered  = "webhook_endpoint.recovered"
	EventEndpointDisabled   = "webhook_endpoint.disabled"
	EventEndpointEnabled    = "webhook_endpoint.enabled"
	EventDeliveryExhausted  = "webhook_delivery.exhausted"
	operationalEndpointType = "webhook_endpoint."
	operationalDeliveryType = "webhook_delivery."
)

// OperationalEventTypes lists the operational event types.
func OperationalEventTypes() []string {
	return []string{EventEndpointFailing, EventEndpointRecovered, EventDeliveryExhausted, EventEndpointDisabled, EventEndpointEnabled}
}

// IsOperationalType reports whether typ (or an enabled_events pattern) is
// in the operational namespace, which producers cannot register in.
func IsOperationalType(typ string) bool {
	return strings.HasPrefix(typ, operationalEndpointType) || strings.HasPrefix(typ, operationalDeliveryType)
}

// IsOperational reports whether the event is one of the service's own.
func (e *Event) IsOperational() bool { return IsOperationalType(e.Type) }

// FailingAfter is the number of failed attempts in a row to an endpoint,
// whatever the deliveries, at which it is failing (SPEC 14).
const FailingAfter = 4

// DefaultDisableAfter is how long every attempt to an endpoint must have
// failed before it is disabled (WEBHOOKS_DISABLE_AFTER; 0 never).
const DefaultDisableAfter = 5 * 24 * time.Hour

// Health is what an attempt's outcome did to its endpoint's streak of
// failures, as the store counted it in the transaction that recorded the
// attempt: Before and After are the streak's lengths around it, and
// FailingSince is when the streak began (as it was before a 2xx ended it).
type Health struct {
	EndpointID   string
	Before       int
	After        int
	FailingSince time.Time
}

// StartedFailing reports whether the endpoint became failing: its streak
// reached FailingAfter now. A streak crosses it once per episode, so the
// event fires once, whichever process recorded the attempt.
func (h Health) StartedFailing() bool { return h.Before < FailingAfter && h.After >= FailingAfter }

// Recovered reports whether a 2xx ended a streak that had made the
// endpoint failing.
func (h Health) Recovered() bool { return h.Before >= FailingAfter && h.After == 0 }

// FailingFor reports whether, with this attempt, every attempt to the
// endpoint has failed for at least d (d > 0), as of now.
func (h Health) FailingFor(d time.Duration, now time.Time) bool {
	return d > 0 && h.After > 0 && !h.FailingSince.IsZero() && now.Sub(h.FailingSince) >= d
}

// OperationalObject is data.object of an operational event: the endpoint
// it is about, whose account and company it names, and the figures that
// made the event fire.
type OperationalObject struct {
	Object              string             `json:"object"` // "webhook_endpoint"
	ID                  string             `json:"id"`     // the endpoint's
	Scope               Scope              `json:"scope"`
	AccountID           string             `json:"account_id"`
	CompanyID           *string            `json:"company_id"`
	URL                 string             `json:"url"`
	Description         string             `json:"description"`
	Status              string             `json:"status"`
	ConsecutiveFailures int                `json:"consecutive_failures"`
	FailingSince        *int64             `json:"failing_since"`
	DisabledAt          *int64             `json:"disabled_at"`
	DisabledReason      *string            `json:"disabled_reason"`
	Actor               *Actor             `json:"actor,omitempty"`        // disabled, enabled
	LastAttempt         *OperationalTry    `json:"last_attempt,omitempty"` // failing, recovered, exhausted, disabled by the engine
	Delivery            *OperationalTarget `json:"delivery,omitempty"`     // exhausted
}

// OperationalActor is who disabled or enabled the endpoint: an audit
// actor, or "system" when the engine disabled it.
type OperationalActor struct {
	Type string  `json:"type"`
	ID   *string `json:"id"`
}

// NewOperationalActor describes a for an operational event.
func NewOperationalActor(a Actor) *OperationalActor {
	o := &OperationalActor{Type: a.Type}
	if a.ID != "" {
		o.ID = &a.ID
	}
	return o
}

// OperationalTry is the attempt that made an operational event fire.
type OperationalTry struct {
	DeliveryID     string  `json:"delivery_id"`
	StartedAt      int64   `json:"started_at"`
	ResponseStatus *int    `json:"response_status"`
	Error          *string `json:"error"`
}

// OperationalTarget is the delivery a webhook_delivery.exhausted is about.
type OperationalTarget struct {
	ID                 string  `json:"id"`
	EventID            string  `json:"event_id"`
	EventType          string  `json:"event_type"`
	AttemptCount       int     `json:"attempt_count"`
	Reason             *string `json:"reason"`
	LastResponseStatus *int    `json:"last_response_status"`
}

// NewOperationalEvent returns an operational event of type typ about ep,
// which belongs to accountID (its company's account on a company
// endpoint). The event is under that account, with no company, so that it
// is in no company's log; its livemode is the endpoint's.
func NewOperationalEvent(typ string, ep *Endpoint, accountID string, obj OperationalObject, now time.Time) (*Event, error) {
	obj.Object, obj.ID, obj.Scope, obj.AccountID = "webhook_endpoint", ep.ID, ep.Scope, accountID
	obj.URL, obj.Description, obj.Status = ep.URL, ep.Description, ep.Status
	obj.ConsecutiveFailures = ep.FailureStreak
	if ep.CompanyID != "" {
		obj.CompanyID = &ep.CompanyID
	}
	obj.FailingSince, obj.DisabledAt = unixOrNil(ep.FailingSince), unixOrNil(ep.DisabledAt)
	if ep.DisabledReason != "" {
		obj.DisabledReason = &ep.DisabledReason
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return &Event{
		ID: NewID(), Type: typ, APIVersion: LatestAPIVersion, Created: now, Livemode: ep.Livemode,
		AccountID: accountID, Object: b,
	}, nil
}

// NewOperationalTry describes attempt a for an operational event.
func NewOperationalTry(a *Attempt) *OperationalTry {
	t := &OperationalTry{DeliveryID: a.DeliveryID, StartedAt: a.StartedAt.Unix()}
	if a.ResponseStatus != 0 {
		t.ResponseStatus = &a.ResponseStatus
	}
	if a.Error != "" {
		t.Error = &a.Error
	}
	return t
}

func unixOrNil(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	u := t.Unix()
	return &u
}
