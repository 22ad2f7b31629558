package main

import (
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// serveConfig parses serve's arguments into the service's configuration,
// with an admin key and a data folder of the test's.
func serveConfig(t *testing.T, args ...string) (webhooks.RetryPolicy, error) {
	t.Helper()
	c := &ServeCommand{Stderr: io.Discard, Getenv: func(string) string { return "" }}
	f, err := c.parse(append([]string{"-admin-key", "test", "-data", t.TempDir()}, args...))
	if err != nil {
		return webhooks.RetryPolicy{}, err
	}
	cfg, err := c.config(f, slog.New(slog.DiscardHandler))
	return cfg.Policy, err
}

// TestServe_RetrySchedule: an empty retry schedule is an error, not the
// default in disguise (it used to become the default silently); none is a
// single attempt; no setting is the spec's schedule.
func TestServe_RetrySchedule(t *testing.T) {
	for _, s := range []string{"", ",", " , ", "1m,,5m", "1m,"} {
		if _, err := serveConfig(t, "-retry-schedule", s); err == nil || !strings.Contains(err.Error(), "retry schedule") {
			t.Errorf("-retry-schedule %q: got %v, want an error about the retry schedule", s, err)
		}
	}
	p, err := serveConfig(t, "-retry-schedule", "none")
	if err != nil || p.Waits == nil || len(p.Waits) != 0 || p.MaxAttempts() != 1 {
		t.Errorf("-retry-schedule none: got %v %v, want no waits (one attempt)", p.Waits, err)
	}
	p, err = serveConfig(t, "-retry-schedule", "1s, 2m")
	if err != nil || !slices.Equal(p.Waits, []time.Duration{time.Second, 2 * time.Minute}) {
		t.Errorf("-retry-schedule 1s,2m: got %v %v", p.Waits, err)
	}
	p, err = serveConfig(t)
	if err != nil || !slices.Equal(p.Waits, webhooks.DefaultRetryWaits) || p.Jitter != webhooks.DefaultRetryJitter {
		t.Errorf("no -retry-schedule: got %v ±%v %v, want the spec's schedule", p.Waits, p.Jitter, err)
	}
	if got := formatSchedule(webhooks.DefaultRetryWaits); got != "1m,5m,30m,2h,12h,24h,72h" {
		t.Errorf("the default schedule as -h shows it: got %q", got)
	}
}

// TestRedactDSN: the log line of serve shows where the database is, never
// its password, in either form of connection string.
func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://webhooks:s3cret@db.internal:5432/webhooks": "postgres://webhooks:xxxxx@db.internal:5432/webhooks",
		"host=db.internal user=webhooks password=s3cret":       "host=db.internal user=webhooks password=xxxxx",
		"host=db.internal password='s3 cret' dbname=webhooks":  "host=db.internal password=xxxxx dbname=webhooks",
		"data/webhooks.db": "data/webhooks.db",
		"postgres://db.internal/webhooks?sslmode=verify-full": "postgres://db.internal/webhooks?sslmode=verify-full",
	} {
		if got := redactDSN(in); got != want {
			t.Errorf("redactDSN(%q): got %q, want %q", in, got, want)
		}
	}
}
