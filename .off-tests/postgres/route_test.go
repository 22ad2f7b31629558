package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// TestRoutes_AcrossProcesses: each process caches routes; a change made
// through another process (another store on the database) reaches this
// one's next registration, and the engine's bookkeeping of an endpoint's
// failures, which routes nothing, leaves the caches alone.
func TestRoutes_AcrossProcesses(t *testing.T) {
	schema := NewSchema(t)
	s, other := MustOpen(t, schema), MustOpen(t, schema)
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
		if err := s.pool.QueryRow(t.Context(), `SELECT version FROM routing_version`).Scan(&v); err != nil {
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
func MustFind(tb testing.TB, s *Store, id string) *webhooks.Endpoint {
	tb.Helper()
	e, err := s.FindEndpoint(tb.Context(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// TestRegisterGroup_ReadsEachRouteOnce: a group whose routes are not
// cached reads the route of each routeKey once, however many of its
// events share it (a cold group of one company's events read it once an
// event), and each event is still routed by its own key's.
func TestRegisterGroup_ReadsEachRouteOnce(t *testing.T) {
	schema := NewSchema(t)
	s := MustOpen(t, schema)
	a := mustAccount(t, s)
	c, other := mustCompany(t, s, a.ID), mustCompany(t, s, a.ID)
	ep, otherEp := mustEndpoint(t, s, c.ID), mustEndpoint(t, s, other.ID)
	unknown := webhooks.NewID()
	var group []*registration
	for _, company := range []string{c.ID, other.ID, c.ID, unknown, c.ID, other.ID, unknown, c.ID} {
		group = append(group, &registration{ev: newEvent(company, t0)})
	}

	cfg, err := pgx.ParseConfig(testURL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = schema
	batches := &batchRecorder{}
	cfg.Tracer = batches
	conn, err := pgx.ConnectConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := s.registerGroupOn(t.Context(), conn, group, false); err != nil {
		t.Fatalf("registerGroupOn: %v", err)
	}

	var rb pgx.Batch
	queueRoute(&rb, newEvent(c.ID, t0), &route{})
	reads := 0
	for _, q := range batches.queries {
		if q == rb.QueuedQueries[0].SQL {
			reads++
		}
	}
	if reads != 3 {
		t.Errorf("the group read %d routes, want 3 (one per company)", reads)
	}
	for i, r := range group {
		switch r.ev.CompanyID {
		case unknown:
			if webhooks.ErrorCode(r.err) != webhooks.EUNKNOWNCOMPANY {
				t.Errorf("registration %d of an unknown company: %v, want %s", i, r.err, webhooks.EUNKNOWNCOMPANY)
			}
		default:
			want := map[string]string{c.ID: ep.ID, other.ID: otherEp.ID}[r.ev.CompanyID]
			if r.err != nil || len(r.deliveries) != 1 || r.deliveries[0].EndpointID != want {
				t.Errorf("registration %d: %d deliveries (%v), %v; want one to %s", i, len(r.deliveries), r.deliveries, r.err, want)
			}
		}
	}
}

// batchRecorder records the statements of every batch a connection sends.
type batchRecorder struct{ queries []string }

func (r *batchRecorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	for _, q := range data.Batch.QueuedQueries {
		r.queries = append(r.queries, q.SQL)
	}
	return ctx
}

func (r *batchRecorder) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *batchRecorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (r *batchRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (r *batchRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
