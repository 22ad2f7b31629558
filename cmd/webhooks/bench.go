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
// throughput against an in-process service (default) or a running one.
type BenchCommand struct {
	Out    io.Writer
	Stderr io.Writer
}

// Run parses args and runs the benchmark scenarios.
func (c *BenchCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	url := fs.String("url", "", "a running service's base URL (default: run one in-process on a fresh SQLite file per scenario)")
	adminKey := fs.String("admin-key", os.Getenv("WEBHOOKS_ADMIN_KEY"), "the running service's admin key (WEBHOOKS_ADMIN_KEY)")
	database := fs.String("database", "", "a postgres:// URL instead of a fresh SQLite file per scenario")
	processes := fs.Int("processes", 0, "run this many serve processes instead of the in-process service: several need -database postgres://…, one runs on a fresh SQLite file per scenario without it")
	serve := fs.String("serve", "", "with -processes: the webhooks `binary` whose serve processes run (default: this one), to compare builds")
	duration := fs.Duration("duration", 30*time.Second, "how long each scenario registers events")
	producers := fs.Int("producers", 32, "concurrent producers calling POST /v1/events")
	endpoints := fs.Int("endpoints", 0, "run one scenario with this many endpoints per event (default: 1 flat out, 1 at half that rate, 10 flat out)")
	rate := fs.Float64("rate", 0, "with -endpoints: events per second (0 is as fast as possible)")
	sinkHost := fs.String("sink-host", "127.0.0.1", "address the sink listens on, as the service reaches it")
	verbose := fs.Bool("v", false, "log the service's warnings")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url != "" && *adminKey == "" {
		return fmt.Errorf("bench: -url needs -admin-key (or WEBHOOKS_ADMIN_KEY)")
	}
	cfg := bench.Config{
		URL: *url, AdminKey: *adminKey, Database: *database, SinkHost: *sinkHost, Processes: *processes, Executable: *serve,
		Duration: *duration, Producers: *producers, Out: c.Out,
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(c.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if *endpoints > 0 {
		cfg.Scenarios = []bench.Scenario{{Name: fmt.Sprintf("%d endpoint(s)", *endpoints), Endpoints: *endpoints, Rate: *rate}}
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
