package webhooks_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func TestMatchEventType(t *testing.T) {
	tests := []struct {
		pattern, typ string
		want         bool
	}{
		{"*", "invoice.sent", true},
		{"*", "account.updated", true},
		{"invoice.sent", "invoice.sent", true},
		{"invoice.sent", "invoice.paid", false},
		{"invoice.sent", "invoice.sent.late", false},
		{"invoice.sent", "invoice.sen", false},
		{"invoice.*", "invoice.sent", true},
		{"invoice.*", "invoice.sent.late", true},
		{"invoice.*", "invoice", false},
		{"invoice.*", "invoices.sent", false},
		{"invoice.*", "credit_note.sent", false},
		{"invoice.sent.*", "invoice.sent.late", true},
		{"invoice.sent.*", "invoice.sent", false},
		{"account.*", "account.updated", true},
		{"account.*", "accounting.closed", false},
		{"Invoice.Sent", "invoice.sent", false},
		{"invoice.sent", "Invoice.Sent", false},
	}
	for _, tt := range tests {
		if got := webhooks.MatchEventType(tt.pattern, tt.typ); got != tt.want {
			t.Errorf("MatchEventType(%q, %q): got %t, want %t", tt.pattern, tt.typ, got, tt.want)
		}
	}
}

// validEndpoint returns an endpoint that passes Validate, of scope.
func validEndpoint(scope webhooks.Scope) *webhooks.Endpoint {
	e := &webhooks.Endpoint{ID: webhooks.NewID(), Scope: scope, URL: "https://example.com/hook", EnabledEvents: []string{"invoice.sent"}}
	if scope == webhooks.ScopeCompany {
		e.CompanyID = webhooks.NewID()
	} else {
		e.AccountID = webhooks.NewID()
	}
	return e
}

func TestEndpoint_Validate(t *testing.T) {
	patterns := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("type.n%d", i))
		}
		return out
	}
	tests := []struct {
		name   string
		scope  webhooks.Scope
		change func(e *webhooks.Endpoint)
		want   string // part of the message; "" when valid
	}{
		{"company ok", webhooks.ScopeCompany, func(e *webhooks.Endpoint) {}, ""},
		{"account ok", webhooks.ScopeAccount, func(e *webhooks.Endpoint) {}, ""},
		{"no scope", "", func(e *webhooks.Endpoint) {}, "scope"},
		{"bad scope", "tenant", func(e *webhooks.Endpoint) {}, "scope"},
		{"company without company id", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.CompanyID = "" }, "company_id"},
		{"company with bad id", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.CompanyID = "ACME" }, "company_id"},
		{"account without account id", webhooks.ScopeAccount, func(e *webhooks.Endpoint) { e.AccountID = "" }, "account_id"},
		{"company with relationships", webhooks.ScopeCompany, func(e *webhooks.Endpoint) {
			e.Relationships = []webhooks.Relationship{webhooks.RelationshipOwn}
		}, "relationships only apply"},
		{"empty relationships", webhooks.ScopeAccount, func(e *webhooks.Endpoint) { e.Relationships = []webhooks.Relationship{} }, "relationships must list"},
		{"unknown relationship", webhooks.ScopeAccount, func(e *webhooks.Endpoint) { e.Relationships = []webhooks.Relationship{"friend"} }, `"friend"`},
		{"no url", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.URL = "" }, "url is required"},
		{"url too long", webhooks.ScopeCompany, func(e *webhooks.Endpoint) {
			e.URL = "https://example.com/" + strings.Repeat("a", webhooks.MaxURLLength)
		}, "at most 2048"},
		{"url at the limit", webhooks.ScopeCompany, func(e *webhooks.Endpoint) {
			e.URL = "https://example.com/" + strings.Repeat("a", webhooks.MaxURLLength-len("https://example.com/"))
		}, ""},
		{"no enabled events", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = nil }, "at least one"},
		{"100 enabled events", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = patterns(100) }, ""},
		{"101 enabled events", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = patterns(101) }, "at most 100"},
		{"single label", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"invoice"} }, `"invoice"`},
		{"upper case", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"Invoice.Sent"} }, `"Invoice.Sent"`},
		{"trailing dot", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"invoice."} }, `"invoice."`},
		{"leading wildcard", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"*.sent"} }, `"*.sent"`},
		{"inner wildcard", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"invoice.*.late"} }, `"invoice.*.late"`},
		{"glued wildcard", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"invoice*"} }, `"invoice*"`},
		{"empty pattern", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{""} }, `""`},
		{"spaces", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"invoice. sent"} }, `"invoice. sent"`},
		{"ping", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"ping"} }, `"ping"`},
		{"too long", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"a." + strings.Repeat("b", 99)} }, "is not an event type"},
		{"account.* on a company endpoint", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"account.*"} }, "account.* events only reach account endpoints"},
		{"account type on a company endpoint", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"account.updated"} }, "account.* events only reach account endpoints"},
		{"account.* on an account endpoint", webhooks.ScopeAccount, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"account.*"} }, ""},
		{"* on a company endpoint", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"*"} }, ""},
		{"unknown api version", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.APIVersion = "2020-01-01" }, `"2020-01-01"`},
		{"old api version", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.APIVersion = webhooks.APIVersion20250601 }, ""},
		{"description at the limit", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.Description = strings.Repeat("é", 500) }, ""},
		{"description too long", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.Description = strings.Repeat("a", 501) }, "at most 500"},
		{"bad status", webhooks.ScopeCompany, func(e *webhooks.Endpoint) { e.Status = "paused" }, "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := validEndpoint(webhooks.ScopeCompany)
			if tt.scope == webhooks.ScopeAccount {
				e = validEndpoint(webhooks.ScopeAccount)
			}
			e.Scope = tt.scope
			tt.change(e)
			err := e.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: got %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: got nil, want an error mentioning %q", tt.want)
			}
			if code := webhooks.ErrorCode(err); code != webhooks.EINVALID {
				t.Errorf("Validate: got code %s, want %s", code, webhooks.EINVALID)
			}
			if msg := webhooks.ErrorMessage(err); !strings.Contains(msg, tt.want) {
				t.Errorf("Validate: got message %q, want it to mention %q", msg, tt.want)
			}
		})
	}
}

func TestEndpoint_ValidateDefaults(t *testing.T) {
	e := validEndpoint(webhooks.ScopeAccount)
	e.EnabledEvents = []string{"invoice.sent", "invoice.*", "invoice.sent"}
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	if want := []webhooks.Relationship{webhooks.RelationshipOwn, webhooks.RelationshipManaged}; !reflect.DeepEqual(e.Relationships, want) {
		t.Errorf("relationships: got %v, want %v", e.Relationships, want)
	}
	if e.APIVersion != webhooks.LatestAPIVersion || e.Status != webhooks.EndpointEnabled {
		t.Errorf("api_version %q status %q: want %q and enabled", e.APIVersion, e.Status, webhooks.LatestAPIVersion)
	}
	if want := []string{"invoice.sent", "invoice.*"}; !reflect.DeepEqual(e.EnabledEvents, want) {
		t.Errorf("enabled_events: got %v, want %v (duplicates dropped, order kept)", e.EnabledEvents, want)
	}
	e = validEndpoint(webhooks.ScopeAccount)
	e.Relationships = []webhooks.Relationship{"managed", "managed"}
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	if want := []webhooks.Relationship{webhooks.RelationshipManaged}; !reflect.DeepEqual(e.Relationships, want) {
		t.Errorf("relationships: got %v, want %v", e.Relationships, want)
	}
}

func TestEndpoint_Admits(t *testing.T) {
	live := &webhooks.Event{Type: "invoice.sent", Livemode: true}
	test := &webhooks.Event{Type: "invoice.sent", Livemode: false}
	acct := &webhooks.Event{Type: "account.updated", Livemode: true}
	company := &webhooks.Endpoint{Scope: webhooks.ScopeCompany, Livemode: true, EnabledEvents: []string{"*"}}
	account := &webhooks.Endpoint{Scope: webhooks.ScopeAccount, Livemode: true, EnabledEvents: []string{"invoice.*", "account.updated"}}
	tests := []struct {
		name string
		ep   *webhooks.Endpoint
		ev   *webhooks.Event
		want bool
	}{
		{"company *", company, live, true},
		{"company other livemode", company, test, false},
		{"company never account events", company, acct, false},
		{"account prefix", account, live, true},
		{"account exact", account, acct, true},
		{"account other livemode", account, test, false},
	}
	for _, tt := range tests {
		if got := tt.ep.Admits(tt.ev); got != tt.want {
			t.Errorf("%s: Admits: got %t, want %t", tt.name, got, tt.want)
		}
	}
}

func TestEndpoint_SigningSecrets(t *testing.T) {
	now := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
	e := &webhooks.Endpoint{Secret: "whsec_new", PreviousSecret: "whsec_old", PreviousSecretExpires: now.Add(time.Hour)}
	if got, want := e.SigningSecrets(now), []string{"whsec_new", "whsec_old"}; !reflect.DeepEqual(got, want) {
		t.Errorf("during the overlap: got %v, want %v (new first)", got, want)
	}
	if got, want := e.SigningSecrets(now.Add(time.Hour)), []string{"whsec_new"}; !reflect.DeepEqual(got, want) {
		t.Errorf("at the announced moment: got %v, want %v", got, want)
	}
	e.PreviousSecret = ""
	if got, want := e.SigningSecrets(now), []string{"whsec_new"}; !reflect.DeepEqual(got, want) {
		t.Errorf("without a previous secret: got %v, want %v", got, want)
	}
}

func TestEndpointUpdate_Apply(t *testing.T) {
	ptr := func(s string) *string { return &s }
	tests := []struct {
		name   string
		scope  webhooks.Scope
		u      webhooks.EndpointUpdate
		want   string // part of the error message; "" when valid
		status string // the status after a valid update
	}{
		{"nothing", webhooks.ScopeCompany, webhooks.EndpointUpdate{}, "", "enabled"},
		{"disable", webhooks.ScopeCompany, webhooks.EndpointUpdate{Status: ptr("disabled")}, "", "disabled"},
		{"empty status", webhooks.ScopeCompany, webhooks.EndpointUpdate{Status: ptr("")}, "status", ""},
		{"empty api version", webhooks.ScopeCompany, webhooks.EndpointUpdate{APIVersion: ptr("")}, "api_version", ""},
		{"empty url", webhooks.ScopeCompany, webhooks.EndpointUpdate{URL: ptr("")}, "url is required", ""},
		{"no events", webhooks.ScopeCompany, webhooks.EndpointUpdate{EnabledEvents: &[]string{}}, "at least one", ""},
		{"relationships on a company endpoint", webhooks.ScopeCompany, webhooks.EndpointUpdate{Relationships: &[]webhooks.Relationship{"own"}}, "only apply", ""},
		{"no relationships", webhooks.ScopeAccount, webhooks.EndpointUpdate{Relationships: &[]webhooks.Relationship{}}, "relationships must list", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := validEndpoint(tt.scope)
			if err := e.Validate(); err != nil {
				t.Fatal(err)
			}
			err := tt.u.Apply(e)
			if tt.want == "" {
				if err != nil || e.Status != tt.status {
					t.Errorf("Apply: got %v, status %q; want nil, %q", err, e.Status, tt.status)
				}
				return
			}
			if err == nil || !strings.Contains(webhooks.ErrorMessage(err), tt.want) {
				t.Errorf("Apply: got %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

func TestEndpointChangeActions(t *testing.T) {
	base := validEndpoint(webhooks.ScopeCompany)
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(e *webhooks.Endpoint)
		want   []string
	}{
		{"nothing", func(e *webhooks.Endpoint) {}, nil},
		{"url", func(e *webhooks.Endpoint) { e.URL = "https://example.org/" }, []string{webhooks.AuditEndpointUpdated}},
		{"events", func(e *webhooks.Endpoint) { e.EnabledEvents = []string{"*"} }, []string{webhooks.AuditEndpointUpdated}},
		{"description", func(e *webhooks.Endpoint) { e.Description = "x" }, []string{webhooks.AuditEndpointUpdated}},
		{"disable", func(e *webhooks.Endpoint) { e.Status = webhooks.EndpointDisabled }, []string{webhooks.AuditEndpointDisabled}},
		{"url and disable", func(e *webhooks.Endpoint) {
			e.URL, e.Status = "https://example.org/", webhooks.EndpointDisabled
		}, []string{webhooks.AuditEndpointUpdated, webhooks.AuditEndpointDisabled}},
	}
	for _, tt := range tests {
		e := *base
		tt.change(&e)
		if got := webhooks.EndpointChangeActions(base, &e); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	disabled := *base
	disabled.Status = webhooks.EndpointDisabled
	if got, want := webhooks.EndpointChangeActions(&disabled, base), []string{webhooks.AuditEndpointEnabled}; !reflect.DeepEqual(got, want) {
		t.Errorf("enable: got %v, want %v", got, want)
	}
}
