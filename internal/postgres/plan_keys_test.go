package postgres

import (
	"context"
	"strconv"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

// TestStore_HashKeyedListsReadOnePage checks that a list whose index
// begins with a hash of its filter (migrations 0020 and 0022) reads about
// a page of the index's entries, among hundreds of endpoints and
// companies: the planner, which without the dependency statistics took
// the hash's equality and the column's own for independent conditions,
// expected one row and read all of them (a bitmap scan and a sort) to
// return 20.
func TestStore_HashKeyedListsReadOnePage(t *testing.T) {
	ctx := t.Context()
	schema := NewSchema(t)
	// One connection: the statistics flushed are the lists'.
	s, err := Open(ctx, testURL(), WithSearchPath(schema), WithMaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	const (
		account   = "01900000-0000-7000-8000-000000000001"
		companies = 300
		perScope  = 100 // events per company, deliveries per endpoint
	)
	// Company i's events are delivered to endpoint i; one event in four is
	// an invoice.paid (the others: invoice.sent).
	for _, q := range []string{
		`INSERT INTO accounts (id, name, created) VALUES ('` + account + `', 'Acme', now())`,
		`INSERT INTO companies (id, account_id, nif, name, created)
			SELECT ('01900000-0000-7000-8001-' || lpad(i::text, 12, '0'))::uuid, '` + account + `', 'B' || lpad(i::text, 8, '0'), 'Co', now()
			FROM generate_series(1, ` + strconv.Itoa(companies) + `) i`,
		`INSERT INTO events (id, type, api_version, livemode, test, account_id, company_id, object, created)
			SELECT gen_random_uuid(), CASE WHEN j % 4 = 0 THEN 'invoice.paid' ELSE 'invoice.sent' END, '` + webhooks.LatestAPIVersion + `', true, false,
				'` + account + `', ('01900000-0000-7000-8001-' || lpad(i::text, 12, '0'))::uuid, '{}', now() - (j * ` + strconv.Itoa(companies) + ` + i) * interval '1 ms'
			FROM generate_series(1, ` + strconv.Itoa(companies) + `) i, generate_series(1, ` + strconv.Itoa(perScope) + `) j`,
		`INSERT INTO deliveries (id, endpoint_id, event_id, event_type, status, attempt_count, manual, created)
			SELECT gen_random_uuid(), ('01900000-0000-7000-8002-' || substr(company_id::text, 25))::uuid, id, type, 'delivered', 1, false, created
			FROM events`,
		`ANALYZE deliveries`,
		`ANALYZE events`,
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const company, endpoint = "01900000-0000-7000-8001-000000000007", "01900000-0000-7000-8002-000000000007"
	page := webhooks.Page{Limit: 20}
	for _, c := range []struct {
		index string
		list  func() (int, error)
	}{
		{"deliveries_endpoint", func() (int, error) {
			l, err := s.ListDeliveries(ctx, webhooks.DeliveryFilter{EndpointID: endpoint}, page)
			return lenOf(l, err)
		}},
		{"events_company", func() (int, error) {
			l, err := s.ListEvents(ctx, webhooks.EventFilter{CompanyID: company}, page)
			return lenOf(l, err)
		}},
		{"events_company_type", func() (int, error) {
			l, err := s.ListEvents(ctx, webhooks.EventFilter{CompanyID: company, Type: "invoice.sent"}, page)
			return lenOf(l, err)
		}},
	} {
		before := entriesRead(t, s, schema, c.index)
		// Past a prepared statement's fifth run, its generic plan.
		for range 7 {
			if n, err := c.list(); err != nil || n != page.Limit {
				t.Fatalf("%s: a page of %d, %v; want %d", c.index, n, err, page.Limit)
			}
		}
		if read := entriesRead(t, s, schema, c.index) - before; read > 7*2*int64(page.Limit) {
			t.Errorf("%s: seven first pages of %d read %d of its entries (of %d in the list each)", c.index, page.Limit, read, perScope)
		}
	}
}

// entriesRead is how many entries of index the scans of schema's tables
// have returned.
func entriesRead(t *testing.T, s *Store, schema, index string) int64 {
	t.Helper()
	conn := flushedStats(t, s)
	defer conn.Close(context.Background())
	var n int64
	if err := conn.QueryRow(t.Context(), `SELECT idx_tup_read FROM pg_stat_user_indexes WHERE schemaname = $1 AND indexrelname = $2`,
		schema, index).Scan(&n); err != nil {
		t.Fatalf("index %s: %v", index, err)
	}
	return n
}

func lenOf[T any](l *webhooks.List[T], err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return len(l.Data), nil
}
