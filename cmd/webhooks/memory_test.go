package main

import (
	"context"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"32MiB": 32 << 20, "1GiB": 1 << 30, "512KiB": 512 << 10, "1000": 1000, "1000B": 1000, "2TiB": 2 << 40,
		"off": 0, "0": 0, " 64MiB ": 64 << 20,
	} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "32MB", "-1MiB", "MiB", "32 MiB", "9999999TiB", "1.5GiB"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q): no error", in)
		}
	}
}

// TestServe_MemoryLimit: a size serve cannot read stops it at once.
func TestServe_MemoryLimit(t *testing.T) {
	if _, err := serveConfig(t, "-memory-limit", "32MB"); err == nil || !strings.Contains(err.Error(), "memory-limit") {
		t.Errorf("-memory-limit 32MB: got %v, want an error about memory-limit", err)
	}
	if _, err := serveConfig(t, "-memory-limit", "off"); err != nil {
		t.Errorf("-memory-limit off: %v", err)
	}
}

// TestLimitMemory_FollowsTheLiveHeap: a limit the live heap outgrows is
// raised to twice the live heap, so that the collector does not run
// without pause, and comes back down to the setting once the live heap
// shrinks.
func TestLimitMemory_FollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetMemoryLimit(math.MaxInt64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	const setting = 4 << 20
	live := make([]byte, 16<<20) // live across the collection below
	for i := range live {
		live[i] = byte(i)
	}
	runtime.GC()
	limitMemory(ctx, setting, slog.New(slog.DiscardHandler))
	if got := debug.SetMemoryLimit(-1); got < 2*int64(len(live)) {
		t.Errorf("with a live heap of %d MiB: limit %d MiB, want at least twice the live heap", len(live)>>20, got>>20)
	}
	runtime.KeepAlive(live)

	live = nil
	runtime.GC()
	cancel()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	limitMemory(ctx, setting, slog.New(slog.DiscardHandler))
	if got := debug.SetMemoryLimit(-1); got >= 2*16<<20 {
		t.Errorf("once the live heap shrank: limit %d MiB, want it lower", got>>20)
	}

	// GOMEMLIMIT is the runtime's, and wins.
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "1GiB")
	limitMemory(ctx, setting, slog.New(slog.DiscardHandler))
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: limit %d, want it left alone", got)
	}
}
