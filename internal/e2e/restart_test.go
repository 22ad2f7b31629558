package e2e

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/service"
)

// backlog registers n events for one company endpoint whose sink is slow,
// in batches of 100 (a request per event took most of the tests that use
// it), and returns their ids.
func backlog(t *testing.T, ts *testService, companyID string, n int) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for len(ids) < n {
		var events []any
		for range min(100, n-len(ids)) {
			events = append(events, object{"type": "invoice.sent", "company_id": companyID, "data": object{"object": invoice}})
		}
		for i, o := range ts.batch(events...).Data {
			if o.Status != http.StatusCreated {
				t.Fatalf("batch item %d: got %d %v, want 201", i, o.Status, o.Err)
			}
			ids[o.Event["id"].(string)] = true
		}
	}
	return ids
}

// undelivered describes the deliveries of the stopped service's database
// that are not delivered, with their leases and attempts.
func undelivered(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT lower(hex(d.id)), d.status, d.parked, d.attempt_count, coalesce(d.next_attempt_at, 0), coalesce(d.lease_expires, 0),
		(SELECT group_concat(coalesce(a.response_status, 0) || ':' || coalesce(a.error, ''), ' | ') FROM attempts a WHERE a.delivery_id = d.id)
		FROM deliveries d WHERE d.status != 'd' ORDER BY d.next_attempt_at`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	now := time.Now().UnixMilli()
	var out []string
	for rows.Next() {
		var id, status string
		var parked, count int
		var next, lease int64
		var attempts sql.NullString
		if err := rows.Scan(&id, &status, &parked, &count, &next, &lease, &attempts); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s parked=%d attempts=%d due_in=%dms lease_left=%dms [%s]",
			id, status, parked, count, next-now, max(lease-now, 0), attempts.String))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRestartMidBacklog stops the service in the middle of a backlog and
// starts a new one on the same database: every accepted event arrives, on
// both backends.
func TestRestartMidBacklog(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend string
		grace   time.Duration // tiny: in-flight attempts are aborted and handed back
	}{
		{"graceful", "sqlite", 5 * time.Second},
		{"aborted", "sqlite", time.Millisecond},
		{"graceful", "postgres", 5 * time.Second},
		{"aborted", "postgres", time.Millisecond},
	} {
		t.Run(tc.backend+"/"+tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "webhooks.db")
			// The attempt timeout outlasts the gate below: on a loaded
			// machine registering the backlog takes seconds, and an attempt
			// timed out there would wait a minute for its retry.
			opts := []options{func(c *service.Config) {
				c.PerEndpoint, c.ShutdownGrace, c.AttemptTimeout = 4, tc.grace, 30*time.Second
			}}
			if tc.backend == "postgres" {
				opts = append(opts, withPostgres(t))
			}
			ts := startService(t, path, opts...)
			acme := ts.newAccount("Acme", "", "B12345674")
			s := newSink(t)
			// The sink holds every request until the whole backlog is
			// registered, so that the stop falls in its middle however fast
			// the machine.
			gate := make(chan struct{})
			s.setRespond(func(_ int, w http.ResponseWriter, r *http.Request) {
				<-gate
				time.Sleep(20 * time.Millisecond)
				w.WriteHeader(200)
			})
			ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
			ids := backlog(t, ts, acme.companyID, 200)
			close(gate)
			s.waitRequests(t, 20, 10*time.Second)
			ts.stop()
			before := len(s.requests())
			if before >= len(ids) {
				t.Fatalf("the whole backlog (%d) went before the stop; make the sink slower", before)
			}

			// The state the stop left, to explain a delivery that never
			// arrives: its lease, its state and its attempts.
			var stuck []string
			if tc.backend == "sqlite" {
				stuck = undelivered(t, path)
			}

			ts2 := startService(t, path, opts...)
			defer func() {
				if t.Failed() && tc.backend == "sqlite" {
					t.Logf("left by the stop, not delivered:\n%s", strings.Join(stuck, "\n"))
					ts2.stop()
					t.Logf("still not delivered:\n%s", strings.Join(undelivered(t, path), "\n"))
				}
			}()
			ts2.waitFor("every delivery delivered", 30*time.Second, func() bool {
				delivered := 0
				var l struct {
					Data    []object `json:"data"`
					HasMore bool     `json:"has_more"`
				}
				after := ""
				for {
					ts2.must(200, "GET", ep.path+"/deliveries?limit=100&status=delivered"+after, acme.key, nil, &l)
					delivered += len(l.Data)
					if !l.HasMore {
						break
					}
					after = "&starting_after=" + l.Data[len(l.Data)-1]["id"].(string)
				}
				return delivered == len(ids)
			})
			seen := map[string]int{}
			for _, r := range s.requests() {
				var b struct{ ID string }
				json.Unmarshal(r.body, &b)
				seen[b.ID]++
			}
			for id := range ids {
				if seen[id] == 0 {
					t.Errorf("event %s is delivered but never arrived", id)
				}
			}
			t.Logf("%d before the stop, %d requests in all for %d events", before, len(s.requests()), len(ids))
		})
	}
}

// TestHangingEndpointDoesNotHoldOthers: an endpoint that never answers,
// with a backlog of thousands, holds at most its per-endpoint share of the
// workers; another endpoint's deliveries keep arriving at once, on both
// backends. "At once" is judged structurally, not by a stopwatch: a
// delivery that had to wait for a hung attempt would take at least the
// attempt timeout.
func TestHangingEndpointDoesNotHoldOthers(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			const attemptTimeout = 3 * time.Second
			opts := []options{func(c *service.Config) {
				c.AttemptTimeout, c.PerEndpoint, c.Concurrency = attemptTimeout, 8, 32
			}}
			if backend == "postgres" {
				opts = append(opts, withPostgres(t))
			}
			ts := startService(t, "", opts...)
			hung := ts.newAccount("Hung", "", "B12345674")
			fine := ts.newAccount("Fine", "", "12345678Z")
			hang := newSink(t)
			release := make(chan struct{})
			// Each hung request's span at the sink ends when the sender gives
			// up, by the sender's clock: at most the attempt timeout after
			// it arrived. The sink itself may learn that the connection
			// closed much later on a loaded machine, while the next attempt
			// is already on its way.
			var mu sync.Mutex
			var spans [][2]time.Time // arrival, and end (zero while open)
			hang.setRespond(func(_ int, w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				i := len(spans)
				spans = append(spans, [2]time.Time{time.Now()})
				mu.Unlock()
				select {
				case <-release:
				case <-r.Context().Done():
				}
				mu.Lock()
				spans[i][1] = time.Now()
				mu.Unlock()
			})
			defer close(release)
			fast := newSink(t)
			ts.newEndpoint("/v1/companies/"+hung.companyID, hung.key, object{"url": hang.URL, "enabled_events": []string{"*"}})
			ts.newEndpoint("/v1/companies/"+fine.companyID, fine.key, object{"url": fast.URL, "enabled_events": []string{"*"}})
			const backlogSize = 2000
			backlog(t, ts, hung.companyID, backlogSize)
			hang.waitRequests(t, 8, 5*time.Second)
			var slowest time.Duration
			for i := 0; i < 30; i++ {
				start := time.Now()
				ts.registerEvent(object{"type": "invoice.sent", "company_id": fine.companyID, "data": object{"object": invoice}})
				fast.waitRequests(t, i+1, 2*attemptTimeout)
				slowest = max(slowest, time.Since(start))
			}
			t.Logf("slowest of 30 deliveries to the healthy endpoint beside a hung backlog of %d: %s", backlogSize, slowest)
			if slowest >= attemptTimeout {
				t.Errorf("a delivery to the healthy endpoint took %s, as long as a hung attempt (%s): it waited behind the backlog", slowest, attemptTimeout)
			}
			mu.Lock()
			n := mostAtOnce(spans, attemptTimeout, time.Now())
			mu.Unlock()
			if n > 8 {
				t.Errorf("the hanging endpoint had %d requests at once, want at most its cap of 8", n)
			}
		})
	}
}

// mostAtOnce is the most spans open at one time. A span ends when the
// sender gives up at the latest, attemptTimeout after it arrived by the
// sender's clock: the sink may learn that the connection closed much later
// on a loaded machine, while the next attempt is already on its way. A span
// still open ends now.
func mostAtOnce(spans [][2]time.Time, attemptTimeout time.Duration, now time.Time) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, s := range spans {
		end := s[1]
		if end.IsZero() {
			end = now
		}
		if limit := s[0].Add(attemptTimeout); end.After(limit) {
			end = limit
		}
		edges = append(edges, edge{s[0], 1}, edge{end, -1})
	}
	// Ends sort before starts at the same instant: a slot handed over is
	// not two at once.
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.delta, b.delta)) })
	most, open := 0, 0
	for _, e := range edges {
		open += e.delta
		most = max(most, open)
	}
	return most
}
