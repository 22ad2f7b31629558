package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// plan returns SQLite's query plan of q, its lines joined.
func plan(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.write.Query(`EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	return strings.Join(lines, "; ")
}

// TestOpen_ReleaseThroughIndexes: the claims a dead process left are
// handed back through the partial indexes of the leased and the parked
// deliveries. One UPDATE over "leased OR parked" scanned the whole table:
// start-up grew with the history, 0.85 s at 2 million deliveries.
func TestOpen_ReleaseThroughIndexes(t *testing.T) {
	s := openTemp(t)
	for _, q := range releaseAll {
		if p := plan(t, s, q); !strings.Contains(p, "USING INDEX deliveries_") {
			t.Errorf("%s\nplan: %s; want a search of a partial index", q, p)
		}
	}
}

// TestQueue_Indexes: the queue's reads go through the partial indexes
// (the due index holds the unleased deliveries only), whatever the size
// of the history.
func TestQueue_Indexes(t *testing.T) {
	s := openTemp(t)
	for q, index := range map[string]string{
		qDue:           "deliveries_due",
		qDueAfter:      "deliveries_due",
		qLapsed:        "deliveries_leased",
		qParkedOf:      "deliveries_parked",
		qHeld:          "deliveries_leased",
		qNextScheduled: "deliveries_due",
		`DELETE FROM deliveries WHERE replay_of = ?`: "deliveries_replay_of",
	} {
		args := make([]any, strings.Count(q, "?")+4)
		if p := plan(t, s, q, args...); !strings.Contains(p, "INDEX "+index) {
			t.Errorf("%s\nplan: %s; want %s", q, p, index)
		}
	}
}
