package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the collector's target unless GOGC says otherwise.
// The service's live heap is small (a few MiB: the deliveries in flight
// and the caches) and its garbage is per request, so Go's default of 100
// collected it every few milliseconds under load, about 6 % of the CPU per
// delivery; 400 collects a quarter as often for a peak heap that stays in
// tens of MiB.
const defaultGCPercent = 400

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}
