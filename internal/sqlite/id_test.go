package sqlite

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

func TestDBID(t *testing.T) {
	ids := []string{webhooks.NewID(), webhooks.NewID(), "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"}
	for _, id := range ids {
		v, err := dbID(id).Value()
		if err != nil {
			t.Fatal(err)
		}
		b, ok := v.([]byte)
		if !ok || len(b) != 16 {
			t.Fatalf("dbID(%q).Value() = %v, want its 16 bytes", id, v)
		}
		var back dbID
		if err := back.Scan(b); err != nil || string(back) != id {
			t.Errorf("scan of %q's bytes: %q, %v", id, back, err)
		}
	}
	// The bytes sort as the text: lists and cursors keep their order.
	slices.Sort(ids)
	byBytes := slices.Clone(ids)
	slices.SortFunc(byBytes, func(a, b string) int {
		x, _ := idBytes(a)
		y, _ := idBytes(b)
		return strings.Compare(string(x), string(y))
	})
	if !slices.Equal(ids, byBytes) {
		t.Errorf("sorted by bytes %v, by text %v", byBytes, ids)
	}
	// Anything else is kept as text, and reads back as written.
	for _, s := range []string{"", "x", "invoice.sent", "01900000-0000-7000-8000-00000000000A", "0190000-0000-7000-8000-0000000000011",
		"01900000-0000-7000-8000-00000000000g", "01900000_0000-7000-8000-000000000001", strings.Repeat("a", 16)} {
		v, err := dbID(s).Value()
		if err != nil || v != s {
			t.Errorf("dbID(%q).Value() = %v, %v; want the text", s, v, err)
		}
		var back dbID
		if err := back.Scan(s); err != nil || string(back) != s {
			t.Errorf("scan of %q: %q, %v", s, back, err)
		}
	}
	var null dbID = "set"
	if err := null.Scan(nil); err != nil || null != "" {
		t.Errorf("scan of NULL: %q, %v", null, err)
	}
	if err := null.Scan([]byte("short")); err == nil {
		t.Error("scan of 5 bytes: no error")
	}
}

// idColumns are the columns that hold ids, by table.
var idColumns = map[string][]string{
	"accounts":         {"id", "provisioned_by"},
	"api_keys":         {"id", "account_id"},
	"companies":        {"id", "account_id"},
	"endpoints":        {"id", "company_id", "account_id"},
	"events":           {"id", "company_id", "account_id"},
	"idempotency_keys": {"event_id"},
	"deliveries":       {"id", "endpoint_id", "event_id", "replay_of", "waiting_for", "lease_token"},
	"attempts":         {"delivery_id"},
	"bodies":           {"event_id"},
	"audit_log":        {"id", "account_id", "actor_id", "target_id"},
	"outbox":           {"id", "endpoint_id"},
	"erasures":         {"id", "company_id", "account_id", "after_id"},
	"relay_sessions":   {"endpoint_id"},
	"relay_requests":   {"id", "endpoint_id", "delivery_id"},
}

// textIDs names the id columns that hold a canonical id as text, which
// no lookup by dbID finds: a write that forgot dbID. One query counts every
// column's (a query per column took most of the check's time).
func textIDs(ctx context.Context, s *Store) ([]string, error) {
	var parts []string
	for table, cols := range idColumns {
		for _, col := range cols {
			parts = append(parts, fmt.Sprintf(`SELECT '%s.%s', count(*) FROM %[1]s WHERE typeof(%[2]s) = 'text' AND webhooks_id(%[2]s) IS NOT %[2]s`, table, col))
		}
	}
	rows, err := s.read.QueryContext(ctx, strings.Join(parts, " UNION ALL "))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var bad []string
	counted := 0
	for rows.Next() {
		var column string
		var n int
		if err := rows.Scan(&column, &n); err != nil {
			return nil, err
		}
		counted++
		if n > 0 {
			bad = append(bad, fmt.Sprintf("%s (%d rows)", column, n))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if counted != len(parts) {
		return nil, fmt.Errorf("counted %d id columns, want %d", counted, len(parts))
	}
	slices.Sort(bad)
	return bad, nil
}

// CheckBinaryIDs fails t if a write stored an id as text.
func CheckBinaryIDs(t *testing.T, s *Store) {
	t.Helper()
	bad, err := textIDs(context.WithoutCancel(t.Context()), s)
	if err != nil {
		t.Fatalf("reading the id columns: %v", err)
	}
	if len(bad) > 0 {
		t.Errorf("ids stored as text: %s", strings.Join(bad, ", "))
	}
}

// TestLeaseToken: an engine's tokens keep their first 8 bytes, which
// google/uuid makes strictly increasing in a process; a token of another
// form is kept as an id is.
func TestLeaseToken(t *testing.T) {
	seen := map[any]bool{}
	for range 100_000 {
		v, err := leaseToken(webhooks.NewID()).Value()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := v.(int64); !ok || seen[v] {
			t.Fatalf("a token stored as %v (%T), twice: %v", v, v, seen[v])
		}
		seen[v] = true
	}
	for tok, want := range map[string]any{
		"":                                     nil,
		"t1":                                   "t1",
		"6f1c64b2-1a7e-4c43-9d0e-5a1f2b3c4d5e": []byte{0x6f, 0x1c, 0x64, 0xb2, 0x1a, 0x7e, 0x4c, 0x43, 0x9d, 0x0e, 0x5a, 0x1f, 0x2b, 0x3c, 0x4d, 0x5e},
	} {
		v, err := leaseToken(tok).Value()
		if err != nil || !reflect.DeepEqual(v, want) {
			t.Errorf("leaseToken(%q) = %#v, %v; want %#v", tok, v, err, want)
		}
	}
}
