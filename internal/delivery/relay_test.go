package delivery

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/signature"
)

// fakeRelay answers every exchange with its answer or err, and keeps what
// it was given.
type fakeRelay struct {
	answer   *webhooks.RelayAnswer
	err      error
	endpoint string
	header   map[string][]string
	body     []byte
}

func (f *fakeRelay) Exchange(_ context.Context, endpointID, _ string, header map[string][]string, body []byte) (*webhooks.RelayAnswer, error) {
	f.endpoint, f.header, f.body = endpointID, header, body
	return f.answer, f.err
}

// TestAttempt_Relay: an attempt to a relay endpoint goes to the Relay with
// the headers and the exact body a POST would carry, signed, and its
// answer is classified as a POST's: the listener's status, body and
// duration; relay_not_connected and the listener's errors are retryable
// failures.
func TestAttempt_Relay(t *testing.T) {
	const secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	ep := &webhooks.Endpoint{ID: webhooks.NewID(), Relay: true, Secret: secret, Scope: webhooks.ScopeCompany}
	body := []byte(`{"id":"evt","type":"invoice.sent"}`)
	claim := func() *webhooks.Claim {
		d := &webhooks.Delivery{ID: webhooks.NewID(), EndpointID: ep.ID, EventID: webhooks.NewID(), EventType: "invoice.sent", Body: body}
		return &webhooks.Claim{Delivery: d, Endpoint: ep, Token: webhooks.NewID()}
	}
	for _, tc := range []struct {
		name       string
		relay      *fakeRelay
		noRelay    bool
		status     int
		errText    string
		transition string
		duration   time.Duration
	}{
		{name: "Delivered", relay: &fakeRelay{answer: &webhooks.RelayAnswer{Status: 202, Body: "ok", Duration: 42 * time.Millisecond}},
			status: 202, transition: webhooks.DeliveryDelivered, duration: 42 * time.Millisecond},
		{name: "ServerError", relay: &fakeRelay{answer: &webhooks.RelayAnswer{Status: 500, Body: "boom", Duration: time.Millisecond}},
			status: 500, transition: webhooks.DeliveryPending, duration: time.Millisecond},
		{name: "NonRetryable", relay: &fakeRelay{answer: &webhooks.RelayAnswer{Status: 422}},
			status: 422, transition: webhooks.DeliveryFailedPermanently},
		{name: "ForwardError", relay: &fakeRelay{answer: &webhooks.RelayAnswer{Error: "dial tcp 127.0.0.1:3000: connect: connection refused", Duration: time.Millisecond}},
			errText: "forward: dial tcp 127.0.0.1:3000: connect: connection refused", transition: webhooks.DeliveryPending},
		{name: "NotConnected", relay: &fakeRelay{err: errors.New(webhooks.RelayNotConnected)},
			errText: webhooks.RelayNotConnected, transition: webhooks.DeliveryPending},
		{name: "Lost", relay: &fakeRelay{err: errors.New(webhooks.RelayLost)},
			errText: webhooks.RelayLost, transition: webhooks.DeliveryPending},
		{name: "NoRelay", noRelay: true, errText: webhooks.RelayNotConnected, transition: webhooks.DeliveryPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{}
			if !tc.noRelay {
				cfg.Relay = tc.relay
			}
			e := New(cfg)
			c := claim()
			rec := e.attempt(t.Context(), c)
			a := rec.Attempt
			if a.ResponseStatus != tc.status || a.Error != tc.errText || rec.Transition.Status != tc.transition {
				t.Errorf("got status %d error %q next %s, want %d %q %s", a.ResponseStatus, a.Error, rec.Transition.Status, tc.status, tc.errText, tc.transition)
			}
			if tc.duration > 0 && a.Duration != tc.duration {
				t.Errorf("duration: got %s, want the listener's %s", a.Duration, tc.duration)
			}
			if tc.noRelay || tc.relay.header == nil {
				return
			}
			if tc.relay.endpoint != ep.ID || string(tc.relay.body) != string(body) {
				t.Errorf("exchanged endpoint %s body %q, want %s and the delivery's body", tc.relay.endpoint, tc.relay.body, ep.ID)
			}
			h := tc.relay.header
			if got := h["Factuarea-Delivery-Id"]; len(got) != 1 || got[0] != c.Delivery.ID {
				t.Errorf("Factuarea-Delivery-Id: got %v", got)
			}
			if !strings.HasPrefix(h["User-Agent"][0], "Factuarea-Webhooks/") {
				t.Errorf("User-Agent: got %v", h["User-Agent"])
			}
			if err := signature.Verify(h[signature.HeaderName][0], body, time.Now(), 0, secret); err != nil {
				t.Errorf("the relayed signature does not verify: %v", err)
			}
		})
	}
}
