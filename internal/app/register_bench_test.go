package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

// BenchmarkRegisterEvent registers events through the use case on SQLite
// with one endpoint to deliver to, from concurrent producers as the API
// does (so that the store commits them in groups), with tracing off (the
// default) and a request that carries a traceparent. ctx gives the
// registration its context; cfg is the App's, without its store.
func BenchmarkRegisterEvent(b *testing.B) {
	benchmarkRegisterEvent(b, app.Config{}, func(ctx context.Context, _ http.Header) context.Context { return ctx })
}

func benchmarkRegisterEvent(b *testing.B, cfg app.Config, ctx func(context.Context, http.Header) context.Context) {
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	stack := storetest.Stack(b, st)
	cfg.Store, cfg.Registrar = stack, stack
	a := app.New(cfg)
	account := storetest.MustCreateAccount(b, stack, "")
	company := storetest.MustCreateCompany(b, stack, account.ID)
	storetest.MustCreateEndpoint(b, stack, storetest.NewCompanyEndpoint(company.ID, "*"))
	in := app.EventInput{Type: "invoice.sent", CompanyID: company.ID,
		Object: json.RawMessage(`{"object": "invoice", "id": "inv_1", "number": "F-2026-0001", "total": "1210.00"}`)}
	header := http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	b.SetParallelism(8) // 16 producers on 2 cores: groups of several registrations
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, created, err := a.RegisterEvent(ctx(context.Background(), header), app.Admin(), in); err != nil || !created {
				b.Errorf("RegisterEvent: created %t, %v", created, err)
				return
			}
		}
	})
}
