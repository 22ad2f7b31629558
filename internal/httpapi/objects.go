package httpapi

import (
	"encoding/json"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// The API's objects. Field order is the order customers read them in;
// optional values are pointers so that absent is null, not "" or 0.

type accountJSON struct {
	ID            string  `json:"id"`
	Object        string  `json:"object"`
	Name          string  `json:"name"`
	ProvisionedBy *string `json:"provisioned_by"`
	Created       int64   `json:"created"`
}

func accountObject(a *webhooks.Account) accountJSON {
	return accountJSON{ID: a.ID, Object: "account", Name: a.Name, ProvisionedBy: optional(a.ProvisionedBy), Created: a.Created.Unix()}
}

// apiKeyJSON has the key itself only in the answer that creates it.
type apiKeyJSON struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	AccountID string `json:"account_id"`
	Key       string `json:"key,omitempty"`
	Created   int64  `json:"created"`
}

func apiKeyObject(k *webhooks.APIKey) apiKeyJSON {
	return apiKeyJSON{ID: k.ID, Object: "api_key", AccountID: k.AccountID, Created: k.Created.Unix()}
}

type companyJSON struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	AccountID string `json:"account_id"`
	NIF       string `json:"nif"`
	Name      string `json:"name"`
	Created   int64  `json:"created"`
}

func companyObject(c *webhooks.Company) companyJSON {
	return companyJSON{ID: c.ID, Object: "company", AccountID: c.AccountID, NIF: c.NIF, Name: c.Name, Created: c.Created.Unix()}
}

type eventJSON struct {
	ID            string          `json:"id"`
	Object        string          `json:"object"`
	Type          string          `json:"type"`
	APIVersion    string          `json:"api_version"`
	Created       int64           `json:"created"`
	Livemode      bool            `json:"livemode"`
	Test          bool            `json:"test"`
	CorrelationID *string         `json:"correlation_id"`
	AccountID     string          `json:"account_id"`
	CompanyID     *string         `json:"company_id"`
	OrderingKey   *string         `json:"ordering_key"`
	Data          json.RawMessage `json:"data"`
	ErasedAt      *int64          `json:"erased_at"`
}

func eventObject(e *webhooks.Event) eventJSON {
	data, err := webhooks.RenderData(e, e.APIVersion)
	if err != nil { // the stored version always renders
		data = json.RawMessage(`null`)
	}
	return eventJSON{
		ID: e.ID, Object: "event", Type: e.Type, APIVersion: e.APIVersion, Created: e.Created.Unix(),
		Livemode: e.Livemode, Test: e.Test, CorrelationID: optional(e.CorrelationID),
		AccountID: e.AccountID, CompanyID: optional(e.CompanyID), OrderingKey: optional(e.OrderingKey), Data: data, ErasedAt: optionalTime(e.ErasedAt),
	}
}

type endpointJSON struct {
	ID                      string                  `json:"id"`
	Object                  string                  `json:"object"`
	Scope                   webhooks.Scope          `json:"scope"`
	CompanyID               string                  `json:"company_id,omitempty"`
	AccountID               string                  `json:"account_id,omitempty"`
	URL                     *string                 `json:"url"` // null on a relay endpoint
	EnabledEvents           []string                `json:"enabled_events"`
	Relationships           []webhooks.Relationship `json:"relationships,omitempty"`
	APIVersion              string                  `json:"api_version"`
	Livemode                bool                    `json:"livemode"`
	Description             string                  `json:"description"`
	Status                  string                  `json:"status"`
	StandardWebhooks        bool                    `json:"standard_webhooks"`
	RateLimit               *int                    `json:"rate_limit"`
	Ordered                 bool                    `json:"ordered"`
	AutoRecover             bool                    `json:"auto_recover"`
	Relay                   bool                    `json:"relay"`
	FailingSince            *int64                  `json:"failing_since"`
	DisabledAt              *int64                  `json:"disabled_at"`
	DisabledReason          *string                 `json:"disabled_reason"`
	PreviousSecretExpiresAt *int64                  `json:"previous_secret_expires_at"`
	Created                 int64                   `json:"created"`
	Secret                  string                  `json:"secret,omitempty"`
}

// endpointObject never includes the secret: only creation adds it.
func endpointObject(e *webhooks.Endpoint, now time.Time) endpointJSON {
	out := endpointJSON{
		ID: e.ID, Object: "webhook_endpoint", Scope: e.Scope, CompanyID: e.CompanyID, AccountID: e.AccountID,
		URL: optional(e.URL), EnabledEvents: e.EnabledEvents, Relationships: e.Relationships, APIVersion: e.APIVersion,
		Livemode: e.Livemode, Description: e.Description, Status: e.Status, Created: e.Created.Unix(),
		StandardWebhooks: e.StandardWebhooks, RateLimit: optionalInt(e.RateLimit), FailingSince: optionalTime(e.FailingSince), DisabledAt: optionalTime(e.DisabledAt),
		Ordered: e.Ordered, AutoRecover: e.AutoRecover, Relay: e.Relay,
	}
	if e.DisabledReason != "" {
		out.DisabledReason = &e.DisabledReason
	}
	if e.PreviousSecret != "" && now.Before(e.PreviousSecretExpires) {
		out.PreviousSecretExpiresAt = optionalTime(e.PreviousSecretExpires)
	}
	return out
}

type attemptJSON struct {
	Number         int     `json:"number"`
	StartedAt      int64   `json:"started_at"`
	DurationMS     int64   `json:"duration_ms"`
	ResponseStatus *int    `json:"response_status"`
	ResponseBody   string  `json:"response_body"`
	Error          *string `json:"error"`
	Manual         bool    `json:"manual"`
}

type deliveryJSON struct {
	ID                 string         `json:"id"`
	Object             string         `json:"object"`
	EndpointID         string         `json:"endpoint_id"`
	EventID            string         `json:"event_id"`
	EventType          string         `json:"event_type"`
	Status             string         `json:"status"`
	AttemptCount       int            `json:"attempt_count"`
	NextAttemptAt      *int64         `json:"next_attempt_at"`
	LastResponseStatus *int           `json:"last_response_status"`
	Reason             *string        `json:"reason"`
	ReplayOf           *string        `json:"replay_of"`
	Rehearsal          bool           `json:"rehearsal"`
	WaitingFor         *string        `json:"waiting_for"`
	Created            int64          `json:"created"`
	Attempts           *[]attemptJSON `json:"attempts,omitempty"`
}

func deliveryObject(d *webhooks.Delivery) deliveryJSON {
	out := deliveryJSON{
		ID: d.ID, Object: "webhook_delivery", EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		Status: d.Status, AttemptCount: d.AttemptCount, NextAttemptAt: optionalTime(d.NextAttemptAt),
		LastResponseStatus: optionalInt(d.LastResponseStatus), Reason: optional(d.Reason), ReplayOf: optional(d.ReplayOf),
		Rehearsal: d.Rehearsal, Created: d.Created.Unix(),
	}
	if d.Status == webhooks.DeliveryPending {
		out.WaitingFor = optional(d.WaitingFor)
	}
	if d.Attempts != nil {
		as := make([]attemptJSON, 0, len(d.Attempts))
		for _, a := range d.Attempts {
			as = append(as, attemptJSON{
				Number: a.Number, StartedAt: a.StartedAt.Unix(), DurationMS: a.Duration.Milliseconds(),
				ResponseStatus: optionalInt(a.ResponseStatus), ResponseBody: a.ResponseBody, Error: optional(a.Error), Manual: a.Manual,
			})
		}
		out.Attempts = &as
	}
	return out
}

type auditJSON struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Actor  struct {
		Type string  `json:"type"`
		ID   *string `json:"id"`
	} `json:"actor"`
	Action string `json:"action"`
	Target struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"target"`
	Outcome   string  `json:"outcome"`
	ErrorCode *string `json:"error_code"`
	Created   int64   `json:"created"`
}

func auditObject(e *webhooks.AuditEntry) auditJSON {
	out := auditJSON{ID: e.ID, Object: "audit_entry", Action: e.Action, Outcome: e.Outcome, ErrorCode: optional(e.ErrorCode), Created: e.Created.Unix()}
	out.Actor.Type, out.Actor.ID = e.Actor.Type, optional(e.Actor.ID)
	out.Target.Type, out.Target.ID = e.TargetType, e.TargetID
	return out
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optionalInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func optionalTime(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	u := t.Unix()
	return &u
}
