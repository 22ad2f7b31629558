package webhooks_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// topKeys returns a JSON object's top-level keys in order.
func topKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestRenderBody(t *testing.T) {
	created := time.Unix(1790590561, 0)
	ev := &webhooks.Event{
		ID: "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31", Type: "invoice.sent", APIVersion: webhooks.LatestAPIVersion,
		Created: created, Livemode: true, CorrelationID: "01a0e783-aa84-7b48-8c63-1a5e9d2f4b70",
		AccountID: "01a0e783-0000-7000-8000-000000000001", CompanyID: "01a0e783-0000-7000-8000-000000000002",
		Object: json.RawMessage(`{"object":"invoice","id":"in_1","total":"1210.00"}`),
	}
	accountEvent := &webhooks.Event{
		ID: "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c32", Type: "account.updated", APIVersion: webhooks.LatestAPIVersion,
		Created: created, Livemode: false, AccountID: "01a0e783-0000-7000-8000-000000000001",
		Object: json.RawMessage(`{"object":"account"}`),
	}
	company := &webhooks.Endpoint{Scope: webhooks.ScopeCompany, APIVersion: webhooks.LatestAPIVersion}
	account := &webhooks.Endpoint{Scope: webhooks.ScopeAccount, APIVersion: webhooks.LatestAPIVersion}
	old := &webhooks.Endpoint{Scope: webhooks.ScopeAccount, APIVersion: webhooks.APIVersion20250601}
	companyKeys := []string{"id", "type", "api_version", "created", "livemode", "test", "correlation_id", "data"}
	accountKeys := []string{"id", "type", "api_version", "created", "livemode", "test", "correlation_id", "account", "account_relationship", "company_id", "data"}
	tests := []struct {
		name string
		ev   *webhooks.Event
		ep   *webhooks.Endpoint
		rel  webhooks.Relationship
		keys []string
		want string
	}{
		{
			name: "company", ev: ev, ep: company, keys: companyKeys,
			want: `{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"invoice.sent","api_version":"2026-09-23","created":1790590561,"livemode":true,"test":false,"correlation_id":"01a0e783-aa84-7b48-8c63-1a5e9d2f4b70","data":{"type":"invoice.sent","object":{"object":"invoice","id":"in_1","total":"1210.00"}}}`,
		},
		{
			name: "account own", ev: ev, ep: account, rel: webhooks.RelationshipOwn, keys: accountKeys,
			want: `{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"invoice.sent","api_version":"2026-09-23","created":1790590561,"livemode":true,"test":false,"correlation_id":"01a0e783-aa84-7b48-8c63-1a5e9d2f4b70","account":{"id":"01a0e783-0000-7000-8000-000000000001"},"account_relationship":"own","company_id":"01a0e783-0000-7000-8000-000000000002","data":{"type":"invoice.sent","object":{"object":"invoice","id":"in_1","total":"1210.00"}}}`,
		},
		{
			name: "account managed, old version", ev: ev, ep: old, rel: webhooks.RelationshipManaged, keys: accountKeys,
			want: `{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"invoice.sent","api_version":"2025-06-01","created":1790590561,"livemode":true,"test":false,"correlation_id":"01a0e783-aa84-7b48-8c63-1a5e9d2f4b70","account":{"id":"01a0e783-0000-7000-8000-000000000001"},"account_relationship":"managed","company_id":"01a0e783-0000-7000-8000-000000000002","data":{"object":{"object":"invoice","id":"in_1","total_cents":121000}}}`,
		},
		{
			name: "account event about no company", ev: accountEvent, ep: account, rel: webhooks.RelationshipOwn, keys: accountKeys,
			want: `{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c32","type":"account.updated","api_version":"2026-09-23","created":1790590561,"livemode":false,"test":false,"correlation_id":null,"account":{"id":"01a0e783-0000-7000-8000-000000000001"},"account_relationship":"own","company_id":null,"data":{"type":"account.updated","object":{"object":"account"}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhooks.RenderBody(tt.ev, tt.ep, tt.rel)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("RenderBody:\ngot  %s\nwant %s", got, tt.want)
			}
			if keys := topKeys(t, got); !reflect.DeepEqual(keys, tt.keys) {
				t.Errorf("keys: got %v, want %v", keys, tt.keys)
			}
		})
	}
}

// TestNewTestEvent: the ping of "send test event" is a test, in the
// endpoint's livemode, and on an account endpoint is about no company.
func TestNewTestEvent(t *testing.T) {
	now := time.Unix(1790590561, 0)
	account := webhooks.NewID()
	ep := &webhooks.Endpoint{ID: webhooks.NewID(), Scope: webhooks.ScopeAccount, AccountID: account, APIVersion: webhooks.LatestAPIVersion, Livemode: false, Status: webhooks.EndpointEnabled}
	ev := webhooks.NewTestEvent(ep, account, now)
	d, err := webhooks.NewDelivery(ev, ep, now)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(d.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body["type"] != "ping" || body["test"] != true || body["livemode"] != false || body["company_id"] != nil ||
		body["account_relationship"] != "own" || !reflect.DeepEqual(body["account"], map[string]any{"id": account}) {
		t.Errorf("test event body: got %s", d.Body)
	}
	if d.Relationship != webhooks.RelationshipOwn || d.EventID != ev.ID || d.Status != webhooks.DeliveryPending {
		t.Errorf("test delivery: got %+v", d)
	}
}
