package receiver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Header names of a delivery, besides signature.HeaderName. Only the body is
// signed: the kit reads the event id from the body, and these headers are
// there for routing and logs.
const (
	HeaderEventID             = "Factuarea-Event-Id"
	HeaderEventType           = "Factuarea-Event-Type"
	HeaderDeliveryID          = "Factuarea-Delivery-Id"
	HeaderAccountRelationship = "Factuarea-Account-Relationship"
	HeaderIdempotencyKey      = "Idempotency-Key"
)

// Values of Event.AccountRelationship and of the
// Factuarea-Account-Relationship header.
const (
	// RelationshipOwn: the event belongs to the endpoint's own account.
	RelationshipOwn = "own"
	// RelationshipManaged: the event belongs to an account that the
	// endpoint's account provisioned.
	RelationshipManaged = "managed"
)

// Event is a parsed delivery body. Both envelopes parse into it: a company
// endpoint's, and an account endpoint's, which adds Account,
// AccountRelationship and CompanyID.
type Event struct {
	// ID is the event id, a canonical lowercase UUID, the same in every copy
	// of the event: the deduplication key.
	ID string
	// Type is the event type, such as "invoice.sent"; "ping" for a test
	// event.
	Type string
	// APIVersion is the payload version the endpoint is pinned to, such as
	// "2026-09-23"; it decides the shape of Data.
	APIVersion string
	// Created is when the event was registered (second precision, UTC). It
	// is the same in every copy, unlike the signature's timestamp.
	Created time.Time
	// Livemode is false for events of the test mode. It is true when the body
	// omits it, as livemode defaults to true.
	Livemode bool
	// Test is true only for the event of an endpoint's "send test event".
	Test bool
	// CorrelationID links the events caused by one operation; it is not a
	// key. Empty when null.
	CorrelationID string
	// Account is the account the event belongs to, on an account endpoint;
	// nil on a company endpoint.
	Account *Account
	// AccountRelationship is RelationshipOwn or RelationshipManaged on an
	// account endpoint, empty on a company endpoint.
	AccountRelationship string
	// CompanyID is the company the event is about, on an account endpoint.
	// Empty on a company endpoint and for an account.* event about no
	// company (null on the wire).
	CompanyID string
	// Data holds the object the event is about.
	Data Data
	// Raw is the whole body as received, for callers that store it.
	Raw json.RawMessage
	// Headers holds the delivery's headers. The Handler sets it; ParseEvent
	// leaves it empty.
	Headers Headers
}

// Account identifies an account in an account endpoint's envelope.
type Account struct {
	ID string `json:"id"`
}

// Data is the event's "data". In api_version 2026-09-23 it is
// {"type", "object"}; in 2025-06-01 it is {"object"} and Type is empty.
type Data struct {
	// Type repeats the event type (2026-09-23 and later).
	Type string
	// Object is the resource as JSON (an invoice, an account, …), left
	// undecoded because its shape depends on the type and the version.
	Object json.RawMessage
}

// DecodeObject decodes Data.Object into v, which should be a pointer.
func (e *Event) DecodeObject(v any) error {
	if err := json.Unmarshal(e.Data.Object, v); err != nil {
		return fmt.Errorf("receiver: decode data.object of event %s: %w", e.ID, err)
	}
	return nil
}

// Headers holds the Factuarea headers of a delivery. They are not signed.
type Headers struct {
	// EventID is Factuarea-Event-Id, equal to the body's id.
	EventID string
	// EventType is Factuarea-Event-Type, equal to the body's type.
	EventType string
	// DeliveryID is Factuarea-Delivery-Id: one event sent to one endpoint.
	// Two endpoints get two; it is not a deduplication key.
	DeliveryID string
	// AccountRelationship is Factuarea-Account-Relationship, on account
	// endpoints only.
	AccountRelationship string
	// IdempotencyKey is Idempotency-Key, equal to the event id.
	IdempotencyKey string
}

// ReadHeaders returns the Factuarea headers of h.
func ReadHeaders(h http.Header) Headers {
	return Headers{
		EventID:             h.Get(HeaderEventID),
		EventType:           h.Get(HeaderEventType),
		DeliveryID:          h.Get(HeaderDeliveryID),
		AccountRelationship: h.Get(HeaderAccountRelationship),
		IdempotencyKey:      h.Get(HeaderIdempotencyKey),
	}
}

// wireEvent is the body as sent; pointers tell null or absent from zero.
type wireEvent struct {
	ID            string  `json:"id"`
	Type          string  `json:"type"`
	APIVersion    string  `json:"api_version"`
	Created       int64   `json:"created"`
	Livemode      *bool   `json:"livemode"`
	Test          bool    `json:"test"`
	CorrelationID *string `json:"correlation_id"`
	Account       *struct {
		ID string `json:"id"`
	} `json:"account"`
	AccountRelationship string  `json:"account_relationship"`
	CompanyID           *string `json:"company_id"`
	Data                *struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// ParseEvent parses a delivery body. It fails with an error wrapping
// ErrInvalidEvent when the body is not a JSON object, or has no id in the
// canonical lowercase UUID form, or no type. Unknown fields are ignored, so
// that new fields do not break receivers.
func ParseEvent(body []byte) (*Event, error) {
	var w wireEvent
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	if w.ID == "" {
		return nil, fmt.Errorf("%w: no id", ErrInvalidEvent)
	}
	if !isCanonicalUUID(w.ID) {
		return nil, fmt.Errorf("%w: id is not a canonical lowercase UUID", ErrInvalidEvent)
	}
	if w.Type == "" {
		return nil, fmt.Errorf("%w: no type", ErrInvalidEvent)
	}
	e := &Event{
		ID:                  w.ID,
		Type:                w.Type,
		APIVersion:          w.APIVersion,
		Livemode:            w.Livemode == nil || *w.Livemode,
		Test:                w.Test,
		AccountRelationship: w.AccountRelationship,
		Raw:                 json.RawMessage(body),
	}
	if w.Created != 0 {
		e.Created = time.Unix(w.Created, 0).UTC()
	}
	if w.CorrelationID != nil {
		e.CorrelationID = *w.CorrelationID
	}
	if w.Account != nil {
		e.Account = &Account{ID: w.Account.ID}
	}
	if w.CompanyID != nil {
		e.CompanyID = *w.CompanyID
	}
	if w.Data != nil {
		e.Data = Data{Type: w.Data.Type, Object: w.Data.Object}
	}
	return e, nil
}

// isCanonicalUUID reports whether s is a UUID in the 8-4-4-4-12 lowercase
// hexadecimal form. The kit insists on the canonical form because the id is
// compared as a string: an uppercase copy would not be a duplicate.
func isCanonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}
