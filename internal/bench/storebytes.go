package bench

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// storeBytesMetric is the gauge of the bytes the service's store takes.
const storeBytesMetric = "webhooks_store_bytes"

// storeBytes reads the store's size from the first base's /metrics (every
// process on one database reports the same); -1 when it does not expose it.
func storeBytes(client *http.Client, bases []string) int64 {
	if len(bases) == 0 {
		return -1
	}
	resp, err := client.Get(bases[0] + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return -1
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := sample(strings.TrimRight(line, "\n"), storeBytesMetric); ok {
			return int64(v)
		}
	}
	return -1
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
