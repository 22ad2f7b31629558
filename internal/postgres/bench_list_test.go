package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/storetest"
)

// bulkStore is a Store that loads benchmark rows with COPY
// (storetest.BulkLoader).
type bulkStore struct{ *Store }

func (s bulkStore) BulkLoad(ctx context.Context, events []*webhooks.Event, deliveries []*webhooks.Delivery) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"events"},
		[]string{"id", "type", "api_version", "livemode", "test", "correlation_id", "account_id", "company_id", "object", "created"},
		pgx.CopyFromSlice(len(events), func(i int) ([]any, error) {
			ev := events[i]
			return []any{ev.ID, ev.Type, ev.APIVersion, ev.Livemode, ev.Test, nullString(ev.CorrelationID),
				ev.AccountID, nullString(ev.CompanyID), []byte(ev.Object), ts(ev.Created)}, nil
		}))
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	// Each event's bodies once, as queueDeliveries stores them.
	numbers, bodies := storetest.BodyNumbers(deliveries)
	bodyN := make([]any, len(deliveries))
	for i, n := range numbers {
		if n > 0 {
			bodyN[i] = int16(n)
		}
	}
	for _, row := range bodies {
		row[1] = int16(row[1].(int))
	}
	if _, err = tx.CopyFrom(ctx, pgx.Identifier{"bodies"}, []string{"event_id", "n", "body"}, pgx.CopyFromRows(bodies)); err != nil {
		return fmt.Errorf("bodies: %w", err)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"deliveries"},
		[]string{"id", "endpoint_id", "event_id", "event_type", "relationship", "replay_of", "status", "reason", "attempt_count",
			"next_attempt_at", "last_response_status", "manual", "body_n", "created"},
		pgx.CopyFromSlice(len(deliveries), func(i int) ([]any, error) {
			d := deliveries[i]
			var last any
			if d.LastResponseStatus != 0 {
				last = int32(d.LastResponseStatus)
			}
			return []any{d.ID, d.EndpointID, d.EventID, d.EventType, nullString(string(d.Relationship)),
				nullString(d.ReplayOf), d.Status, nullString(d.Reason), int32(d.AttemptCount), ts(d.NextAttemptAt),
				last, d.Manual, bodyN[i], ts(d.Created)}, nil
		}))
	if err != nil {
		return fmt.Errorf("deliveries: %w", err)
	}
	return tx.Commit(ctx)
}

// BenchmarkLists shows that a list page costs the same at 10 thousand and
// at a million rows (after ANALYZE, as autovacuum would run it).
//
//	go test -run '^$' -bench Lists -benchtime 200x ./internal/postgres
func BenchmarkLists(b *testing.B) {
	for _, rows := range storetest.BenchmarkRows(b) {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			if rows > 100_000 && testing.Short() {
				b.Skip("a million rows: not with -short")
			}
			storetest.Benchmark(b, func(b *testing.B) driver.Driver {
				return analyzed{bulkStore{MustOpenFresh(b)}}
			}, rows)
		})
	}
}

// analyzed runs ANALYZE after each bulk load.
type analyzed struct{ bulkStore }

func (s analyzed) BulkLoad(ctx context.Context, events []*webhooks.Event, deliveries []*webhooks.Delivery) error {
	if err := s.bulkStore.BulkLoad(ctx, events, deliveries); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `ANALYZE events; ANALYZE deliveries; ANALYZE bodies`)
	return err
}
