package storetest

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/driver"
)

// BenchSchema is each benchmark type's schema: what a platform declares
// for an invoice-like object (required members, types, a pattern, a
// nested object and an array of lines).
const BenchSchema = `{"type": "object", "required": ["object", "id", "number", "status", "total", "currency"],
	"properties": {
		"object": {"type": "string"}, "id": {"type": "string", "minLength": 1}, "number": {"type": "string"},
		"status": {"enum": ["draft", "sent", "paid", "voided"]},
		"total": {"type": "string", "pattern": "^-?[0-9]+\\.[0-9]{2}$"}, "currency": {"type": "string", "minLength": 3, "maxLength": 3},
		"customer": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "nif": {"type": "string"}}},
		"lines": {"type": "array", "items": {"type": "object", "required": ["description", "amount"],
			"properties": {"description": {"type": "string"}, "amount": {"type": "string"}}}}}}`

// BenchObject matches BenchSchema, with fmt verbs for its number: about
// the size of a real invoice event's object.
const BenchObject = `{"object":"invoice","id":"inv_%08d","number":"FAC-2026-%08d","status":"sent","total":"1210.00","currency":"EUR",` +
	`"customer":{"name":"Hostal La Plaza SL","nif":"B12345674"},` +
	`"lines":[{"description":"Menú del día (x40)","amount":"800.00"},{"description":"Servicio de catering","amount":"200.00"}]}`

// BenchmarkRegistration measures registering events through the use
// cases, as POST /v1/events does (many producers at once, so that the
// store commits in groups), with no catalog, with a catalog of 50 types,
// and with 50 types that each have a schema: the cost of the catalog on
// the hot path. It reports the rate and the CPU time of this process per
// event. open returns a fresh, empty store.
//
//	go test -run '^$' -bench Registration -benchtime 20000x ./internal/sqlite
func BenchmarkRegistration(b *testing.B, open func(b *testing.B) driver.Driver) {
	resources := []string{"invoice", "quote", "payment", "customer", "product", "credit_note", "receipt", "expense", "order", "delivery_note"}
	verbs := []string{"created", "updated", "sent", "paid", "voided"}
	var names []string
	for _, r := range resources {
		for _, v := range verbs {
			names = append(names, r+"."+v)
		}
	}
	for _, tc := range []struct {
		name    string
		types   int
		schemas bool
	}{{"catalog=none", 0, false}, {"catalog=50", 50, false}, {"catalog=50_with_schemas", 50, true}} {
		b.Run(tc.name, func(b *testing.B) {
			s := Stack(b, open(b))
			a := MustCreateAccount(b, s, "")
			c := MustCreateCompany(b, s, a.ID)
			MustCreateEndpoint(b, s, NewCompanyEndpoint(c.ID, "*"))
			uc := UseCases(s, t0)
			for _, n := range names[:tc.types] {
				in := app.EventTypeInput{Name: n, Description: "When a " + n + " happens."}
				if tc.schemas {
					in.Schema = json.RawMessage(BenchSchema)
				}
				if _, err := uc.CreateEventType(b.Context(), admin, in); err != nil {
					b.Fatal(err)
				}
			}
			var n atomic.Int64
			b.SetParallelism(16) // producers per CPU: enough for the store's groups to fill
			b.ReportAllocs()
			b.ResetTimer()
			start, cpu := time.Now(), cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					in := app.EventInput{Type: names[int(i)%len(names)], CompanyID: c.ID, Object: json.RawMessage(fmt.Sprintf(BenchObject, i, i))}
					if _, _, err := uc.RegisterEvent(b.Context(), admin, in); err != nil {
						b.Error(err)
						return
					}
				}
			})
			// The machine's other load changes events/s; it does not change
			// the CPU time each registration costs this process (the
			// database server's, for PostgreSQL, is not counted).
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/event")
		})
	}
}
