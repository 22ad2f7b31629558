package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/storetest"
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
		round++
		deliverRound(t, st, c.ID, round, events)
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

// deliverRound registers events events of company, one at a time, and
// claims and records them as delivered, at round minutes past t0.
func deliverRound(t *testing.T, st storetest.Store, company string, round, events int) {
	t.Helper()
	for range events {
		mustRegister(t, st, newEvent(company, t0))
	}
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

// TestStore_HotPathPlansOnce: the statements that register events, claim
// and record attempts are planned once per connection, not at every run.
// PostgreSQL plans a prepared statement anew for its first five runs and
// then keeps a generic plan only if its estimated cost is not above the
// custom plans' average; for arrays of a few rows (a busy process's small
// groups, or any of several processes sharing the load) the custom plans
// looked cheaper, and the streaks' read and the bodies' insert were
// planned at every run: with three processes flat out, PostgreSQL spent
// 3 s of 15 planning (pg_stat_statements).
func TestStore_HotPathPlansOnce(t *testing.T) {
	schema := NewSchema(t)
	s, err := Open(t.Context(), testURL(), WithSearchPath(schema), WithMaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st := stackOf(t, s)
	c := mustCompany(t, st, mustAccount(t, st).ID)
	mustEndpoint(t, st, c.ID)
	for round := range 24 {
		deliverRound(t, st, c.ID, round+1, 1+round%3)
	}
	// The pool's one connection is the one that ran them.
	rows, err := s.pool.Query(t.Context(), `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
		WHERE generic_plans + custom_plans >= 20`)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for rows.Next() {
		var stmt string
		var generic, custom int64
		if err := rows.Scan(&stmt, &generic, &custom); err != nil {
			t.Fatal(err)
		}
		checked++
		if custom > 5 {
			t.Errorf("planned %d times in %d runs: %.160s", custom, generic+custom, stmt)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if checked < 5 {
		t.Fatalf("%d statements ran 20 times or more; want the hot path's", checked)
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

// TestStore_ListsUseIndexes: the history's lists, by every status and
// deep, the counts, a recovery's candidates, a chain's tail and the ends
// of an endpoint's pending deliveries never read the deliveries or the
// queue whole, under generic plans (those PostgreSQL keeps for a prepared
// statement from its sixth run), on tables past the size a whole read
// would win at. The lists by a status that no index of deliveries holds any longer
// (migration 0018) are read from their own indexes.
func TestStore_ListsUseIndexes(t *testing.T) {
	ctx := t.Context()
	schema := NewSchema(t)
	s, err := Open(ctx, testURL()+"&plan_cache_mode=force_generic_plan", WithSearchPath(schema), WithMaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st := storetest.Stack(t, bulkStore{s})
	f := storetest.LoadLists(t, st, 20_000)
	// Pending deliveries of the endpoint, one of them retrying, and a
	// chain of an ordered endpoint of the company.
	ordered := storetest.NewCompanyEndpoint(f.Company.ID, "invoice.*")
	ordered.Ordered = true
	ordered = storetest.MustCreateEndpoint(t, st, ordered)
	later := t0.Add(24 * time.Hour)
	var pending []*webhooks.Delivery
	var chain []*webhooks.Delivery
	for i := range 5 {
		ev := storetest.NewEvent(t, "invoice.sent", f.Company.ID, later.Add(time.Duration(i)*time.Second))
		ev.OrderingKey = "inv_1"
		for _, d := range storetest.MustRegisterEvent(t, st, ev) {
			if d.EndpointID == ordered.ID {
				chain = append(chain, d)
			} else {
				pending = append(pending, d)
			}
		}
	}
	for i, d := range chain[1:] {
		if d.WaitingFor != chain[i].ID {
			t.Errorf("chain delivery %d waits for %q, want the one before it, %s", i+1, d.WaitingFor, chain[i].ID)
		}
	}
	storetest.MustAttempt(t, st, pending[0].ID, later.Add(time.Minute), 503, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: later.Add(time.Hour)})
	// A backlog on another endpoint, due in a year, some of it in chains:
	// a queue past the size a whole read of it would win at.
	if _, err := s.pool.Exec(ctx, `WITH d AS (
			INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, attempt_count, next_attempt_at, manual, created, ordering_key)
			SELECT gen_random_uuid(), gen_random_uuid(), e.id, e.type, 'pending', 0, $1, false, e.created,
				CASE WHEN n % 10 = 0 THEN 'k' || n % 100 END
			FROM (SELECT id, type, created, row_number() OVER (ORDER BY id) AS n FROM events LIMIT 5000) e
			RETURNING id, endpoint_id, next_attempt_at, created, ordering_key)
		INSERT INTO queue (delivery_id, endpoint_id, due, since, created, ordering_key)
		SELECT id, endpoint_id, next_attempt_at, next_attempt_at, created, ordering_key FROM d`, later.AddDate(1, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}

	page := func(after string) webhooks.Page { return webhooks.Page{Limit: 20, StartingAfter: after} }
	list := func(name string, fl webhooks.DeliveryFilter, p webhooks.Page, want int) {
		t.Helper()
		l, err := s.ListDeliveries(ctx, fl, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(l.Data) != want {
			t.Errorf("%s: got %d deliveries, want %d", name, len(l.Data), want)
		}
		for _, d := range l.Data {
			if fl.Status != "" && d.Status != fl.Status {
				t.Errorf("%s: listed a delivery %s", name, d.Status)
			}
		}
	}
	ep := f.Endpoint.ID
	rare := f.Events[f.Rare[2]]
	deep := firstOf(t, s, ep, f.Events[100])
	failedDeep := firstOf(t, s, ep, rare)
	before := scans(t, s, schema)
	// One more of the chain: its registration reads the chain's tail.
	ev := storetest.NewEvent(t, "invoice.sent", f.Company.ID, later.Add(time.Minute))
	ev.OrderingKey = "inv_1"
	if d := storetest.MustRegisterOne(t, st, ev, ordered.ID); d.WaitingFor != chain[len(chain)-1].ID {
		t.Errorf("the chain's new delivery waits for %q, want its tail, %s", d.WaitingFor, chain[len(chain)-1].ID)
	}
	list("all", webhooks.DeliveryFilter{EndpointID: ep}, page(""), 20)
	list("all, deep", webhooks.DeliveryFilter{EndpointID: ep}, page(deep), 20)
	list("event", webhooks.DeliveryFilter{EndpointID: ep, EventID: f.Events[50]}, page(""), 1)
	list("pending", webhooks.DeliveryFilter{EndpointID: ep, Status: webhooks.DeliveryPending}, page(""), 6)
	list("pending, deep", webhooks.DeliveryFilter{EndpointID: ep, Status: webhooks.DeliveryPending}, page(pending[3].ID), 3)
	list("pending, event", webhooks.DeliveryFilter{EndpointID: ep, Status: webhooks.DeliveryPending, EventID: pending[2].EventID}, page(""), 1)
	list("delivered", webhooks.DeliveryFilter{EndpointID: ep, Status: webhooks.DeliveryDelivered}, page(""), 20)
	list("delivered, deep", webhooks.DeliveryFilter{EndpointID: ep, Status: webhooks.DeliveryDelivered}, page(deep), 20)
	list("failed_permanently", webhooks.DeliveryFilter{EndpointID: ep, Status: webhooks.DeliveryFailedPermanently}, page(""), 20)
	list("failed_permanently, deep", webhooks.DeliveryFilter{EndpointID: ep, Status: webhooks.DeliveryFailedPermanently}, page(failedDeep), 2)
	list("failed", webhooks.DeliveryFilter{EndpointID: ep, Status: webhooks.DeliveryFailed}, page(""), 0)
	if _, err := s.CountDeliveries(ctx, []string{ep}, later.Add(-time.Hour), time.Hour, driver.CountAll); err != nil {
		t.Fatal(err)
	}
	counts, err := s.CountDeliveries(ctx, []string{ep, ordered.ID}, t0, time.Hour, driver.CountRetrying)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 1 || counts[0].EndpointID != ep || counts[0].N != 1 {
		t.Errorf("retrying: got %+v, want the one retrying delivery", counts)
	}
	err = s.InTx(ctx, func(tx driver.Tx) error {
		cands, err := tx.RecoverCandidates(ctx, webhooks.RecoverFilter{EndpointID: ep, CreatedGTE: t0, CreatedLT: later, Statuses: webhooks.ResendableStatuses})
		if err != nil {
			return err
		}
		if len(cands) != len(f.Rare) {
			t.Errorf("recover candidates: got %d, want %d", len(cands), len(f.Rare))
		}
		if err := tx.EndPendingOf(ctx, ordered.ID, &webhooks.Erasure{CompanyID: f.Company.ID}, later); err != nil {
			return err
		}
		return tx.EndPending(ctx, ep, webhooks.ReasonEndpointDisabled, later)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The event logs, whose indexes end with created (migration 0019): the
	// ties of a microsecond are sorted as the page is read. With one
	// company in the table the planner reads its log through
	// events_created, filtered (before 0019 as after it); the test holds
	// that no page reads the table whole.
	events := func(name string, fl webhooks.EventFilter, p webhooks.Page, want int) {
		t.Helper()
		l, err := s.ListEvents(ctx, fl, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(l.Data) != want {
			t.Errorf("%s: got %d events, want %d", name, len(l.Data), want)
		}
	}
	company, account := f.Company.ID, f.Company.AccountID
	events("company", webhooks.EventFilter{CompanyID: company}, page(""), 20)
	events("company, deep", webhooks.EventFilter{CompanyID: company}, page(f.Events[100]), 20)
	events("company, type", webhooks.EventFilter{CompanyID: company, Type: "invoice.paid"}, page(""), 20)
	events("account, deep", webhooks.EventFilter{AccountID: account}, page(f.Events[100]), 20)
	events("account, type, deep", webhooks.EventFilter{AccountID: account, Type: "invoice.paid"}, page(rare), 2)
	after := scans(t, s, schema)
	for _, table := range []string{"deliveries", "queue", "events"} {
		if n := after[table] - before[table]; n != 0 {
			t.Errorf("%s was read whole %d times", table, n)
		}
	}
	for _, index := range []string{"deliveries_failed", "queue_endpoint", "queue_chain", "deliveries_endpoint"} {
		if after[index] == before[index] {
			t.Errorf("index %s was not used", index)
		}
	}
	list("pending, after the ends", webhooks.DeliveryFilter{EndpointID: ep, Status: webhooks.DeliveryPending}, page(""), 0)
	list("pending, ordered, after the ends", webhooks.DeliveryFilter{EndpointID: ordered.ID, Status: webhooks.DeliveryPending}, page(""), 0)
	list("failed, after the ends", webhooks.DeliveryFilter{EndpointID: ep, Status: webhooks.DeliveryFailed}, page(""), 6)
}

// firstOf returns the endpoint's delivery of the event.
func firstOf(t *testing.T, s *Store, endpointID, eventID string) string {
	t.Helper()
	l, err := s.ListDeliveries(t.Context(), webhooks.DeliveryFilter{EndpointID: endpointID, EventID: eventID}, webhooks.Page{Limit: 1})
	if err != nil || len(l.Data) != 1 {
		t.Fatalf("the delivery of event %s: %v", eventID, err)
	}
	return l.Data[0].ID
}

// scans returns how many times the deliveries, the queue and the events of schema
// were read whole, and each of their indexes scanned, by name, as s's one
// connection reports it.
func scans(t *testing.T, s *Store, schema string) map[string]int64 {
	t.Helper()
	conn := flushedStats(t, s)
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), `SELECT indexrelname, idx_scan FROM pg_stat_user_indexes
		WHERE schemaname = $1 AND relname IN ('deliveries', 'queue', 'events')
		UNION ALL SELECT relname, seq_scan FROM pg_stat_user_tables WHERE schemaname = $1 AND relname IN ('deliveries', 'queue', 'events')`, schema)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		out[name] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// flushedStats flushes the statistics of s's one connection and returns
// another connection, to read them.
func flushedStats(t *testing.T, s *Store) *pgx.Conn {
	t.Helper()
	if _, err := s.pool.Exec(t.Context(), `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	return connect(t)
}
