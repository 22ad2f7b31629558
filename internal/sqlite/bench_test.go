package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/storetest"
)

// bulkStore is a Store that loads benchmark rows with multi-row INSERTs in
// one transaction per call (storetest.BulkLoader).
type bulkStore struct{ *Store }

func (s bulkStore) BulkLoad(ctx context.Context, events []*webhooks.Event, deliveries []*webhooks.Delivery) error {
	// Benchmark data need not survive a crash: no fsync, and a cache that
	// holds the batch's index pages.
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = OFF`); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = -262144`); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// At most 32766 variables a statement: 500 rows of up to 17 columns.
	const rows = 500
	insert := func(table, cols string, n int, args func(i int) []any) error {
		ncol := strings.Count(cols, ",") + 1
		row := "(" + strings.TrimSuffix(strings.Repeat("?, ", ncol), ", ") + ")"
		query := func(n int) string {
			return `INSERT INTO ` + table + ` (` + cols + `) VALUES ` + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
		}
		// Parsing a 500-row statement costs as much as running it: the
		// full chunks share one prepared statement.
		full, err := tx.PrepareContext(ctx, query(rows))
		if err != nil {
			return err
		}
		defer full.Close()
		for lo := 0; lo < n; lo += rows {
			hi := min(lo+rows, n)
			vals := make([]any, 0, (hi-lo)*ncol)
			for i := lo; i < hi; i++ {
				vals = append(vals, args(i)...)
			}
			if hi-lo == rows {
				_, err = full.ExecContext(ctx, vals...)
			} else {
				_, err = tx.ExecContext(ctx, query(hi-lo), vals...)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
		return nil
	}
	err = insert("events", eventInsertCols, len(events), func(i int) []any { return eventArgs(events[i]) })
	if err != nil {
		return err
	}
	// Each event's bodies once, as insertBody stores them.
	numbers, bodies := storetest.BodyNumbers(deliveries)
	bodyN := make([]sql.NullInt64, len(deliveries))
	for i, n := range numbers {
		bodyN[i] = sql.NullInt64{Int64: int64(n), Valid: n > 0}
	}
	err = insert("bodies", "event_id, n, body", len(bodies), func(i int) []any {
		return []any{dbID(bodies[i][0].(string)), bodies[i][1], bodies[i][2]}
	})
	if err != nil {
		return err
	}
	err = insert("deliveries", deliveryInsertCols, len(deliveries), func(i int) []any { return deliveryArgs(deliveries[i], bodyN[i]) })
	if err != nil {
		return err
	}
	return tx.Commit()
}

// BenchmarkLists shows that a list page costs the same at 10 thousand and
// at a million rows: every list query is served by an index, in order.
//
//	go test -run '^$' -bench Lists -benchtime 200x ./internal/sqlite
func BenchmarkLists(b *testing.B) {
	for _, rows := range storetest.BenchmarkRows(b) {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			if rows > 100_000 && testing.Short() {
				b.Skip("a million rows: not with -short")
			}
			storetest.Benchmark(b, func(b *testing.B) driver.Driver {
				s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				return bulkStore{s}
			}, rows)
		})
	}
}

// BenchmarkRegistration measures registration with and without an
// event-type catalog (see storetest.BenchmarkRegistration).
func BenchmarkRegistration(b *testing.B) {
	storetest.BenchmarkRegistration(b, func(b *testing.B) driver.Driver {
		s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	})
}
