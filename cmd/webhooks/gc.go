package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the collector's target unless GOGC says otherwise.
// The service's live heap is small (the deliveries in flight and the
// caches) and its garbage is per request, so Go's default of 100 collects
// it often under load. Measured against 100 (SQLite, one endpoint,
// interleaved, 20 s, medians of three): 2,711 against 2,624 deliveries/s,
// 406 against 421 µs of CPU each, for 46 MiB resident against 35.
const defaultGCPercent = 400

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}
