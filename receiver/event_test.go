package receiver_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/factuarea/webhooks/receiver"
)

// The two bodies of the Catalan guide: one invoice.sent event as a company
// endpoint and an account endpoint receive it.
const (
	companyEnvelope = `{
  "id": "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31",
  "type": "invoice.sent",
  "api_version": "2026-09-23",
  "created": 1790590561,
  "livemode": true,
  "test": false,
  "correlation_id": "01a0e783-aa84-7b48-8c63-1a5e9d2f4b70",
  "data": {
    "type": "invoice.sent",
    "object": {"object": "invoice", "id": "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42", "total": "1210.00"}
  }
}`
	accountEnvelope = `{
  "id": "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31",
  "type": "invoice.sent",
  "api_version": "2026-09-23",
  "created": 1790590561,
  "livemode": true,
  "test": false,
  "correlation_id": "01a0e783-aa84-7b48-8c63-1a5e9d2f4b70",
  "account": { "id": "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00" },
  "account_relationship": "own",
  "company_id": "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a01",
  "data": {
    "type": "invoice.sent",
    "object": {"object": "invoice", "id": "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42", "total": "1210.00"}
  }
}`
)

func TestParseEvent_CompanyEnvelope(t *testing.T) {
	ev, err := receiver.ParseEvent([]byte(companyEnvelope))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ field, got, want string }{
		{"ID", ev.ID, "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31"},
		{"Type", ev.Type, "invoice.sent"},
		{"APIVersion", ev.APIVersion, "2026-09-23"},
		{"CorrelationID", ev.CorrelationID, "01a0e783-aa84-7b48-8c63-1a5e9d2f4b70"},
		{"Data.Type", ev.Data.Type, "invoice.sent"},
		{"AccountRelationship", ev.AccountRelationship, ""},
		{"CompanyID", ev.CompanyID, ""},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.field, c.got, c.want)
		}
	}
	if want := time.Unix(1790590561, 0).UTC(); !ev.Created.Equal(want) || ev.Created.Location() != time.UTC {
		t.Errorf("Created: got %v, want %v", ev.Created, want)
	}
	if !ev.Livemode || ev.Test {
		t.Errorf("Livemode, Test: got %t, %t, want true, false", ev.Livemode, ev.Test)
	}
	if ev.Account != nil {
		t.Errorf("Account: got %+v, want nil on a company endpoint", ev.Account)
	}
	var inv struct {
		Object string `json:"object"`
		ID     string `json:"id"`
		Total  string `json:"total"`
	}
	if err := ev.DecodeObject(&inv); err != nil {
		t.Fatal(err)
	}
	if inv.Object != "invoice" || inv.Total != "1210.00" {
		t.Errorf("DecodeObject: got %+v, want the invoice", inv)
	}
}

func TestParseEvent_AccountEnvelope(t *testing.T) {
	ev, err := receiver.ParseEvent([]byte(accountEnvelope))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Account == nil || ev.Account.ID != "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00" {
		t.Errorf("Account: got %+v, want id 01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00", ev.Account)
	}
	if ev.AccountRelationship != receiver.RelationshipOwn {
		t.Errorf("AccountRelationship: got %q, want %q", ev.AccountRelationship, receiver.RelationshipOwn)
	}
	if ev.CompanyID != "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a01" {
		t.Errorf("CompanyID: got %q, want 01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a01", ev.CompanyID)
	}
	// Both copies of the event carry the same id and data.
	company, err := receiver.ParseEvent([]byte(companyEnvelope))
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != company.ID || string(ev.Data.Object) != string(company.Data.Object) {
		t.Errorf("got id %s and data %s, want those of the company copy: %s and %s", ev.ID, ev.Data.Object, company.ID, company.Data.Object)
	}
}

// TestParseEvent_Shapes covers the other shapes: the 2025-06-01 data, an
// account.* event about no company, a test ping, and absent fields.
func TestParseEvent_Shapes(t *testing.T) {
	t.Run("2025-06-01", func(t *testing.T) {
		ev, err := receiver.ParseEvent([]byte(`{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"invoice.sent",` +
			`"api_version":"2025-06-01","created":1790590561,"livemode":false,"test":false,"correlation_id":null,` +
			`"data":{"object":{"object":"invoice","total_cents":121000}}}`))
		if err != nil {
			t.Fatal(err)
		}
		if ev.Data.Type != "" || string(ev.Data.Object) != `{"object":"invoice","total_cents":121000}` {
			t.Errorf("Data: got type %q object %s, want no type and the object", ev.Data.Type, ev.Data.Object)
		}
		if ev.Livemode || ev.CorrelationID != "" {
			t.Errorf("Livemode, CorrelationID: got %t, %q, want false, empty", ev.Livemode, ev.CorrelationID)
		}
	})
	t.Run("account event about no company", func(t *testing.T) {
		ev, err := receiver.ParseEvent([]byte(`{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"account.updated",` +
			`"api_version":"2026-09-23","created":1790590561,"livemode":true,"test":false,"correlation_id":null,` +
			`"account":{"id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00"},"account_relationship":"managed","company_id":null,` +
			`"data":{"type":"account.updated","object":{"object":"account"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		if ev.Account == nil || ev.AccountRelationship != receiver.RelationshipManaged || ev.CompanyID != "" {
			t.Errorf("got account %+v, relationship %q, company %q; want an account, managed, no company",
				ev.Account, ev.AccountRelationship, ev.CompanyID)
		}
	})
	t.Run("minimal", func(t *testing.T) {
		ev, err := receiver.ParseEvent([]byte(`{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"ping","future_field":[1,2]}`))
		if err != nil {
			t.Fatal(err)
		}
		if !ev.Livemode || !ev.Created.IsZero() || ev.Data.Object != nil {
			t.Errorf("got livemode %t, created %v, object %s; want true (the default), zero, none", ev.Livemode, ev.Created, ev.Data.Object)
		}
	})
}

func TestParseEvent_Invalid(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"empty", ``},
		{"not JSON", `id=1`},
		{"truncated", `{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"ping"`},
		{"trailing data", `{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"ping"} {}`},
		{"array", `[{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"ping"}]`},
		{"null", `null`},
		{"no id", `{"type":"ping"}`},
		{"id is a number", `{"id":42,"type":"ping"}`},
		{"id not a UUID", `{"id":"evt_1","type":"ping"}`},
		{"id uppercase", `{"id":"01A0E783-AAE8-7C2D-9F15-2B7D4E6A8C31","type":"ping"}`},
		{"id without hyphens", `{"id":"01a0e783aae87c2d9f152b7d4e6a8c31abcd","type":"ping"}`},
		{"no type", `{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31"}`},
		{"created not a number", `{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"ping","created":"now"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := receiver.ParseEvent([]byte(tc.body))
			if !errors.Is(err, receiver.ErrInvalidEvent) {
				t.Errorf("got %+v, %v; want ErrInvalidEvent", ev, err)
			}
		})
	}
}

func TestEvent_DecodeObjectError(t *testing.T) {
	ev, err := receiver.ParseEvent([]byte(companyEnvelope))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	err = ev.DecodeObject(&n)
	if _, ok := errors.AsType[*json.UnmarshalTypeError](err); !ok {
		t.Errorf("got %v, want a *json.UnmarshalTypeError", err)
	}
}
