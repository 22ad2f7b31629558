package webhooks_test

import (
	"encoding/json"
	"strings"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

func TestCatalogExempt(t *testing.T) {
	for typ, want := range map[string]bool{
		"ping": true, "webhook_endpoint.failing": true, "webhook_delivery.exhausted": true, "webhook_endpoint.*": true,
		"invoice.sent": false, "webhook.failing": false, "webhook_endpointx.failing": false, "*": false,
	} {
		if got := webhooks.CatalogExempt(typ); got != want {
			t.Errorf("CatalogExempt(%q): got %t, want %t", typ, got, want)
		}
	}
}

func TestEventType_Validate(t *testing.T) {
	et := webhooks.EventType{Name: "invoice.sent", Description: "Sent.", Example: json.RawMessage(" { \"b\": 1,\n \"a\": [1, 2] } "), Schema: json.RawMessage("null")}
	if err := et.Validate(); err != nil {
		t.Fatal(err)
	}
	if string(et.Example) != `{"b":1,"a":[1,2]}` || et.Schema != nil {
		t.Errorf("got example %s and schema %s, want the example compact in its order and no schema", et.Example, et.Schema)
	}
	for _, tc := range []struct {
		et   webhooks.EventType
		code string
		msg  string
	}{
		{webhooks.EventType{Description: "x"}, webhooks.EINVALID, "name is required"},
		{webhooks.EventType{Name: "InvoiceSent", Description: "x"}, webhooks.EINVALID, "name \"InvoiceSent\" is not a valid event type"},
		{webhooks.EventType{Name: "invoice." + strings.Repeat("x", 100), Description: "x"}, webhooks.EINVALID, "at most 100"},
		{webhooks.EventType{Name: "ping", Description: "x"}, webhooks.EINVALID, "not a valid event type"},
		{webhooks.EventType{Name: "webhook_endpoint.failing", Description: "x"}, webhooks.EINVALID, "operational events"},
		{webhooks.EventType{Name: "invoice.sent", Description: "  "}, webhooks.EINVALID, "description is required"},
		{webhooks.EventType{Name: "invoice.sent", Description: strings.Repeat("é", 501)}, webhooks.EINVALID, "at most 500"},
		{webhooks.EventType{Name: "invoice.sent", Description: "x", Example: json.RawMessage(`[1]`)}, webhooks.EINVALID, "example must be a JSON object"},
		{webhooks.EventType{Name: "invoice.sent", Description: "x", Schema: json.RawMessage(`true`)}, webhooks.EINVALID, "schema must be a JSON object"},
		{webhooks.EventType{Name: "invoice.sent", Description: "x", Schema: json.RawMessage(`{"a":`)}, webhooks.EINVALIDJSON, "schema is not valid JSON"},
		{webhooks.EventType{Name: "invoice.sent", Description: "x", Example: json.RawMessage("{\"a\":\"\xff\"}")}, webhooks.EINVALIDJSON, "not valid UTF-8"},
		{webhooks.EventType{Name: "invoice.sent", Description: "x", Example: json.RawMessage(`{"a":"` + strings.Repeat("x", 64<<10) + `"}`)}, webhooks.EINVALID, "at most 64 KiB"},
	} {
		err := tc.et.Validate()
		if webhooks.ErrorCode(err) != tc.code || !strings.Contains(webhooks.ErrorMessage(err), tc.msg) {
			t.Errorf("Validate(%.60s %.20q): got %v, want %s containing %q", tc.et.Name, tc.et.Description, err, tc.code, tc.msg)
		}
	}
}

func TestEventTypeUpdate_Apply(t *testing.T) {
	et := webhooks.EventType{Name: "invoice.sent", Description: "Sent.", Example: json.RawMessage(`{"a":1}`), Schema: json.RawMessage(`{}`)}
	desc, null, example := "Sent to the customer.", json.RawMessage(`null`), json.RawMessage(`{"b": 2}`)
	u := webhooks.EventTypeUpdate{Description: &desc, Schema: &null, Example: &example}
	if err := u.Apply(&et); err != nil {
		t.Fatal(err)
	}
	if et.Description != desc || et.Schema != nil || string(et.Example) != `{"b":2}` {
		t.Errorf("Apply: got %+v", et)
	}
	if err := (&webhooks.EventTypeUpdate{}).Apply(&et); err != nil || string(et.Example) != `{"b":2}` {
		t.Errorf("an empty update: got %+v, %v; want nothing changed", et, err)
	}
}
