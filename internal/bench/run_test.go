package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/pgtest"
)

// TestRun_InProcess: a short scenario against the in-process service
// delivers every event it registered and prints its row; the figures
// themselves depend on the machine and are not checked.
func TestRun_InProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the service for a second")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	results, err := Run(ctx, Config{
		Duration:  time.Second,
		Producers: 4,
		Scenarios: []Scenario{{Name: "smoke", Endpoints: 2, Rate: 200}},
		Ceiling:   200 * time.Millisecond,
		Out:       &out,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	r := results[0]
	if r.Events == 0 || r.Deliveries != 2*r.Events || r.Errors != 0 {
		t.Errorf("got %d events, %d deliveries, %d errors; want every event delivered twice\n%s", r.Events, r.Deliveries, r.Errors, out.String())
	}
	// 400 dlv/s is a small share of any ceiling, and more than none.
	if r.Share <= 0 || r.Share >= 1 || !strings.Contains(out.String(), "loopback ceiling") {
		t.Errorf("share of the loopback ceiling %.3f, want in (0, 1), and said in the header\n%s", r.Share, out.String())
	}
	if !r.CPUShared {
		t.Error("in-process CPU not marked as shared with the producers and the sink")
	}
	if !strings.Contains(out.String(), "smoke (200/s)") || !strings.Contains(out.String(), "1 event per request") {
		t.Errorf("output lacks the scenario's row or the batch size:\n%s", out.String())
	}
}

// TestRun_TwiceOnOneDatabase: every scenario, and every run, on a
// PostgreSQL database of the caller's runs with the same admin key. The
// database keeps the first process's key and refuses another, so a random
// key per scenario made the second one fail to start.
func TestRun_TwiceOnOneDatabase(t *testing.T) {
	db := pgtest.SchemaURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for run := range 2 {
		var out bytes.Buffer
		results, err := Run(ctx, Config{
			Database:  db,
			Duration:  200 * time.Millisecond,
			Producers: 2,
			Scenarios: []Scenario{{Name: "first", Endpoints: 1, Rate: 50}, {Name: "second", Endpoints: 1, Rate: 50}},
			Out:       &out,
		})
		if err != nil {
			t.Fatalf("run %d: %v\n%s", run+1, err, out.String())
		}
		if len(results) != 2 || results[1].Events == 0 {
			t.Errorf("run %d: got %+v, want both scenarios to register events", run+1, results)
		}
	}
}
