package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"time"

	"github.com/factuarea/webhooks/internal/bench"
)

// BenchCommand is `webhooks bench`: it measures registration and delivery
// throughput against an in-process service (default), serve processes of
// a binary, or a running service.
type BenchCommand struct {
	Out    io.Writer
	Stderr io.Writer
}

const benchUsage = `Usage: webhooks bench [flags]

Producers register events through the API as fast as they can (or at
-rate), one per POST /v1/events or -batch per POST /v1/events/batch; a
loopback sink receives the deliveries. One row per scenario:

  events/s, dlv/s   registrations and deliveries per second; dlv/s counts
                    the drain after the producers stop
  p50, p99, max     latency from the sending of an event's request to the
                    delivery's arrival at the sink
  drain             how long the last deliveries took after the producers
  CPU/dlv           the service's CPU per delivery. With -processes, the
                    serve processes' (summed); with -url, the service's
                    process_cpu_seconds_total. In-process (the default),
                    the producers and the sink share the process, so the
                    figure is this whole process's, shown as a bound (≤):
                    -processes 1 measures the service's own
  busy              share of the wall time the store's write path was busy
                    (webhooks_store_write_seconds_total at /metrics), the
                    busiest process's with several; – when not exposed
  ceil:write        dlv/s ÷ busy: the rate with the write path always busy
  ceil:CPU          cores × 1e6 ÷ CPU µs/dlv: the rate with every core of
                    this machine (runtime.NumCPU) given to the service
  peak RSS          the service's (summed over processes); – with -url

Flags:
`

// Run parses args and runs the benchmark scenarios.
func (c *BenchCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchUsage)
		fs.PrintDefaults()
	}
	url := fs.String("url", "", "a running service's base `URL` (default: run one in-process on a fresh SQLite file per scenario)")
	adminKey := fs.String("admin-key", os.Getenv("WEBHOOKS_ADMIN_KEY"), "with -url, the running service's admin key; with -database, the database's (default: one derived from -database, the same at every run) (WEBHOOKS_ADMIN_KEY)")
	database := fs.String("database", "", "a postgres:// URL instead of a fresh SQLite file per scenario")
	processes := fs.Int("processes", 0, "run this many 'webhooks serve' processes instead of the in-process service, and measure their own CPU: several need -database postgres://…, one runs on a fresh SQLite file per scenario without it")
	serve := fs.String("serve", "", "with -processes: the webhooks `binary` whose serve processes run (default: this one), to compare builds")
	duration := fs.Duration("duration", 30*time.Second, "how long each scenario registers events")
	producers := fs.Int("producers", 32, "concurrent producers, each with one request in flight")
	batch := fs.Int("batch", 1, fmt.Sprintf("events per request: 1 through POST /v1/events, 2 to %d through POST /v1/events/batch", bench.MaxBatch))
	endpoints := fs.Int("endpoints", 0, "run one scenario with this many endpoints per event (default: 1 flat out, 1 at half that rate, 10 flat out)")
	rate := fs.Float64("rate", 0, "with -endpoints: events per second, in requests of -batch events (0 is as fast as possible)")
	keys := fs.Int("keys", 0, "with -endpoints: give the events ordering keys, taken in turn from this many")
	ordered := fs.Bool("ordered", false, "with -endpoints: create the endpoints ordered (one delivery at a time per ordering key)")
	erase := fs.Int("erase", 0, "measure a company's erasure under load: fill a company with this many events, then run 1 endpoint flat out and 1 endpoint at half that rate while the company is deleted, and report the erasure's duration and the latencies meanwhile (with -endpoints: that one scenario, erasing)")
	sinkHost := fs.String("sink-host", "127.0.0.1", "address the sink listens on, as the service reaches it")
	verbose := fs.Bool("v", false, "log the service's warnings")
	ceiling := fs.Duration("ceiling", 5*time.Second, "how long to measure the loopback ceiling (1 KiB POSTs between a Go client and server) before the scenarios, whose dlv/s the table gives as a share of it; 0 skips it")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *batch < 1 || *batch > bench.MaxBatch {
		return fmt.Errorf("bench: -batch must be 1 to %d", bench.MaxBatch)
	}
	if *url != "" && *adminKey == "" {
		return fmt.Errorf("bench: -url needs -admin-key (or WEBHOOKS_ADMIN_KEY)")
	}
	cfg := bench.Config{
		URL: *url, AdminKey: *adminKey, Database: *database, SinkHost: *sinkHost, Processes: *processes, Executable: *serve,
		Duration: *duration, Producers: *producers, Batch: *batch, Ceiling: *ceiling, Out: c.Out,
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(c.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if *endpoints > 0 {
		name := fmt.Sprintf("%d endpoint(s)", *endpoints)
		if *keys > 0 {
			name += fmt.Sprintf(", %d keys", *keys)
		}
		if *ordered {
			name += ", ordered"
		}
		cfg.Scenarios = []bench.Scenario{{Name: name, Endpoints: *endpoints, Rate: *rate, Keys: *keys, Ordered: *ordered, Erase: *erase}}
	} else if *erase > 0 {
		cfg.Scenarios = bench.EraseScenarios(*erase)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	_, err := bench.Run(ctx, cfg)
	return err
}
