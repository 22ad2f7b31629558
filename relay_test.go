package webhooks_test

import (
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// TestEndpoint_ValidateRelay: a relay endpoint (SPEC 20) has no URL, any
// other endpoint has one, and a platform endpoint cannot be a relay; a
// PATCH cannot give a relay endpoint a URL.
func TestEndpoint_ValidateRelay(t *testing.T) {
	id := webhooks.NewID()
	for _, tc := range []struct {
		name string
		ep   webhooks.Endpoint
		want string // "" for valid, else a word of the message
	}{
		{"company relay", webhooks.Endpoint{Scope: webhooks.ScopeCompany, CompanyID: id, Relay: true}, ""},
		{"account relay", webhooks.Endpoint{Scope: webhooks.ScopeAccount, AccountID: id, Relay: true}, ""},
		{"relay with a url", webhooks.Endpoint{Scope: webhooks.ScopeCompany, CompanyID: id, Relay: true, URL: "https://example.com"}, "has no url"},
		{"neither", webhooks.Endpoint{Scope: webhooks.ScopeCompany, CompanyID: id}, "url is required (or relay: true"},
		{"platform relay", webhooks.Endpoint{Scope: webhooks.ScopePlatform, Relay: true}, "platform endpoint cannot be a relay"},
	} {
		tc.ep.EnabledEvents = []string{"*"}
		err := tc.ep.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: got %v, want valid", tc.name, err)
		case tc.want != "" && (webhooks.ErrorCode(err) != webhooks.EINVALID || !strings.Contains(webhooks.ErrorMessage(err), tc.want)):
			t.Errorf("%s: got %v, want invalid_request saying %q", tc.name, err, tc.want)
		}
	}
	ep := webhooks.Endpoint{Scope: webhooks.ScopeAccount, AccountID: id, Relay: true, EnabledEvents: []string{"*"}}
	url := "https://example.com/hooks"
	if err := (&webhooks.EndpointUpdate{URL: &url}).Apply(&ep); webhooks.ErrorCode(err) != webhooks.EINVALID {
		t.Errorf("PATCH url of a relay endpoint: got %v, want invalid_request", err)
	}
	desc := "laptop"
	if err := (&webhooks.EndpointUpdate{Description: &desc}).Apply(&ep); err != nil || !ep.Relay || ep.URL != "" {
		t.Errorf("PATCH description of a relay endpoint: got %v (relay %t, url %q)", err, ep.Relay, ep.URL)
	}
}

// TestRelayAnswer_Validate: a listener's answer is a status or an error,
// and its body is cut to what an attempt keeps.
func TestRelayAnswer_Validate(t *testing.T) {
	for name, a := range map[string]webhooks.RelayAnswer{
		"empty":            {},
		"status and error": {Status: 200, Error: "x"},
		"status too small": {Status: 99},
		"status too large": {Status: 1000},
		"negative":         {Status: 200, Duration: -time.Millisecond},
		"long error":       {Error: strings.Repeat("e", webhooks.MaxResponseKept+1)},
	} {
		if err := a.Validate(); webhooks.ErrorCode(err) != webhooks.EINVALID {
			t.Errorf("%s: got %v, want invalid_request", name, err)
		}
	}
	a := webhooks.RelayAnswer{Status: 200, Body: strings.Repeat("b", 5000)}
	if err := a.Validate(); err != nil || len(a.Body) != webhooks.MaxResponseKept {
		t.Errorf("a long body: got %v and %d bytes, want it cut to %d", err, len(a.Body), webhooks.MaxResponseKept)
	}
	if err := (&webhooks.RelayAnswer{Error: "connection refused"}).Validate(); err != nil {
		t.Errorf("an error alone: got %v", err)
	}
}
