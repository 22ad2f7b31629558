package bench

import (
	"math"
	"strings"
	"testing"
	"time"
)

const exposition = `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 42
# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.5
# HELP webhooks_store_write_seconds_total Seconds the store's write path was busy.
# TYPE webhooks_store_write_seconds_total counter
webhooks_store_write_seconds_total{kind="event"} 3.25
webhooks_store_write_seconds_total{kind="attempt",note="a } in a label"} 1.75 1700000000000
webhooks_store_write_seconds_total_created 1.7e9
webhooks_store_write_seconds 99
`

// TestParseScrape: the counters are summed over their labels, whatever the
// labels hold and with or without a timestamp, and metrics whose names
// merely start with theirs are not taken for them.
func TestParseScrape(t *testing.T) {
	s := parseScrape(strings.NewReader(exposition))
	if !s.hasWrite || s.write != 5 {
		t.Errorf("write: got %v %v, want 5 true", s.write, s.hasWrite)
	}
	if !s.hasCPU || s.cpu != 12.5 {
		t.Errorf("cpu: got %v %v, want 12.5 true", s.cpu, s.hasCPU)
	}
}

// TestParseScrape_Absent: a service without the counter (an older build)
// gives an absent figure, not a zero one, and so a busy share of "–".
func TestParseScrape_Absent(t *testing.T) {
	var without []string
	for _, line := range strings.Split(exposition, "\n") {
		if !strings.Contains(line, "webhooks_store_write_seconds_total") {
			without = append(without, line)
		}
	}
	s := parseScrape(strings.NewReader(strings.Join(without, "\n")))
	if s.hasWrite || s.write != 0 {
		t.Errorf("write: got %v %v, want absent", s.write, s.hasWrite)
	}
	if !s.hasCPU {
		t.Error("cpu: absent, want 12.5")
	}
	busy := writeBusy([]scrapeResult{s}, []scrapeResult{s}, time.Second)
	if busy >= 0 || percent(busy) != unknown {
		t.Errorf("busy without the counter: got %v (%s), want negative (%s)", busy, percent(busy), unknown)
	}
	if got := writeCeiling(1000, busy); got != 0 || rate(got) != unknown {
		t.Errorf("write ceiling without the counter: got %v (%s), want 0 (%s)", got, rate(got), unknown)
	}
}

// TestWriteBusy: the busy share is the busiest process's, over the wall
// time; a process that lacks the counter is left out, not read as idle.
func TestWriteBusy(t *testing.T) {
	before := []scrapeResult{{write: 10, hasWrite: true}, {write: 0, hasWrite: true}, {}}
	after := []scrapeResult{{write: 12, hasWrite: true}, {write: 3, hasWrite: true}, {}}
	if got := writeBusy(before, after, 4*time.Second); got != 0.75 {
		t.Errorf("got %v, want 0.75 (3 s of 4 in the second process)", got)
	}
	if got := writeBusy(before, after, 0); got >= 0 {
		t.Errorf("no wall time: got %v, want negative", got)
	}
	before = []scrapeResult{{cpu: 1, hasCPU: true}, {cpu: 2, hasCPU: true}, {cpu: 5}}
	after = []scrapeResult{{cpu: 1.5, hasCPU: true}, {cpu: 3, hasCPU: true}, {cpu: 9}}
	if got := scrapedCPU(before, after); got != 1500*time.Millisecond {
		t.Errorf("cpu: got %v, want 1.5s", got)
	}
}

// TestCeilings: the write path's ceiling is the rate over the busy share;
// the CPU's is cores × 1e6 ÷ µs per delivery.
func TestCeilings(t *testing.T) {
	for _, c := range []struct {
		dps, busy, want float64
	}{
		{5000, 0.5, 10000},
		{5000, 1, 5000},
		{3000, 0.25, 12000},
		// Writers that overlap (a PostgreSQL pool) can add up to more
		// than the wall time; the arithmetic stays the same rather than
		// hide that, and the ceiling under the rate measured shows it.
		{3000, 1.5, 2000},
		{5000, 0, 0},
		{5000, -1, 0},
	} {
		if got := writeCeiling(c.dps, c.busy); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("writeCeiling(%v, %v): got %v, want %v", c.dps, c.busy, got, c.want)
		}
	}
	for _, c := range []struct {
		cores int
		per   time.Duration
		want  float64
	}{
		{1, 100 * time.Microsecond, 10000},
		{8, 100 * time.Microsecond, 80000},
		{2, 250 * time.Microsecond, 8000},
		{4, 1500 * time.Nanosecond, 4e6 / 1.5},
		{8, 0, 0},
	} {
		if got := cpuCeiling(c.cores, c.per); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("cpuCeiling(%d, %v): got %v, want %v", c.cores, c.per, got, c.want)
		}
	}
}
