package catalog_test

import (
	"encoding/json"
	"fmt"
	"testing"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/catalog"
	"github.com/factuarea/webhooks/internal/storetest"
)

// BenchmarkCheckEvent is the catalog's share of a registration: a type
// without a schema (a map lookup) and one with a schema (decoding the
// object and validating it).
func BenchmarkCheckEvent(b *testing.B) {
	c := catalog.New(1, []*webhooks.EventType{
		{Name: "invoice.sent", Description: "x", Schema: json.RawMessage(storetest.BenchSchema)},
		{Name: "invoice.paid", Description: "x"},
	}, nil)
	obj := json.RawMessage(fmt.Sprintf(storetest.BenchObject, 1, 1)) // the one storetest.BenchmarkRegistration registers
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
