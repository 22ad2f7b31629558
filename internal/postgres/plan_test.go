package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// TestStore_HotPathUsesIndexes checks that claiming and recording attempts
// never read the deliveries or the queue whole, on a connection whose
// plans were made while both were small: such plans read the tables whole
// as they grew, for every statement. (Registering events runs here too,
// but its whole reads showed only under the benchmark's load: this test
// passes without registration's setting.)
func TestStore_HotPathUsesIndexes(t *testing.T) {
	schema := NewSchema(t)
	// One connection, so that the plans the test grows a table under are
	// the ones made while it was small.
	s, err := Open(t.Context(), testURL(), WithSearchPath(schema), WithMaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st := stackOf(t, s)
	c := mustCompany(t, st, mustAccount(t, st).ID)
	mustEndpoint(t, st, c.ID)
	round := 0
	deliver := func(events int) {
		t.Helper()
		for range events {
			mustRegister(t, st, newEvent(c.ID, t0))
		}
		round++
		now := t0.Add(time.Duration(round) * time.Minute)
		token := fmt.Sprint("t", round)
		claims, err := st.ClaimDeliveries(t.Context(), webhooks.ClaimRequest{Now: now, Limit: events, Token: token, LeaseUntil: now.Add(time.Minute)})
		if err != nil || len(claims) != events {
			t.Fatalf("ClaimDeliveries: got %d claims, %v; want %d", len(claims), err, events)
		}
		var records []*webhooks.AttemptRecord
		for _, cl := range claims {
			records = append(records, &webhooks.AttemptRecord{
				Token:      token,
				Attempt:    &webhooks.Attempt{DeliveryID: cl.Delivery.ID, Number: 1, StartedAt: now, Duration: time.Millisecond, ResponseStatus: 200},
				Transition: webhooks.Transition{Status: webhooks.DeliveryDelivered},
			})
		}
		if err := st.RecordAttempts(t.Context(), records); err != nil {
			t.Fatal(err)
		}
	}
	// PostgreSQL keeps a statement's generic plan from its sixth run.
	for range 8 {
		deliver(1)
	}
	// The tables grow past what a whole read costs less than an index.
	deliver(400)
	before := seqScans(t, s, schema)
	deliver(100)
	if after := seqScans(t, s, schema); after != before {
		t.Errorf("the deliveries and the queue were read whole %d times", after-before)
	}
}

// seqScans returns how many times the deliveries and the queue of schema
// were read whole, as s's one connection reports it.
func seqScans(t *testing.T, s *Store, schema string) int64 {
	t.Helper()
	// A backend reports its counts when it goes idle, but at most once a
	// second unless told to.
	if _, err := s.pool.Exec(t.Context(), `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	conn := connect(t)
	defer conn.Close(context.Background())
	var n int64
	if err := conn.QueryRow(t.Context(), `SELECT coalesce(sum(seq_scan), 0) FROM pg_stat_user_tables
		WHERE schemaname = $1 AND relname IN ('deliveries', 'queue')`, schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
