package postgres

import (
	"context"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/storetest"
)

// recordedColumns are the columns of deliveries an attempt's record
// writes (queueRecords).
var recordedColumns = []string{"status", "reason", "attempt_count", "next_attempt_at", "last_response_status", "manual"}

// TestStore_RecordsAreHOT: recording an attempt, the one update a
// delivery's row has in its life (delivered at its first attempt, or
// pending again for a retry and then delivered), is a HOT update
// (migration 0018): no index of deliveries uses a column the record
// writes, so the new version stays on its page without an entry in any
// index.
func TestStore_RecordsAreHOT(t *testing.T) {
	schema := NewSchema(t)
	// One connection, whose statistics the test flushes.
	s, err := Open(t.Context(), testURL(), WithSearchPath(schema), WithMaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })

	conn := connect(t)
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), `SELECT i.indexrelid::regclass::text, a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE i.indrelid = format('%I.deliveries', $1::text)::regclass AND a.attname = ANY ($2::text[])
		AND (a.attnum = ANY (i.indkey::int2[])
			OR coalesce(pg_get_expr(i.indexprs, i.indrelid), '') ~ ('\m' || a.attname || '\M')
			OR coalesce(pg_get_expr(i.indpred, i.indrelid), '') ~ ('\m' || a.attname || '\M'))
		ORDER BY 1, 2`, schema, recordedColumns)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var index, column string
		if err := rows.Scan(&index, &column); err != nil {
			t.Fatal(err)
		}
		t.Errorf("index %s uses %s, which an attempt's record writes", index, column)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	st := stackOf(t, s)
	c := mustCompany(t, st, mustAccount(t, st).ID)
	mustEndpoint(t, st, c.ID)
	const n = 10
	for i := range 2 * n {
		mustRegister(t, st, newEvent(c.ID, t0.Add(time.Duration(i)*time.Millisecond)))
	}
	record := func(now time.Time, want int, outcome func(i int) (int, webhooks.Transition)) {
		t.Helper()
		claims := storetest.MustClaim(t, st, now, 100)
		if len(claims) != want {
			t.Fatalf("claimed at %s: got %d, want %d", now, len(claims), want)
		}
		var records []*webhooks.AttemptRecord
		for i, cl := range claims {
			status, tr := outcome(i)
			records = append(records, storetest.NewRecord(cl, now, status, tr))
		}
		if err := st.RecordAttempts(t.Context(), records); err != nil {
			t.Fatal(err)
		}
	}
	first, retry := t0.Add(time.Minute), t0.Add(time.Hour)
	delivered := webhooks.Transition{Status: webhooks.DeliveryDelivered}
	record(first, 2*n, func(i int) (int, webhooks.Transition) {
		if i%2 == 0 {
			return 200, delivered
		}
		return 503, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: retry}
	})
	record(retry, n, func(int) (int, webhooks.Transition) { return 200, delivered })

	if _, err := s.pool.Exec(t.Context(), `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	var upd, hot int64
	if err := conn.QueryRow(t.Context(), `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
		WHERE schemaname = $1 AND relname = 'deliveries'`, schema).Scan(&upd, &hot); err != nil {
		t.Fatal(err)
	}
	if upd != 3*n || hot != upd {
		t.Errorf("deliveries: %d updates, %d of them HOT; want %d, all HOT (one per record)", upd, hot, 3*n)
	}
}
