package bench

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The counters the bench reads of a service's /metrics.
const (
	writeSecondsMetric = "webhooks_store_write_seconds_total"
	cpuSecondsMetric   = "process_cpu_seconds_total"
	erasuresMetric     = "webhooks_erasures_pending"
)

// scrapeResult is one reading of one process's /metrics; a counter the
// process does not expose (an older build, or a scrape that failed) is
// absent rather than zero, so that the report says "–" instead of 0%.
type scrapeResult struct {
	write, cpu       float64 // seconds
	hasWrite, hasCPU bool
	store            float64 // bytes (storeBytesMetric)
	hasStore         bool
}

// scrape reads base's /metrics. A failure is no error: the figures it
// would feed are extras, and the bench's own figures still stand.
func scrape(client *http.Client, base string) scrapeResult {
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		return scrapeResult{}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return scrapeResult{}
	}
	return parseScrape(resp.Body)
}

// scrapeAll reads each base's /metrics, in order.
func scrapeAll(client *http.Client, bases []string) []scrapeResult {
	out := make([]scrapeResult, len(bases))
	for i, b := range bases {
		out[i] = scrape(client, b)
	}
	return out
}

// parseScrape reads the counters of a Prometheus text exposition, each
// summed over its labels, so that the service may split one (by backend,
// by kind of write) without the bench missing it.
func parseScrape(r io.Reader) scrapeResult {
	var s scrapeResult
	sc := bufio.NewScanner(r)
	// Label values (a route pattern, an error reason) can make long lines.
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := sample(line, writeSecondsMetric); ok {
			s.write += v
			s.hasWrite = true
		}
		if v, ok := sample(line, cpuSecondsMetric); ok {
			s.cpu += v
			s.hasCPU = true
		}
		if v, ok := sample(line, storeBytesMetric); ok {
			s.store += v
			s.hasStore = true
		}
	}
	return s
}

// sample reads line as a sample of the metric name: `name value`,
// `name{labels} value`, either with a timestamp after. A name that only
// starts with name (name_created, name_bucket) is another metric.
func sample(line, name string) (float64, bool) {
	rest, ok := strings.CutPrefix(line, name)
	if !ok || rest == "" {
		return 0, false
	}
	switch rest[0] {
	case '{':
		// Label values may hold '}' inside quotes; the value follows the
		// last one.
		i := strings.LastIndexByte(rest, '}')
		if i < 0 {
			return 0, false
		}
		rest = rest[i+1:]
	case ' ', '\t':
	default:
		return 0, false
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// writeBusy is the share of wall the store's write path was busy between
// two scrapes of the same processes: the busiest process's, because each
// process has its own write path (with several, they share a PostgreSQL
// database that takes concurrent writers), so the first to fill is the
// one that bounds the whole. It is negative when no process exposes the
// counter at both ends.
func writeBusy(before, after []scrapeResult, wall time.Duration) float64 {
	busy := -1.0
	if wall <= 0 {
		return busy
	}
	for i := range min(len(before), len(after)) {
		if before[i].hasWrite && after[i].hasWrite {
			busy = max(busy, (after[i].write-before[i].write)/wall.Seconds())
		}
	}
	return busy
}

// scrapedCPU is the CPU the processes spent between two scrapes, from
// their process_cpu_seconds_total; 0 when none exposes it.
func scrapedCPU(before, after []scrapeResult) time.Duration {
	var sum float64
	for i := range min(len(before), len(after)) {
		if before[i].hasCPU && after[i].hasCPU {
			sum += after[i].cpu - before[i].cpu
		}
	}
	return time.Duration(sum * float64(time.Second))
}

// writeCeiling is the delivery rate at which the write path would be busy
// all the time, if its cost per delivery held: the measured rate over the
// busy share. 0 when the share is unknown or nil.
func writeCeiling(deliveriesPerSec, busy float64) float64 {
	if busy <= 0 {
		return 0
	}
	return deliveriesPerSec / busy
}

// cpuCeiling is the delivery rate cores would give the service if it had
// them to itself at its measured CPU cost per delivery. 0 when the cost
// is unknown.
func cpuCeiling(cores int, perDelivery time.Duration) float64 {
	if perDelivery <= 0 || cores <= 0 {
		return 0
	}
	return float64(cores) * float64(time.Second) / float64(perDelivery)
}
