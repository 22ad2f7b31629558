package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/factuarea/webhooks/receiver"
	"github.com/factuarea/webhooks/signature"
)

// The payload versions the probe can render, and the test event's type.
const (
	APIVersionLatest   = "2026-09-23"
	APIVersion20250601 = "2025-06-01"
	pingType           = "ping"
)

// envelope is a delivery body with the fields in the order the sender
// writes them. CompanyID is omitted on a company endpoint and null for a
// ping on an account endpoint.
type envelope struct {
	ID                  string          `json:"id"`
	Type                string          `json:"type"`
	APIVersion          string          `json:"api_version"`
	Created             int64           `json:"created"`
	Livemode            bool            `json:"livemode"`
	Test                bool            `json:"test"`
	CorrelationID       *string         `json:"correlation_id"`
	Account             *accountRef     `json:"account,omitempty"`
	AccountRelationship string          `json:"account_relationship,omitempty"`
	CompanyID           json.RawMessage `json:"company_id,omitempty"`
	Data                json.RawMessage `json:"data"`
}

type accountRef struct {
	ID string `json:"id"`
}

// newEventID returns a fresh UUIDv7, as the sender assigns to each event.
func newEventID() (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("probe: new id: %w", err)
	}
	return id.String(), nil
}

// eventBody returns the compact body of a test event with id, as the sender
// renders a "send test event" in the configured envelope and version.
func (p *prober) eventBody(id string, created time.Time) ([]byte, error) {
	object := `{"object":"ping","message":"Test event sent by webhooks probe"}`
	data := `{"type":"` + pingType + `","object":` + object + `}`
	if p.cfg.APIVersion == APIVersion20250601 {
		data = `{"object":` + object + `}`
	}
	e := envelope{
		ID:         id,
		Type:       pingType,
		APIVersion: p.cfg.APIVersion,
		Created:    created.Unix(),
		Livemode:   !p.cfg.TestMode,
		Test:       true,
		Data:       json.RawMessage(data),
	}
	if p.cfg.AccountID != "" {
		e.Account = &accountRef{ID: p.cfg.AccountID}
		e.AccountRelationship = receiver.RelationshipOwn
		e.CompanyID = json.RawMessage("null")
	}
	return json.Marshal(e)
}

// delivery is one request to send.
type delivery struct {
	eventID string
	body    []byte
	// sig is the Factuarea-Signature value.
	sig string
}

// signed returns a delivery of body signed at t with the configured
// secrets, new first, as the sender signs during a rotation.
func (p *prober) signed(eventID string, body []byte, t time.Time) delivery {
	return delivery{eventID: eventID, body: body, sig: signature.Sign(t.Unix(), body, p.cfg.Secrets...)}
}

// newRequest builds the POST exactly as the sender does: the headers of the
// specification's section 4, a delivery id of its own.
func (p *prober) newRequest(ctx context.Context, d delivery) (*http.Request, error) {
	deliveryID, err := newEventID()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.URL, bytes.NewReader(d.body))
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", p.cfg.UserAgent)
	h.Set(signature.HeaderName, d.sig)
	h.Set(receiver.HeaderEventID, d.eventID)
	h.Set(receiver.HeaderEventType, pingType)
	h.Set(receiver.HeaderDeliveryID, deliveryID)
	h.Set(receiver.HeaderIdempotencyKey, d.eventID)
	if p.cfg.AccountID != "" {
		h.Set(receiver.HeaderAccountRelationship, receiver.RelationshipOwn)
	}
	return req, nil
}
