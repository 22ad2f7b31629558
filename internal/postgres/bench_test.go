package postgres

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/storetest"
)

// seedBacklog inserts n due deliveries spread over endpoints endpoints,
// straight in SQL: RegisterEvent would make the setup slower than what is
// measured.
func seedBacklog(b *testing.B, s *Store, endpoints, n int) {
	b.Helper()
	st := stackOf(b, s)
	a := mustAccount(b, st)
	c := mustCompany(b, st, a.ID)
	var eps []string
	for range endpoints {
		eps = append(eps, mustEndpoint(b, st, c.ID).ID)
	}
	_, err := s.pool.Exec(context.Background(), `
		WITH ev AS (
			INSERT INTO events (id, type, api_version, livemode, test, account_id, company_id, object, created)
			SELECT gen_random_uuid(), 'invoice.sent', '2026-09-23', true, false, $1, $2, '{}', $3 FROM generate_series(1, $4)
			RETURNING id
		)
		, d AS (
			INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, attempt_count, next_attempt_at, manual, created)
			SELECT gen_random_uuid(), ($5::uuid[])[1 + rn % cardinality($5::uuid[])], id, 'invoice.sent', 'pending', 0,
				$3::timestamptz + rn * interval '1 millisecond', false, $3
			FROM (SELECT id, row_number() OVER () AS rn FROM ev) e
			RETURNING id, endpoint_id, next_attempt_at, created
		)
		INSERT INTO queue (delivery_id, endpoint_id, due, created) SELECT id, endpoint_id, next_attempt_at, created FROM d`,
		a.ID, c.ID, t0, n, eps)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.pool.Exec(context.Background(), `ANALYZE deliveries; ANALYZE queue`); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkClaimDeliveries claims batches of 100 from a backlog and records
// each batch delivered, as workers do (held claims stay in the queue's
// index until recorded, so claiming without recording would measure a
// scan over ever more held rows), by one claimer and by several stores at
// once, with and without a per-endpoint cap. claims/s counts the time spent
// in ClaimDeliveries only. Run with a fixed count:
//
//	go test -run '^$' -bench Claim -benchtime 200x ./internal/postgres
func BenchmarkClaimDeliveries(b *testing.B) {
	const batch = 100
	for _, cap := range []int{0, 1000} {
		for _, claimers := range []int{1, 4} {
			b.Run(fmt.Sprintf("cap=%d/claimers=%d", cap, claimers), func(b *testing.B) {
				schema := NewSchema(b)
				stores := make([]storetest.Store, claimers)
				var first *Store
				for i := range stores {
					pg := MustOpen(b, schema)
					if first == nil {
						first = pg
					}
					stores[i] = stackOf(b, pg)
				}
				// Extra rows: at the end, claimers left with the rows other
				// claimers hold as candidates would get short batches.
				seedBacklog(b, first, 50, (b.N+4*claimers)*batch)
				now := t0.Add(24 * time.Hour)
				var claimed, tokens, next, claimNanos atomic.Int64
				b.ResetTimer()
				start := time.Now()
				done := make(chan error, claimers)
				for _, s := range stores {
					go func() {
						done <- func() error {
							for next.Add(1) <= int64(b.N) {
								token := fmt.Sprint("t", tokens.Add(1))
								t := time.Now()
								cs, err := s.ClaimDeliveries(context.Background(), webhooks.ClaimRequest{
									Now: now, Limit: batch, Token: token, LeaseUntil: now.Add(time.Hour), PerEndpoint: cap,
								})
								if err != nil {
									return err
								}
								claimNanos.Add(int64(time.Since(t)))
								claimed.Add(int64(len(cs)))
								rs := make([]*webhooks.AttemptRecord, len(cs))
								for i, c := range cs {
									rs[i] = &webhooks.AttemptRecord{Token: token, Attempt: &webhooks.Attempt{
										DeliveryID: c.Delivery.ID, Number: 1, StartedAt: now, Duration: 30 * time.Millisecond, ResponseStatus: 200, ResponseBody: "ok",
									}, Transition: webhooks.Transition{Status: webhooks.DeliveryDelivered}}
								}
								if err := s.RecordAttempts(context.Background(), rs); err != nil {
									return err
								}
							}
							return nil
						}()
					}()
				}
				for range claimers {
					if err := <-done; err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				elapsed := time.Since(start)
				// claims/s: what one claimer's time in ClaimDeliveries buys;
				// cycles/s: claimed and recorded, wall clock, all claimers.
				b.ReportMetric(float64(claimed.Load())/(time.Duration(claimNanos.Load()).Seconds()/float64(claimers)), "claims/s")
				b.ReportMetric(float64(claimed.Load())/elapsed.Seconds(), "cycles/s")
				b.ReportMetric(float64(claimed.Load())/float64(b.N), "claims/batch")
			})
		}
	}
}

// BenchmarkRecordAttempts records batches of 100 attempts.
func BenchmarkRecordAttempts(b *testing.B) {
	const batch = 100
	pg := MustOpenFresh(b)
	seedBacklog(b, pg, 50, b.N*batch)
	s := stackOf(b, pg)
	now := t0.Add(24 * time.Hour)
	var batches [][]*webhooks.AttemptRecord
	for i := range b.N {
		token := fmt.Sprint("t", i)
		cs, err := s.ClaimDeliveries(context.Background(), webhooks.ClaimRequest{Now: now, Limit: batch, Token: token, LeaseUntil: now.Add(time.Hour)})
		if err != nil {
			b.Fatal(err)
		}
		var rs []*webhooks.AttemptRecord
		for _, c := range cs {
			rs = append(rs, &webhooks.AttemptRecord{Token: token, Attempt: &webhooks.Attempt{
				DeliveryID: c.Delivery.ID, Number: 1, StartedAt: now, Duration: 30 * time.Millisecond, ResponseStatus: 200, ResponseBody: "ok",
			}, Transition: webhooks.Transition{Status: webhooks.DeliveryDelivered}})
		}
		batches = append(batches, rs)
	}
	b.ResetTimer()
	start := time.Now()
	for _, rs := range batches {
		if err := s.RecordAttempts(context.Background(), rs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "attempts/s")
}

// BenchmarkRegistration measures registration with and without an
// event-type catalog (see storetest.BenchmarkRegistration).
func BenchmarkRegistration(b *testing.B) {
	storetest.BenchmarkRegistration(b, func(b *testing.B) driver.Driver { return MustOpenFresh(b) })
}
