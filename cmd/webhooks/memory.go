package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// defaultMemoryLimit is serve's soft limit on the Go runtime's memory
// unless WEBHOOKS_MEMORY_LIMIT or GOMEMLIMIT says otherwise. The live heap
// of a busy process is about 12 MiB (the connections' buffers, the
// attempts in flight, the caches), and GOGC=400 lets the garbage grow to
// four times that between collections: the limit makes the collector run
// earlier once the garbage, not the live data, would pass it
// (docs/performance.md).
const defaultMemoryLimit = 32 << 20

// liveHeapFactor keeps the limit at least this many times the live heap:
// a limit the live data nears would make the collector run without pause
// (the runtime caps it at half the CPU), so a process whose live heap
// outgrows the setting, with many endpoints or large payloads in flight,
// gets the room GOGC=100 would give it instead.
const liveHeapFactor = 2

// memoryCheck is how often the live heap is read to move the limit.
const memoryCheck = 2 * time.Second

// parseBytes reads a size as GOMEMLIMIT writes it: a number of bytes with
// an optional B, KiB, MiB, GiB or TiB; "0" or "off" is no limit.
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "off" || s == "0" {
		return 0, nil
	}
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	shift, digits := uint(0), s
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			shift, digits = u.shift, strings.TrimSuffix(s, u.suffix)
			break
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%q is not a size such as 32MiB, 1GiB or off", s)
	}
	return n << shift, nil
}

// limitMemory sets the runtime's soft memory limit to limit, kept at least
// liveHeapFactor times the live heap, until ctx ends. It does nothing when
// limit is 0 or GOMEMLIMIT is set: the runtime follows that one.
func limitMemory(ctx context.Context, limit int64, logger *slog.Logger) {
	if limit <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	set := func(previous int64) int64 {
		want := max(limit, liveHeapFactor*liveHeap())
		if want != previous {
			debug.SetMemoryLimit(want)
			if want > limit && previous <= limit {
				logger.Info("webhooks: the live heap outgrew the memory limit: the limit follows it", "memory_limit", limit, "now", want)
			}
		}
		return want
	}
	current := set(0)
	go func() {
		t := time.NewTicker(memoryCheck)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				current = set(current)
			}
		}
	}()
}

// liveHeap is the heap the last collection found in use.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
