package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/factuarea/webhooks"
)

// claimAll runs workers claimers per store, in parallel, until want
// deliveries are claimed, and returns who claimed what. Claims never lapse
// during the test.
func claimAll(t *testing.T, stores []*Store, workers, limit, perEndpoint, want int) map[string]string {
	t.Helper()
	var (
		mu      sync.Mutex
		owner   = map[string]string{} // delivery id → token
		total   atomic.Int64
		wg      sync.WaitGroup
		errs    = make(chan error, len(stores)*workers)
		ctx, cn = context.WithTimeout(t.Context(), 60*time.Second)
	)
	defer cn()
	now := t0.Add(time.Hour)
	for si, s := range stores {
		for w := range workers {
			wg.Go(func() {
				for n := 0; total.Load() < int64(want); n++ {
					token := fmt.Sprintf("s%d-w%d-%d", si, w, n)
					claims, err := s.ClaimDeliveries(ctx, webhooks.ClaimRequest{
						Now: now, Limit: limit, Token: token, LeaseUntil: now.Add(time.Hour), PerEndpoint: perEndpoint,
					})
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					for _, c := range claims {
						if prev, ok := owner[c.Delivery.ID]; ok {
							errs <- fmt.Errorf("delivery %s claimed by %s and again by %s", c.Delivery.ID, prev, token)
						}
						owner[c.Delivery.ID] = token
						if c.Token != token || c.Endpoint == nil || c.Endpoint.ID != c.Delivery.EndpointID || c.Endpoint.Secret == "" {
							errs <- fmt.Errorf("claim of %s: token %q, endpoint %+v", c.Delivery.ID, c.Token, c.Endpoint)
						}
					}
					mu.Unlock()
					total.Add(int64(len(claims)))
					if len(claims) == 0 {
						// The rest may be locked by another claimer's
						// transaction for a moment.
						time.Sleep(time.Millisecond)
					}
					if ctx.Err() != nil {
						errs <- fmt.Errorf("timed out with %d of %d claimed", total.Load(), want)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	return owner
}

// TestStore_ClaimDeliveries_Concurrent claims one backlog from several
// stores (pools, as separate processes would have) with several claimers
// each: no delivery is claimed twice, and all are claimed.
func TestStore_ClaimDeliveries_Concurrent(t *testing.T) {
	schema := NewSchema(t)
	stores := []*Store{MustOpen(t, schema), MustOpen(t, schema), MustOpen(t, schema)}
	const endpoints, events = 20, 100
	backlog(t, stores[0], endpoints, events)
	owner := claimAll(t, stores, 4, 50, 0, endpoints*events)
	if len(owner) != endpoints*events {
		t.Errorf("claimed: got %d deliveries, want %d", len(owner), endpoints*events)
	}
	// Everything is held: nothing more to claim.
	claims, err := stores[1].ClaimDeliveries(t.Context(), webhooks.ClaimRequest{
		Now: t0.Add(time.Hour), Limit: 100, Token: "late", LeaseUntil: t0.Add(2 * time.Hour),
	})
	if err != nil || len(claims) != 0 {
		t.Errorf("claim after all were claimed: got %d claims, %v; want none", len(claims), err)
	}
}

// TestStore_ClaimDeliveries_ConcurrentCap checks that the per-endpoint cap
// holds across stores claiming at once: each endpoint ends with exactly
// the cap, not one more.
func TestStore_ClaimDeliveries_ConcurrentCap(t *testing.T) {
	schema := NewSchema(t)
	stores := []*Store{MustOpen(t, schema), MustOpen(t, schema), MustOpen(t, schema)}
	const endpoints, events, limit = 10, 50, 7
	backlog(t, stores[0], endpoints, events)
	owner := claimAll(t, stores, 4, 25, limit, endpoints*limit)
	if len(owner) != endpoints*limit {
		t.Errorf("claimed: got %d deliveries, want %d", len(owner), endpoints*limit)
	}
	conn := connect(t)
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), `SELECT endpoint_id::text, count(*) FROM `+schema+`.queue WHERE lease_token IS NOT NULL GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id string
		var held int
		if err := rows.Scan(&id, &held); err != nil {
			t.Fatal(err)
		}
		n++
		if held != limit {
			t.Errorf("endpoint %s holds %d claims, want the cap, %d", id, held, limit)
		}
	}
	if n != endpoints {
		t.Errorf("endpoints with claims: got %d, want %d", n, endpoints)
	}
	// More claims find every endpoint at its cap.
	claims, err := stores[2].ClaimDeliveries(t.Context(), webhooks.ClaimRequest{
		Now: t0.Add(time.Hour), Limit: 100, Token: "late", LeaseUntil: t0.Add(2 * time.Hour), PerEndpoint: limit,
	})
	if err != nil || len(claims) != 0 {
		t.Errorf("claim with every endpoint at its cap: got %d claims, %v; want none", len(claims), err)
	}
}

// TestStore_ClaimDeliveries_CapSkipsBacklog checks that one endpoint's deep
// backlog, due first, does not keep the others' deliveries out of a batch.
func TestStore_ClaimDeliveries_CapSkipsBacklog(t *testing.T) {
	s := MustOpenFresh(t)
	a := mustAccount(t, s)
	busy, quiet := mustCompany(t, s, a.ID), mustCompany(t, s, a.ID)
	busyEP, quietEP := mustEndpoint(t, s, busy.ID), mustEndpoint(t, s, quiet.ID)
	for i := range 300 {
		mustRegister(t, s, newEvent(busy.ID, t0.Add(time.Duration(i)*time.Millisecond)))
	}
	mustRegister(t, s, newEvent(quiet.ID, t0.Add(time.Second)))
	now := t0.Add(time.Hour)
	for round := range 3 {
		claims, err := s.ClaimDeliveries(t.Context(), webhooks.ClaimRequest{
			Now: now, Limit: 10, Token: fmt.Sprint("t", round), LeaseUntil: now.Add(time.Minute), PerEndpoint: 2,
		})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, c := range claims {
			got[c.Endpoint.ID]++
		}
		want := map[string]int{}
		if round == 0 {
			want = map[string]int{busyEP.ID: 2, quietEP.ID: 1}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("round %d: got %v claims per endpoint, want %v", round, got, want)
		}
	}
}

// TestStore_RecordAttempts_Fenced checks that an attempt whose claim lapsed
// and was taken by another token is not recorded, and the new holder's is.
func TestStore_RecordAttempts_Fenced(t *testing.T) {
	s := MustOpenFresh(t)
	backlog(t, s, 1, 1)
	claim := func(token string, now time.Time) *webhooks.Claim {
		t.Helper()
		claims, err := s.ClaimDeliveries(t.Context(), webhooks.ClaimRequest{Now: now, Limit: 10, Token: token, LeaseUntil: now.Add(time.Minute)})
		if err != nil || len(claims) != 1 {
			t.Fatalf("ClaimDeliveries(%s): got %d claims, %v; want 1", token, len(claims), err)
		}
		return claims[0]
	}
	first := claim("first", t0)
	claim("second", t0.Add(2*time.Minute)) // the first lapsed
	record := func(token string, n, status int) *webhooks.AttemptRecord {
		return &webhooks.AttemptRecord{
			Token:      token,
			Attempt:    &webhooks.Attempt{DeliveryID: first.Delivery.ID, Number: n, StartedAt: t0.Add(2 * time.Minute), Duration: 50 * time.Millisecond, ResponseStatus: status, ResponseBody: "\xff\x00binary", Error: "quoted \xff\x00"},
			Transition: webhooks.Transition{Status: webhooks.DeliveryDelivered},
		}
	}
	// Both in one batch, the stale one first; then the stale one again.
	if err := s.RecordAttempts(t.Context(), []*webhooks.AttemptRecord{record("first", 1, 500), record("second", 1, 200), record("second", 2, 201)}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordAttempts(t.Context(), []*webhooks.AttemptRecord{record("first", 1, 500)}); err != nil {
		t.Fatal(err)
	}
	d, err := s.FindDelivery(t.Context(), first.Delivery.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != webhooks.DeliveryDelivered || d.AttemptCount != 1 || d.LastResponseStatus != 200 || len(d.Attempts) != 1 {
		t.Fatalf("delivery: got status %s, %d attempts (%d recorded), last %d; want delivered, 1, 200", d.Status, d.AttemptCount, len(d.Attempts), d.LastResponseStatus)
	}
	// The body is kept byte for byte; the error, text, is made valid.
	if a := d.Attempts[0]; a.ResponseStatus != 200 || a.ResponseBody != "\xff\x00binary" || a.Duration != 50*time.Millisecond || a.Error != "quoted \uFFFD\uFFFD" {
		t.Errorf("attempt: got %+v", a)
	}
}

// TestQueueHealth_EngineSettings: the health transaction commits as the
// engine's others do, without waiting for the WAL flush: its statement is
// queued between BEGIN, with the engine's settings, and COMMIT. Queued
// after the record's COMMIT alone, it ran as an implicit transaction of
// its own, which waited for the flush.
func TestQueueHealth_EngineSettings(t *testing.T) {
	rec := &webhooks.AttemptRecord{EndpointID: webhooks.NewID(),
		Attempt: &webhooks.Attempt{DeliveryID: webhooks.NewID(), StartedAt: t0, ResponseStatus: 500}}
	var b pgx.Batch
	queueHealth(&b, []*webhooks.AttemptRecord{rec})
	var got []string
	for _, q := range b.QueuedQueries {
		got = append(got, q.SQL)
	}
	if len(got) != 5 || got[0] != `BEGIN` || got[1] != qLazyCommit || got[2] != qIndexOnly ||
		!strings.Contains(got[3], "UPDATE endpoints") || got[4] != `COMMIT` {
		t.Errorf("the health batch: got %q, want BEGIN, the engine's settings, the update, COMMIT", got)
	}
}
