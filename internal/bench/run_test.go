package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
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
		Out:       &out,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	r := results[0]
	if r.Events == 0 || r.Deliveries != 2*r.Events || r.Errors != 0 {
		t.Errorf("got %d events, %d deliveries, %d errors; want every event delivered twice\n%s", r.Events, r.Deliveries, r.Errors, out.String())
	}
	if !r.CPUShared {
		t.Error("in-process CPU not marked as shared with the producers and the sink")
	}
	if !strings.Contains(out.String(), "smoke (200/s)") || !strings.Contains(out.String(), "1 event per request") {
		t.Errorf("output lacks the scenario's row or the batch size:\n%s", out.String())
	}
}
