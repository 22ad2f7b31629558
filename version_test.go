package webhooks_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

func TestAPIVersions(t *testing.T) {
	if got, want := webhooks.APIVersions(), []string{"2026-09-23", "2025-06-01"}; !reflect.DeepEqual(got, want) {
		t.Errorf("APIVersions: got %v, want %v (newest first)", got, want)
	}
	if webhooks.LatestAPIVersion != webhooks.APIVersions()[0] {
		t.Errorf("LatestAPIVersion %q is not the first version", webhooks.LatestAPIVersion)
	}
	for _, v := range []string{"2026-09-23", "2025-06-01"} {
		if !webhooks.KnownAPIVersion(v) {
			t.Errorf("KnownAPIVersion(%q): got false", v)
		}
	}
	for _, v := range []string{"", "2020-01-01", "2026-09-23 ", "latest"} {
		if webhooks.KnownAPIVersion(v) {
			t.Errorf("KnownAPIVersion(%q): got true", v)
		}
	}
}

func TestRenderData(t *testing.T) {
	tests := []struct {
		name    string
		typ     string
		object  string // as registered
		version string
		want    string
	}{
		{
			name: "latest carries the type", typ: "invoice.sent", version: "2026-09-23",
			object: `{"object":"invoice","id":"in_1","total":"1210.00","currency":"EUR"}`,
			want:   `{"type":"invoice.sent","object":{"object":"invoice","id":"in_1","total":"1210.00","currency":"EUR"}}`,
		},
		{
			name: "2025-06-01 invoice total in cents, key order kept", typ: "invoice.sent", version: "2025-06-01",
			object: `{"object":"invoice","id":"in_1","number":"FAC-2026-00042","total":"1210.00","currency":"EUR"}`,
			want:   `{"object":{"object":"invoice","id":"in_1","number":"FAC-2026-00042","total_cents":121000,"currency":"EUR"}}`,
		},
		{
			name: "2025-06-01 total first", typ: "invoice.paid", version: "2025-06-01",
			object: `{"total":"0.07","object":"invoice"}`,
			want:   `{"object":{"total_cents":7,"object":"invoice"}}`,
		},
		{
			name: "2025-06-01 negative total", typ: "invoice.credited", version: "2025-06-01",
			object: `{"object":"invoice","total":"-3.5"}`,
			want:   `{"object":{"object":"invoice","total_cents":-350}}`,
		},
		{
			name: "2025-06-01 integer total", typ: "invoice.sent", version: "2025-06-01",
			object: `{"object":"invoice","total":"7"}`,
			want:   `{"object":{"object":"invoice","total_cents":700}}`,
		},
		{
			name: "2025-06-01 large total", typ: "invoice.sent", version: "2025-06-01",
			object: `{"object":"invoice","total":"999999999999999.99"}`,
			want:   `{"object":{"object":"invoice","total_cents":99999999999999999}}`,
		},
		{
			name: "2025-06-01 invoice without total", typ: "invoice.created", version: "2025-06-01",
			object: `{"object":"invoice","id":"in_1"}`,
			want:   `{"object":{"object":"invoice","id":"in_1"}}`,
		},
		{
			name: "2025-06-01 other objects unchanged", typ: "credit_note.sent", version: "2025-06-01",
			object: `{"object":"credit_note","total":"1210.00","nested":{"total":"1.00"},"list":[1,2]}`,
			want:   `{"object":{"object":"credit_note","total":"1210.00","nested":{"total":"1.00"},"list":[1,2]}}`,
		},
		{
			name: "2025-06-01 object without kind", typ: "account.updated", version: "2025-06-01",
			object: `{"name":"Fusteria Martí, S.L. — Girona","total":"x"}`,
			want:   `{"object":{"name":"Fusteria Martí, S.L. — Girona","total":"x"}}`,
		},
		{
			name: "2025-06-01 empty object", typ: "account.updated", version: "2025-06-01",
			object: `{}`,
			want:   `{"object":{}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &webhooks.Event{Type: tt.typ, CompanyID: webhooks.NewID(), AccountID: webhooks.NewID(), Object: json.RawMessage(tt.object)}
			if err := ev.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got, err := webhooks.RenderData(ev, tt.version)
			if err != nil {
				t.Fatalf("RenderData: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("RenderData(%s):\ngot  %s\nwant %s", tt.version, got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("RenderData(%s): got invalid JSON %s", tt.version, got)
			}
		})
	}
}

func TestRenderData_UnknownVersion(t *testing.T) {
	ev := &webhooks.Event{Type: "invoice.sent", Object: json.RawMessage(`{"object":"invoice"}`)}
	if got, err := webhooks.RenderData(ev, "2020-01-01"); err == nil {
		t.Errorf("RenderData(2020-01-01): got %s, want an error", got)
	}
}

// TestEvent_ValidateTotals: an invoice total that some version could not
// render is refused at registration, so rendering never fails later.
func TestEvent_ValidateTotals(t *testing.T) {
	tests := []struct {
		total string // JSON
		ok    bool
	}{
		{`"1210.00"`, true},
		{`"1210.5"`, true},
		{`"1210"`, true},
		{`"-3.50"`, true},
		{`"0"`, true},
		{`"999999999999999.99"`, true},
		{`"12.345"`, false},
		{`"1,210.00"`, false},
		{`"1e3"`, false},
		{`"abc"`, false},
		{`""`, false},
		{`"-"`, false},
		{`".50"`, false},
		{`"+1.00"`, false},
		{`"--1"`, false},
		{`"1000000000000000.00"`, false}, // 16 digits before the point
		{`1210`, false},
		{`null`, false},
	}
	for _, tt := range tests {
		ev := &webhooks.Event{Type: "invoice.sent", CompanyID: webhooks.NewID(), Object: json.RawMessage(`{"object":"invoice","total":` + tt.total + `}`)}
		err := ev.Validate()
		if (err == nil) != tt.ok {
			t.Errorf("total %s: got %v, want ok=%t", tt.total, err, tt.ok)
		}
		if err != nil && webhooks.ErrorCode(err) != webhooks.EUNPROCESSABLE {
			t.Errorf("total %s: got code %s, want %s", tt.total, webhooks.ErrorCode(err), webhooks.EUNPROCESSABLE)
		}
	}
	// Any total is fine on an object that is not an invoice.
	ev := &webhooks.Event{Type: "credit_note.sent", CompanyID: webhooks.NewID(), Object: json.RawMessage(`{"object":"credit_note","total":12}`)}
	if err := ev.Validate(); err != nil {
		t.Errorf("credit note with a numeric total: got %v, want nil", err)
	}
}

func TestEvent_Validate(t *testing.T) {
	company, account := webhooks.NewID(), webhooks.NewID()
	tests := []struct {
		name string
		ev   webhooks.Event
		code string // "" when valid
	}{
		{"company event", webhooks.Event{Type: "invoice.sent", CompanyID: company, Object: json.RawMessage(`{"object":"invoice"}`)}, ""},
		{"account event", webhooks.Event{Type: "account.updated", AccountID: account, Object: json.RawMessage(`{}`)}, ""},
		{"account event about a company", webhooks.Event{Type: "account.updated", CompanyID: company, Object: json.RawMessage(`{}`)}, ""},
		{"no type", webhooks.Event{CompanyID: company, Object: json.RawMessage(`{}`)}, webhooks.EINVALID},
		{"ping", webhooks.Event{Type: "ping", CompanyID: company, Object: json.RawMessage(`{}`)}, webhooks.EINVALID},
		{"upper case type", webhooks.Event{Type: "Invoice.Sent", CompanyID: company, Object: json.RawMessage(`{}`)}, webhooks.EINVALID},
		{"type too long", webhooks.Event{Type: "a." + strings.Repeat("b", 99), CompanyID: company, Object: json.RawMessage(`{}`)}, webhooks.EINVALID},
		{"type at the limit", webhooks.Event{Type: "a." + strings.Repeat("b", 98), CompanyID: company, Object: json.RawMessage(`{}`)}, ""},
		{"company event without company", webhooks.Event{Type: "invoice.sent", AccountID: account, Object: json.RawMessage(`{}`)}, webhooks.ECOMPANYREQUIRED},
		{"account event without account", webhooks.Event{Type: "account.updated", Object: json.RawMessage(`{}`)}, webhooks.EINVALID},
		{"bad company id", webhooks.Event{Type: "invoice.sent", CompanyID: "acme", Object: json.RawMessage(`{}`)}, webhooks.EINVALID},
		{"no object", webhooks.Event{Type: "invoice.sent", CompanyID: company}, webhooks.EINVALID},
		{"array object", webhooks.Event{Type: "invoice.sent", CompanyID: company, Object: json.RawMessage(`[]`)}, webhooks.EINVALID},
		{"string object", webhooks.Event{Type: "invoice.sent", CompanyID: company, Object: json.RawMessage(`"x"`)}, webhooks.EINVALID},
		{"broken object", webhooks.Event{Type: "invoice.sent", CompanyID: company, Object: json.RawMessage(`{"a":`)}, webhooks.EINVALIDJSON},
		{"correlation id too long", webhooks.Event{Type: "invoice.sent", CompanyID: company, CorrelationID: strings.Repeat("c", 256), Object: json.RawMessage(`{}`)}, webhooks.EINVALID},
	}
	for _, tt := range tests {
		ev := tt.ev
		err := ev.Validate()
		if got := webhooks.ErrorCode(err); got != tt.code {
			t.Errorf("%s: got code %q (%v), want %q", tt.name, got, err, tt.code)
		}
	}
	// The object is stored compact, in the producer's key order.
	ev := webhooks.Event{Type: "invoice.sent", CompanyID: company, Object: json.RawMessage("{ \"b\": 1,\n \"a\": [ 1, 2 ] }")}
	if err := ev.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := string(ev.Object), `{"b":1,"a":[1,2]}`; got != want {
		t.Errorf("stored object: got %s, want %s", got, want)
	}
}
