package httpapi

import "testing"

// BenchmarkDecode_Event decodes a typical POST /v1/events body, with the
// exact field-name check every request gets.
func BenchmarkDecode_Event(b *testing.B) {
	body := []byte(`{"type": "invoice.sent", "company_id": "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42",
		"correlation_id": "01a0e783-aa84-7b48-8c63-1a5e9d2f4b70",
		"data": {"object": {"object": "invoice", "id": "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42", "number": "FAC-2026-00042",
		"status": "sent", "total": "1210.00", "currency": "EUR", "lines": [{"description": "Consulting", "amount": "1000.00"}]}}}`)
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var v eventRequest
			if err := decodeBytes(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("checkFields", func(b *testing.B) {
		var v eventRequest
		for b.Loop() {
			if err := checkFields(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
