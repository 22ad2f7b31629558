package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/storetest"
)

// claimAll runs workers claimers per store, in parallel, until want
// deliveries are claimed, and returns who claimed what. Claims never lapse
// during the test.
func claimAll(t *testing.T, stores []storetest.Store, workers, limit, perEndpoint, want int) map[string]string {
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
	stores := openStacks(t, 3)
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
	stores := []storetest.Store{stackOf(t, MustOpen(t, schema)), stackOf(t, MustOpen(t, schema)), stackOf(t, MustOpen(t, schema))}
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
	s := stackOf(t, MustOpenFresh(t))
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
	s := stackOf(t, MustOpenFresh(t))
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

// TestClaim_HealthInItsTransaction: an endpoint's streak is written in
// the transaction that records the attempt and claims: when writing it
// fails, the claim fails whole, and its deliveries are claimed again at
// once. The streak used to be written in a transaction of its own, sent
// after the claim's COMMIT: when it failed, the claim reported an error
// for claims that had committed, and those deliveries sat until their
// lease lapsed.
func TestClaim_HealthInItsTransaction(t *testing.T) {
	schema := NewSchema(t)
	s := stackOf(t, MustOpen(t, schema))
	_, eps := backlog(t, s, 1, 3)
	now := t0.Add(time.Hour)
	first, err := s.ClaimDeliveries(t.Context(), webhooks.ClaimRequest{Now: now, Limit: 1, Token: "first", LeaseUntil: now.Add(time.Hour)})
	if err != nil || len(first) != 1 {
		t.Fatalf("first claim: %d claims, %v", len(first), err)
	}
	rec := storetest.NewRecord(first[0], now, 500, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: now.Add(time.Hour)})
	conn := connect(t)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), `CREATE FUNCTION `+schema+`.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
		CREATE TRIGGER refuse BEFORE UPDATE OF failure_streak ON `+schema+`.endpoints FOR EACH ROW EXECUTE FUNCTION `+schema+`.refuse()`); err != nil {
		t.Fatal(err)
	}
	claims, err := s.ClaimDeliveries(t.Context(), webhooks.ClaimRequest{Now: now, Limit: 10, Token: "second", LeaseUntil: now.Add(time.Hour),
		Records: []*webhooks.AttemptRecord{rec}})
	if err == nil {
		t.Fatalf("the claim whose streak cannot be written: got %d claims and no error", len(claims))
	}
	if _, err := conn.Exec(t.Context(), `DROP TRIGGER refuse ON `+schema+`.endpoints`); err != nil {
		t.Fatal(err)
	}
	again, err := s.ClaimDeliveries(t.Context(), webhooks.ClaimRequest{Now: now, Limit: 10, Token: "third", LeaseUntil: now.Add(time.Hour),
		Records: []*webhooks.AttemptRecord{rec}})
	if err != nil || len(again) != 2 {
		t.Fatalf("the claim after: %d claims, %v; want the two the failed claim did not keep", len(again), err)
	}
	if ep := storetest.MustFindEndpoint(t, s, eps[0].ID); ep.FailureStreak != 1 {
		t.Errorf("streak: got %d, want 1 (the failure, recorded once)", ep.FailureStreak)
	}
}

// openStacks opens n stores on one new schema, as n processes would.
func openStacks(t *testing.T, n int) []storetest.Store {
	schema := NewSchema(t)
	out := make([]storetest.Store, n)
	for i := range out {
		out[i] = stackOf(t, MustOpen(t, schema))
	}
	return out
}
