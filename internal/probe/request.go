package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/delivery"
	"github.com/factuarea/webhooks/signature"
)

// pingObject is the data.object of the probe's test events.
const pingObject = `{"object":"ping","message":"Test event sent by webhooks probe"}`

// endpoint is the endpoint the probe poses as: an account endpoint of
// cfg.AccountID, or a company endpoint, pinned to cfg.APIVersion.
func (p *prober) endpoint() *webhooks.Endpoint {
	if p.cfg.AccountID != "" {
		return &webhooks.Endpoint{Scope: webhooks.ScopeAccount, AccountID: p.cfg.AccountID, APIVersion: p.cfg.APIVersion}
	}
	return &webhooks.Endpoint{Scope: webhooks.ScopeCompany, APIVersion: p.cfg.APIVersion}
}

// eventBody returns the body of a test event with id, rendered as the
// sender renders "send test event" (webhooks.RenderBody) in the
// configured envelope and payload version.
func (p *prober) eventBody(id string, created time.Time) ([]byte, error) {
	ev := &webhooks.Event{
		ID: id, Type: webhooks.PingEventType, APIVersion: webhooks.LatestAPIVersion, Created: created,
		Livemode: !p.cfg.TestMode, Test: true, AccountID: p.cfg.AccountID, Object: json.RawMessage(pingObject),
	}
	return webhooks.RenderBody(ev, p.endpoint(), p.relationship())
}

// relationship is the envelope's account_relationship: own on an account
// endpoint, none on a company endpoint.
func (p *prober) relationship() webhooks.Relationship {
	if p.cfg.AccountID != "" {
		return webhooks.RelationshipOwn
	}
	return ""
}

// request is one request to send.
type request struct {
	eventID string
	body    []byte
	// sig is the Factuarea-Signature value.
	sig string
	// standard is the webhook-signature value, and timestamp the
	// webhook-timestamp, when the Standard Webhooks headers are sent.
	standard  string
	timestamp int64
}

// signed returns a request of body signed at t with the configured
// secrets, new first, as the sender signs during a rotation.
func (p *prober) signed(eventID string, body []byte, t time.Time) request {
	d, err := p.sign(eventID, body, t, p.cfg.Secrets)
	if err != nil {
		// newProber checked that every configured secret signs both
		// schemes.
		panic(err)
	}
	return d
}

// sign returns a request of body signed at t with secrets: a
// Factuarea-Signature, and the Standard Webhooks headers when they are
// sent, with the event id as webhook-id, as the sender signs them.
func (p *prober) sign(eventID string, body []byte, t time.Time, secrets []string) (request, error) {
	d := request{eventID: eventID, body: body, sig: signature.Sign(t.Unix(), body, secrets...)}
	if p.cfg.StandardWebhooks {
		std, err := signature.SignStandard(eventID, t.Unix(), body, secrets...)
		if err != nil {
			return request{}, fmt.Errorf("probe: %w", err)
		}
		d.standard, d.timestamp = std, t.Unix()
	}
	return d, nil
}

// newRequest builds the POST with the sender's headers (delivery.SetHeaders)
// and a delivery id of its own.
func (p *prober) newRequest(ctx context.Context, r request) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.URL, bytes.NewReader(r.body))
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	d := &webhooks.Delivery{ID: webhooks.NewID(), EventID: r.eventID, EventType: webhooks.PingEventType, Relationship: p.relationship(), Body: r.body}
	delivery.SetHeaders(req.Header, d, r.sig)
	if r.standard != "" {
		req.Header.Set(signature.StandardIDHeader, r.eventID)
		req.Header.Set(signature.StandardTimestampHeader, strconv.FormatInt(r.timestamp, 10))
		req.Header.Set(signature.StandardSignatureHeader, r.standard)
	}
	req.Header.Set("User-Agent", p.cfg.UserAgent)
	return req, nil
}
