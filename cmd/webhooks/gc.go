package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the collector's target unless GOGC says otherwise.
// The service's live heap is small (the deliveries in flight and the
// caches) and its garbage is per request, so Go's default of 100 collects
// it often under load: 400 trades some memory for CPU (docs/performance.md).
const defaultGCPercent = 400

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}
