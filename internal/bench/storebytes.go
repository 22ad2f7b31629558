package bench

import "fmt"

// storeBytesMetric is the gauge of the bytes the service's store takes.
const storeBytesMetric = "webhooks_store_bytes"

// storeBytes is the store's size in the first process's scrape (every
// process on one database reports the same); -1 when it does not expose it.
func storeBytes(scraped []scrapeResult) int64 {
	if len(scraped) == 0 || !scraped[0].hasStore {
		return -1
	}
	return int64(scraped[0].store)
}

// storeLine is the report's line on the store: the bytes it grew by over
// the scenario, per event registered, and its size at the end. On a fresh
// store that is its whole size per event; PostgreSQL's counts the dead rows
// no vacuum has made reusable yet.
func storeLine(before, after int64, events int) string {
	if before < 0 || after < 0 || events <= 0 {
		return ""
	}
	return fmt.Sprintf("  store: %d bytes per event (grew %s over %d events; %s now)\n",
		(after-before)/int64(events), mib(after-before), events, mib(after))
}
