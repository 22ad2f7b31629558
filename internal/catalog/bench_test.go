package catalog

import (
	"encoding/json"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

// benchSchema and benchObject are an invoice-like schema and an object
// that matches it, as storetest.BenchmarkRegistration declares them.
const benchSchema = `{"type": "object", "required": ["object", "id", "number", "status", "total", "currency"],
	"properties": {
		"object": {"type": "string"}, "id": {"type": "string", "minLength": 1}, "number": {"type": "string"},
		"status": {"enum": ["draft", "sent", "paid", "voided"]},
		"total": {"type": "string", "pattern": "^-?[0-9]+\\.[0-9]{2}$"}, "currency": {"type": "string", "minLength": 3, "maxLength": 3},
		"customer": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "nif": {"type": "string"}}},
		"lines": {"type": "array", "items": {"type": "object", "required": ["description", "amount"],
			"properties": {"description": {"type": "string"}, "amount": {"type": "string"}}}}}}`

const benchObject = `{"object":"invoice","id":"inv_00000001","number":"FAC-2026-00000001","status":"sent","total":"1210.00","currency":"EUR",` +
	`"customer":{"name":"Hostal La Plaza SL","nif":"B12345674"},` +
	`"lines":[{"description":"Menú del día (x40)","amount":"800.00"},{"description":"Servicio de catering","amount":"200.00"}]}`

// BenchmarkCheckEvent is the catalog's share of a registration: a type
// without a schema (a map lookup) and one with a schema (decoding the
// object and validating it).
func BenchmarkCheckEvent(b *testing.B) {
	c := New(1, []*webhooks.EventType{
		{Name: "invoice.sent", Description: "x", Schema: json.RawMessage(benchSchema)},
		{Name: "invoice.paid", Description: "x"},
	}, nil)
	obj := json.RawMessage(benchObject)
	for _, typ := range []string{"invoice.paid", "invoice.sent"} {
		b.Run(typ, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.CheckEvent(typ, obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
