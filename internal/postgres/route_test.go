package postgres

import (
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/storetest"
)

// TestRoutes_AcrossProcesses: each process caches routes; a change made
// through another process (another store on the database) reaches this
// one's next registration, and the engine's bookkeeping of an endpoint's
// failures, which routes nothing, leaves the caches alone.
func TestRoutes_AcrossProcesses(t *testing.T) {
	schema := NewSchema(t)
	pg := MustOpen(t, schema)
	s, other := stackOf(t, pg), stackOf(t, MustOpen(t, schema))
	a := mustAccount(t, s)
	c := mustCompany(t, s, a.ID)
	ep := mustEndpoint(t, s, c.ID)
	register := func(what string, want string) {
		t.Helper()
		ds := mustRegister(t, s, newEvent(c.ID, t0))
		if len(ds) != 1 || ds[0].Status != want {
			t.Fatalf("%s: %d deliveries (%v), want one %s", what, len(ds), ds, want)
		}
	}
	register("cached", webhooks.DeliveryPending)
	version := func() int64 {
		t.Helper()
		var v int64
		if err := pg.pool.QueryRow(t.Context(), `SELECT version FROM routing_version`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := version()
	// A failed attempt recorded: the endpoint's streak changes, routing
	// does not.
	d := mustRegister(t, s, newEvent(c.ID, t0))[0]
	claims, err := s.ClaimDeliveries(t.Context(), webhooks.ClaimRequest{Now: t0, Limit: 10, Token: "t", LeaseUntil: t0.Add(time.Minute)})
	if err != nil || len(claims) == 0 {
		t.Fatalf("ClaimDeliveries: %d claims, %v", len(claims), err)
	}
	var records []*webhooks.AttemptRecord
	for _, cl := range claims {
		records = append(records, &webhooks.AttemptRecord{Token: "t", EndpointID: ep.ID,
			Attempt:    &webhooks.Attempt{DeliveryID: cl.Delivery.ID, Number: 1, StartedAt: t0, ResponseStatus: 500},
			Transition: webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: t0.Add(time.Minute)}})
	}
	if err := s.RecordAttempts(t.Context(), records); err != nil {
		t.Fatal(err)
	}
	if got := MustFind(t, s, d.EndpointID); got.FailureStreak == 0 {
		t.Fatalf("the endpoint's streak after a failed attempt: %d", got.FailureStreak)
	}
	if v := version(); v != before {
		t.Errorf("routing_version moved from %d to %d for an endpoint's failure", before, v)
	}

	disabled := string(webhooks.EndpointDisabled)
	ref := app.EndpointRef{Owner: app.CompanyOwner(c.ID), ID: ep.ID}
	if _, err := useCases(other).UpdateEndpoint(t.Context(), app.Admin(), ref, webhooks.EndpointUpdate{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	register("disabled through another process", webhooks.DeliveryFailed)
	enabled := string(webhooks.EndpointEnabled)
	if _, err := useCases(other).UpdateEndpoint(t.Context(), app.Admin(), ref, webhooks.EndpointUpdate{Status: &enabled}); err != nil {
		t.Fatal(err)
	}
	register("enabled again through another process", webhooks.DeliveryPending)
	if v := version(); v != before+2 {
		t.Errorf("routing_version: got %d after two changes, want %d", v, before+2)
	}
}

// MustFind returns the endpoint id as stored.
func MustFind(tb testing.TB, s storetest.Store, id string) *webhooks.Endpoint {
	tb.Helper()
	e, err := s.FindEndpoint(tb.Context(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}
