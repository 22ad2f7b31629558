package postgres

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/storetest"
)

// t0 is the tests' clock: a fixed time with no sub-millisecond part.
var t0 = time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)

var serial atomic.Int64

// stackOf returns s under a queue core, as the service runs it.
func stackOf(tb testing.TB, s *Store) storetest.Store { return storetest.Stack(tb, s) }

// useCases are the use cases on s, at t0.
func useCases(s storetest.Store) *app.App {
	return app.New(app.Config{Store: s, Registrar: s, Now: func() time.Time { return t0 }})
}

func mustAccount(tb testing.TB, s storetest.Store) *webhooks.Account {
	tb.Helper()
	a, err := useCases(s).CreateAccount(tb.Context(), app.Admin(), fmt.Sprint("Account ", serial.Add(1)), "")
	if err != nil {
		tb.Fatalf("CreateAccount: %v", err)
	}
	return a
}

func mustCompany(tb testing.TB, s storetest.Store, accountID string) *webhooks.Company {
	tb.Helper()
	c, err := useCases(s).CreateCompany(tb.Context(), app.Admin(), accountID, storetest.NewNIF(), "Company")
	if err != nil {
		tb.Fatalf("CreateCompany: %v", err)
	}
	return c
}

func mustEndpoint(tb testing.TB, s storetest.Store, companyID string) *webhooks.Endpoint {
	tb.Helper()
	e, err := useCases(s).CreateEndpoint(tb.Context(), app.Admin(), app.CompanyOwner(companyID), app.EndpointInput{
		URL: "https://example.com/hook", EnabledEvents: []string{"*"},
	})
	if err != nil {
		tb.Fatalf("CreateEndpoint: %v", err)
	}
	return e.Endpoint
}

func newEvent(companyID string, created time.Time) *webhooks.Event {
	return &webhooks.Event{
		ID: webhooks.NewID(), Type: "invoice.sent", APIVersion: webhooks.LatestAPIVersion, Created: created,
		Livemode: true, CompanyID: companyID, Object: []byte(`{"object":"invoice","id":"inv_1","total":"12.10"}`),
	}
}

func mustRegister(tb testing.TB, s storetest.Store, ev *webhooks.Event) []*webhooks.Delivery {
	tb.Helper()
	_, ds, _, err := s.RegisterEvent(tb.Context(), ev, nil)
	if err != nil {
		tb.Fatalf("RegisterEvent: %v", err)
	}
	return ds
}

// backlog creates a company with endpoints endpoints and events events, so
// endpoints*events due deliveries.
func backlog(tb testing.TB, s storetest.Store, endpoints, events int) (*webhooks.Company, []*webhooks.Endpoint) {
	tb.Helper()
	a := mustAccount(tb, s)
	c := mustCompany(tb, s, a.ID)
	var eps []*webhooks.Endpoint
	for range endpoints {
		eps = append(eps, mustEndpoint(tb, s, c.ID))
	}
	for i := range events {
		if ds := mustRegister(tb, s, newEvent(c.ID, t0.Add(time.Duration(i)*time.Millisecond))); len(ds) != endpoints {
			tb.Fatalf("RegisterEvent: got %d deliveries, want %d", len(ds), endpoints)
		}
	}
	return c, eps
}
