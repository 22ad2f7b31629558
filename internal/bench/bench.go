// Package bench measures the service: producers register events through
// the API as fast as they can (or at a set rate), one at a time or in
// batches, a loopback sink receives the deliveries, and the report gives
// events/s, deliveries/s, the latency from registration to arrival, the
// peak RSS, the service's CPU per delivery and the share of the time its
// store's write path was busy, with the ceilings those two imply: what
// the service would deliver with its write path busy all the time, and
// with every core to itself.
//
// The CPU is the service's own with serve processes (Config.Processes),
// read from /proc/<pid>/stat, and with a running one (Config.URL), read
// from its /metrics. In-process, the producers and the sink share the
// process, so the figure is an upper bound and its ceiling a lower one.
package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/factuarea/webhooks/internal/service"
)

// Scenario is one measurement.
type Scenario struct {
	Name      string
	Endpoints int     // endpoints per event
	Rate      float64 // events per second; 0 is as fast as possible
	// RateOf, if set, takes a fraction of an earlier scenario's sustained
	// delivery rate, per endpoint: Rate = RateOf's deliveries/s / its
	// endpoints * Fraction.
	RateOf   string
	Fraction float64
	// Keys, if set, gives the events ordering keys, taken in turn from
	// that many (SPEC 18); Ordered creates the endpoints ordered.
	Keys    int
	Ordered bool
	// Erase, if set, fills another company with this many events (each
	// with a delivery, stored with its body) before the producers start,
	// and deletes it once they run: the scenario measures the erasure's
	// duration (until webhooks_erasures_pending is 0 again) and the
	// registration-to-arrival latency of the deliveries that arrived
	// meanwhile. The producers go on until the erasure is over.
	Erase int
}

// Config configures a run.
type Config struct {
	// URL and AdminKey of a running service; empty runs one in-process on
	// a fresh SQLite file per scenario (or on Database, for PostgreSQL).
	// Without URL, AdminKey is the key the service runs with: on Database
	// it must be the database's (see adminKey).
	URL      string
	AdminKey string
	Database string
	// Processes, if set, runs that many `webhooks serve` processes of
	// Executable on Database (one on a fresh SQLite file per scenario when
	// Database is empty) instead of the in-process service; producers
	// spread their events over them, and the peak RSS and the CPU time are
	// theirs.
	Processes  int
	Executable string
	// SinkHost is the host the service reaches the sink at (127.0.0.1).
	SinkHost string
	Duration time.Duration
	// Producers is how many concurrent registration requests run.
	Producers int
	// Batch is how many events each request registers: 1 (or 0) through
	// POST /v1/events, more through POST /v1/events/batch.
	Batch     int
	Scenarios []Scenario
	// Ceiling is how long the loopback ceiling is measured before the
	// scenarios (see loopbackCeiling); 0 skips it.
	Ceiling time.Duration
	Out     io.Writer
	Logger  *slog.Logger
}

// Result is one scenario's figures.
type Result struct {
	Scenario         Scenario
	Batch            int // events per request
	Events           int
	Deliveries       int
	EventsPerSec     float64
	DeliveriesPerSec float64
	P50, P99, Max    time.Duration
	// Drain is how long the last deliveries took to arrive after the
	// producers stopped.
	Drain time.Duration
	// PeakRSS is the service's, in bytes: this process's in-process, the
	// serve processes' summed; 0 when unknown (as with URL).
	PeakRSS int64
	// CPUPerDelivery is the CPU time spent per delivery, from the first
	// registration to the drain's end: the serve processes' with
	// Processes, the service's process_cpu_seconds_total with URL, and
	// this whole process's otherwise (CPUShared); 0 when unknown.
	CPUPerDelivery time.Duration
	// DatabaseCPUPerDelivery is PostgreSQL's CPU time per delivery over
	// the same window (see postgresCPU), on -database; 0 on SQLite.
	DatabaseCPUPerDelivery time.Duration
	// CPUShared says CPUPerDelivery includes the producers and the sink,
	// which run in the service's process: the service's own is at most
	// that, and CPUCeiling at least.
	CPUShared bool
	// WriteBusy is the share of the same window the store's write path
	// was busy (webhooks_store_write_seconds_total), the busiest
	// process's; negative when the service does not expose it.
	WriteBusy float64
	// WriteCeiling and CPUCeiling are the deliveries/s the write path and
	// the machine's cores imply (see writeCeiling, cpuCeiling); 0 when
	// unknown.
	WriteCeiling, CPUCeiling float64
	// Share is DeliveriesPerSec over the loopback ceiling measured in the
	// same run; 0 when it was not measured.
	Share  float64
	Errors int
	// With Scenario.Erase: how long the erasure took from the DELETE's
	// answer, how long the DELETE took to answer, and the latencies of
	// the deliveries that arrived meanwhile.
	EraseTook, EraseAnswer       time.Duration
	EraseArrivals                int
	EraseP50, EraseP99, EraseMax time.Duration
	eraseStart                   time.Time
	// StoreBefore and StoreAfter are the store's bytes (webhooks_store_bytes)
	// when the producers start and once the drain is over; -1 when unknown.
	StoreBefore, StoreAfter int64
}

// DefaultScenarios are the targets: 1 endpoint per event flat out,
// the same at half the measured rate (for latency), and 10 endpoints.
func DefaultScenarios() []Scenario {
	return []Scenario{
		{Name: "1 endpoint, max rate", Endpoints: 1},
		{Name: "1 endpoint, half rate", Endpoints: 1, RateOf: "1 endpoint, max rate", Fraction: 0.5},
		{Name: "10 endpoints, max rate", Endpoints: 10},
	}
}

// EraseScenarios measure the erasure of a company of n events (SPEC 19)
// while the service delivers at half its flat-out rate, beside the same
// rate without an erasure.
func EraseScenarios(n int) []Scenario {
	return []Scenario{
		{Name: "1 endpoint, max rate", Endpoints: 1},
		{Name: "1 endpoint, half rate", Endpoints: 1, RateOf: "1 endpoint, max rate", Fraction: 0.5},
		{Name: "1 endpoint, half rate, erasing", Endpoints: 1, RateOf: "1 endpoint, max rate", Fraction: 0.5, Erase: n},
	}
}

// Run runs the scenarios in order and prints a line per scenario.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if cfg.Duration <= 0 {
		cfg.Duration = 30 * time.Second
	}
	if cfg.Producers <= 0 {
		cfg.Producers = 32
	}
	if cfg.SinkHost == "" {
		cfg.SinkHost = "127.0.0.1"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if len(cfg.Scenarios) == 0 {
		cfg.Scenarios = DefaultScenarios()
	}
	cfg.Batch = max(cfg.Batch, 1)
	if cfg.Batch > MaxBatch {
		return nil, fmt.Errorf("a batch holds at most %d events, not %d", MaxBatch, cfg.Batch)
	}
	var ceiling float64
	if cfg.Ceiling > 0 {
		var err error
		if ceiling, err = loopbackCeiling(ctx, cfg.SinkHost, cfg.Producers, cfg.Ceiling); err != nil {
			return nil, fmt.Errorf("measuring the loopback ceiling: %w", err)
		}
	}
	printHeader(cfg, ceiling)
	var results []Result
	for _, sc := range cfg.Scenarios {
		if sc.RateOf != "" {
			for _, r := range results {
				if r.Scenario.Name == sc.RateOf {
					sc.Rate = r.DeliveriesPerSec / float64(r.Scenario.Endpoints) * sc.Fraction
				}
			}
			if sc.Rate == 0 {
				return results, fmt.Errorf("scenario %q: no earlier result named %q", sc.Name, sc.RateOf)
			}
		}
		r, err := runScenario(ctx, cfg, sc)
		if err != nil {
			return results, fmt.Errorf("%s: %w", sc.Name, err)
		}
		if ceiling > 0 {
			r.Share = r.DeliveriesPerSec / ceiling
		}
		results = append(results, r)
		name := sc.Name
		if sc.Rate > 0 {
			name += fmt.Sprintf(" (%.0f/s)", sc.Rate)
		}
		cpuMark, ceilMark := "", ""
		if r.CPUShared {
			cpuMark, ceilMark = "≤", "≥"
		}
		fmt.Fprintf(cfg.Out, rowFormat, name, rate(r.EventsPerSec), rate(r.DeliveriesPerSec),
			ms(r.P50), ms(r.P99), ms(r.Max), ms(r.Drain),
			share(r.Share), mark(cpuMark, us(r.CPUPerDelivery)), us(r.DatabaseCPUPerDelivery), percent(r.WriteBusy), rate(r.WriteCeiling), mark(ceilMark, rate(r.CPUCeiling)), mib(r.PeakRSS))
		if r.Errors > 0 {
			fmt.Fprintf(cfg.Out, "  (%d registrations failed)\n", r.Errors)
		}
		fmt.Fprint(cfg.Out, storeLine(r.StoreBefore, r.StoreAfter, r.Events))
		if sc.Erase > 0 {
			fmt.Fprintf(cfg.Out, "  erasure of a company of %d events: answered in %s, erased in %s; meanwhile %d deliveries, p50 %s, p99 %s, max %s\n",
				sc.Erase, ms(r.EraseAnswer), ms(r.EraseTook), r.EraseArrivals, ms(r.EraseP50), ms(r.EraseP99), ms(r.EraseMax))
		}
	}
	return results, nil
}

// MaxBatch is the most events POST /v1/events/batch takes at once.
const MaxBatch = 100

const rowFormat = "%-32s %8s %8s %8s %8s %8s %8s %6s %8s %7s %6s %10s %9s %8s\n"

// printHeader says what ran and where each column comes from, since the
// CPU column means a different thing in each mode.
func printHeader(cfg Config, ceiling float64) {
	w := cfg.Out
	if cfg.Batch > 1 {
		fmt.Fprintf(w, "batch     %d events per request (POST /v1/events/batch)\n", cfg.Batch)
	} else {
		fmt.Fprintf(w, "batch     1 event per request (POST /v1/events)\n")
	}
	switch {
	case cfg.URL != "":
		fmt.Fprintf(w, "CPU/dlv   process_cpu_seconds_total of the process answering %s/metrics\n", cfg.URL)
	case cfg.Processes > 0:
		fmt.Fprintf(w, "CPU/dlv   the serve processes', summed (/proc/<pid>/stat)\n")
	default:
		fmt.Fprintf(w, "CPU/dlv   this process's, producers and sink included: the service's own is at most that (≤), its\n")
		fmt.Fprintf(w, "          ceiling at least (≥); -processes 1 runs the service apart and measures its own\n")
	}
	if ceiling > 0 {
		fmt.Fprintf(w, "share     dlv/s ÷ the loopback ceiling, %s req/s of %d-byte POSTs between a Go client and a Go server\n", rate(ceiling), ceilingBody)
		fmt.Fprintf(w, "          with %d in flight, measured just before (one event per request allows about 0.5, batches near 1)\n", cfg.Producers)
	}
	if cfg.measuresPostgres() {
		fmt.Fprintf(w, "+PG/dlv   PostgreSQL's CPU per delivery, every process of this machine named postgres: add it to CPU/dlv\n")
	}
	fmt.Fprintf(w, "busy      share of the wall time the store's write path was busy (%s), the busiest process's\n", writeSecondsMetric)
	fmt.Fprintf(w, "ceilings  write = dlv/s ÷ busy; CPU = %d cores × 1e6 ÷ CPU µs/dlv\n", runtime.NumCPU())
	fmt.Fprintf(w, "dlv/s, CPU/dlv and busy span the producers' run and the drain that follows\n")
	fmt.Fprintf(w, rowFormat, "scenario", "events/s", "dlv/s", "p50", "p99", "max", "drain", "share", "CPU/dlv", "+PG/dlv", "busy", "ceil:write", "ceil:CPU", "peak RSS")
}

// unknown is what the table prints for a figure it could not measure.
const unknown = "–"

// ms prints a latency; from a second on in seconds, so that a backlog's
// latencies keep to their column.
func ms(d time.Duration) string {
	if d >= time.Second {
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
}

func us(d time.Duration) string {
	if d == 0 {
		return unknown
	}
	return strconv.FormatInt(d.Microseconds(), 10) + "µs"
}

func mib(b int64) string {
	if b == 0 {
		return unknown
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 0, 64) + "MiB"
}

func rate(r float64) string {
	if r <= 0 || math.IsInf(r, 0) || math.IsNaN(r) {
		return unknown
	}
	return strconv.FormatFloat(r, 'f', 0, 64)
}

func share(f float64) string {
	if f <= 0 {
		return unknown
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

func percent(f float64) string {
	if f < 0 {
		return unknown
	}
	return strconv.FormatFloat(100*f, 'f', 1, 64) + "%"
}

// mark prefixes a figure with a bound's sign, unless there is no figure.
func mark(sign, figure string) string {
	if figure == unknown {
		return figure
	}
	return sign + figure
}

// producerLabels tell the producers apart from the service in a CPU
// profile of an in-process run (-cpuprofile; -tagfocus role=…).
var producerLabels = pprof.WithLabels(context.Background(), pprof.Labels("role", "bench-producer"))

// runScenario starts a service (unless one runs at cfg.URL), sets up an
// account, a company and the endpoints, runs the producers for the
// duration and waits for the deliveries to drain.
func runScenario(ctx context.Context, cfg Config, sc Scenario) (Result, error) {
	res := Result{Scenario: sc}
	sink, err := newSink(cfg.SinkHost)
	if err != nil {
		return res, err
	}
	defer sink.close()

	batch := max(cfg.Batch, 1)
	res.Batch = batch
	bases, adminKey := []string{cfg.URL}, cfg.AdminKey
	var rss func() int64 = peakRSS
	// cpu is nil when the service's CPU comes from its /metrics.
	var cpu func() time.Duration
	switch {
	case cfg.URL != "":
		// The bench's own peak RSS says nothing of a service elsewhere.
		rss = func() int64 { return 0 }
	case cfg.Processes > 0:
		c, err := startCluster(ctx, cfg)
		if err != nil {
			return res, err
		}
		defer c.stop()
		bases, adminKey, rss, cpu = c.urls, c.key, c.peakRSS, c.cpu
	default:
		stop, url, key, err := startService(ctx, cfg)
		if err != nil {
			return res, err
		}
		defer stop()
		bases, adminKey, cpu = []string{url}, key, selfCPU
		res.CPUShared = true
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Producers * 2, MaxIdleConns: cfg.Producers * 2}, Timeout: 30 * time.Second}
	api := &apiClient{bases: bases, key: adminKey, http: client, keys: sc.Keys, ordered: sc.Ordered}
	companyID, err := api.setup(sc.Endpoints, sink.url)
	if err != nil {
		return res, err
	}

	var eraseCompany string
	if sc.Erase > 0 {
		if eraseCompany, err = api.fill(ctx, sc.Erase, sink.url); err != nil {
			return res, fmt.Errorf("filling the company to erase: %w", err)
		}
	}

	var events, failures atomic.Int64
	var cpuBefore, dbBefore time.Duration
	if cpu != nil {
		cpuBefore = cpu()
	}
	onPostgres := cfg.measuresPostgres()
	if onPostgres {
		dbBefore = postgresCPU()
	}
	scrapedBefore := scrapeAll(client, bases)
	res.StoreBefore = storeBytes(scrapedBefore)
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var erased chan error
	if eraseCompany != "" {
		// The producers run until the erasure is over, however long it
		// takes, so that its whole duration is measured under load.
		var cancelRun context.CancelFunc
		runCtx, cancelRun = context.WithCancel(ctx)
		defer cancelRun()
		erased = make(chan error, 1)
		runStart := time.Now()
		go func() {
			err := api.erase(runCtx, eraseCompany, cfg.Duration/4, &res)
			if rest := time.Until(runStart.Add(cfg.Duration)); err == nil && rest > 0 {
				select {
				case <-time.After(rest):
				case <-runCtx.Done():
				}
			}
			cancelRun()
			erased <- err
		}()
	}
	// At a set rate, request k is due at start + k×batch/rate, whichever
	// producer sends it: a producer that falls behind sends at once, so the
	// rate holds as long as the service keeps up.
	var seq atomic.Int64
	interval := time.Duration(0)
	if sc.Rate > 0 {
		interval = time.Duration(float64(batch) * float64(time.Second) / sc.Rate)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < cfg.Producers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pprof.SetGoroutineLabels(producerLabels)
			for runCtx.Err() == nil {
				if interval > 0 {
					due := start.Add(time.Duration(seq.Add(1)) * interval)
					if d := time.Until(due); d > 0 {
						select {
						case <-time.After(d):
						case <-runCtx.Done():
							return
						}
					}
				}
				ok, err := api.register(companyID, batch)
				events.Add(int64(ok))
				if err != nil && runCtx.Err() == nil {
					failures.Add(int64(batch - ok))
					cfg.Logger.Warn("bench: registration failed", "err", err, "failed", batch-ok, "of", batch)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopped := time.Now()
	if erased != nil {
		if err := <-erased; err != nil {
			return res, fmt.Errorf("erasing the company: %w", err)
		}
		res.EraseArrivals, res.EraseP50, res.EraseP99, res.EraseMax = sink.between(res.eraseStart, res.eraseStart.Add(res.EraseTook))
	}
	want := int(events.Load()) * sc.Endpoints
	drainCtx, drainCancel := context.WithTimeout(ctx, 2*time.Minute)
	defer drainCancel()
	if err := sink.wait(drainCtx, want); err != nil {
		return res, fmt.Errorf("waiting for %d deliveries (got %d): %w", want, sink.count(), err)
	}
	res.Drain = time.Since(stopped)
	window := elapsed + res.Drain
	scrapedAfter := scrapeAll(client, bases)
	res.StoreAfter = storeBytes(scrapedAfter)
	var spent time.Duration
	if cpu != nil {
		spent = cpu() - cpuBefore
	} else {
		spent = scrapedCPU(scrapedBefore, scrapedAfter)
	}
	res.Events, res.Errors = int(events.Load()), int(failures.Load())
	res.Deliveries = sink.count()
	if spent > 0 && res.Deliveries > 0 {
		res.CPUPerDelivery = spent / time.Duration(res.Deliveries)
	}
	if onPostgres && res.Deliveries > 0 {
		res.DatabaseCPUPerDelivery = (postgresCPU() - dbBefore) / time.Duration(res.Deliveries)
	}
	res.EventsPerSec = float64(res.Events) / elapsed.Seconds()
	// Deliveries per second over the whole run, drain included: what the
	// service sustained, not what it buffered.
	res.DeliveriesPerSec = float64(res.Deliveries) / window.Seconds()
	res.WriteBusy = writeBusy(scrapedBefore, scrapedAfter, window)
	res.WriteCeiling = writeCeiling(res.DeliveriesPerSec, res.WriteBusy)
	res.CPUCeiling = cpuCeiling(runtime.NumCPU(), res.CPUPerDelivery)
	res.P50, res.P99, res.Max = sink.percentiles()
	res.PeakRSS = rss()
	return res, nil
}

// adminKey is the key the benchmark's service runs with: the one given;
// on a database of the caller's, one derived from its setting, so that
// every scenario and every run on it has the same (a database keeps the
// admin key its first process had, and refuses any other); on a fresh
// SQLite file, a random one.
func adminKey(cfg Config) string {
	if cfg.AdminKey != "" {
		return cfg.AdminKey
	}
	if cfg.Database != "" {
		sum := sha256.Sum256([]byte("webhooks bench " + cfg.Database))
		return "bench_" + base64.RawURLEncoding.EncodeToString(sum[:24])
	}
	var raw [24]byte
	rand.Read(raw[:])
	return "bench_" + base64.RawURLEncoding.EncodeToString(raw[:])
}

// startService runs the service in this process on a fresh database.
func startService(ctx context.Context, cfg Config) (stop func(), url, key string, err error) {
	dir, err := os.MkdirTemp("", "webhooks-bench-")
	if err != nil {
		return nil, "", "", err
	}
	db := cfg.Database
	if db == "" {
		db = filepath.Join(dir, "webhooks.db")
	}
	key = adminKey(cfg)
	svc, err := service.Open(ctx, service.Config{
		Database:      db,
		AdminKey:      key,
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		AllowHTTP:     true,
		Logger:        cfg.Logger,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		svc.Close()
		os.RemoveAll(dir)
		return nil, "", "", err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.Run(runCtx, ln)
	}()
	return func() {
		cancel()
		<-done
		svc.Close()
		os.RemoveAll(dir)
	}, "http://" + ln.Addr().String(), key, nil
}

// apiClient makes the bench's API calls.
type apiClient struct {
	bases []string // spread over, request by request
	next  atomic.Uint64
	key   string
	http  *http.Client
	// keys and ordered are the scenario's (Scenario.Keys, Ordered); seq
	// takes the events' keys in turn.
	keys    int
	ordered bool
	seq     atomic.Uint64
}

func (c *apiClient) call(method, path string, body []byte, want int) ([]byte, error) {
	base := c.bases[c.next.Add(1)%uint64(len(c.bases))]
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	return out, nil
}

// setup creates an account, a company and n company endpoints on the sink,
// and returns the company's id.
func (c *apiClient) setup(n int, sinkURL string) (string, error) {
	var a, co struct{ ID string }
	out, err := c.call("POST", "/v1/accounts", []byte(`{"name":"Bench"}`), 201)
	if err != nil {
		return "", err
	}
	json.Unmarshal(out, &a)
	// A fresh valid NIF per run, so that runs against one database do not
	// collide: 8 random digits and their control letter.
	var b [4]byte
	rand.Read(b[:])
	num := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
	nif := fmt.Sprintf("%08d%c", num, "TRWAGMYFPDXBNJZSQVHLCKE"[num%23])
	out, err = c.call("POST", "/v1/companies", []byte(`{"account_id":"`+a.ID+`","nif":"`+nif+`","name":"Bench SL"}`), 201)
	if err != nil {
		return "", err
	}
	json.Unmarshal(out, &co)
	for i := 0; i < n; i++ {
		// "ordered" only when set, so that builds before ordering (SPEC
		// 18) can be measured with this harness (-serve).
		ordered := ""
		if c.ordered {
			ordered = `,"ordered":true`
		}
		body := fmt.Sprintf(`{"url":"%s/e%d","enabled_events":["invoice.*"],"livemode":false%s}`, sinkURL, i, ordered)
		if _, err := c.call("POST", "/v1/companies/"+co.ID+"/webhook_endpoints", []byte(body), 201); err != nil {
			return "", err
		}
	}
	return co.ID, nil
}

// fill makes a company with an endpoint that is disabled, and registers n
// events of it: each has a delivery, stored failed (endpoint_disabled)
// with its body, without an attempt, so that the sink sees none of them.
// It returns the company's id.
func (c *apiClient) fill(ctx context.Context, n int, sinkURL string) (string, error) {
	var a, co, ep struct{ ID string }
	out, err := c.call("POST", "/v1/accounts", []byte(`{"name":"Bench erasure"}`), 201)
	if err != nil {
		return "", err
	}
	json.Unmarshal(out, &a)
	var b [4]byte
	rand.Read(b[:])
	num := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
	nif := fmt.Sprintf("%08d%c", num, "TRWAGMYFPDXBNJZSQVHLCKE"[num%23])
	if out, err = c.call("POST", "/v1/companies", []byte(`{"account_id":"`+a.ID+`","nif":"`+nif+`","name":"Bench Erasure SL"}`), 201); err != nil {
		return "", err
	}
	json.Unmarshal(out, &co)
	path := "/v1/companies/" + co.ID + "/webhook_endpoints"
	if out, err = c.call("POST", path, []byte(`{"url":"`+sinkURL+`/erased","enabled_events":["invoice.*"],"livemode":false}`), 201); err != nil {
		return "", err
	}
	json.Unmarshal(out, &ep)
	if _, err := c.call("PATCH", path+"/"+ep.ID, []byte(`{"status":"disabled"}`), 200); err != nil {
		return "", err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				k := int(next.Add(MaxBatch)) - MaxBatch
				if k >= n {
					return
				}
				if _, err := c.register(co.ID, min(MaxBatch, n-k)); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return co.ID, cmp.Or(first, ctx.Err())
}

// erase waits warm, deletes the company, and waits until no erasure job
// is left (webhooks_erasures_pending, read on the first base), recording
// the figures in res.
func (c *apiClient) erase(ctx context.Context, companyID string, warm time.Duration, res *Result) error {
	select {
	case <-time.After(warm):
	case <-ctx.Done():
		return ctx.Err()
	}
	res.eraseStart = time.Now()
	if _, err := c.call("DELETE", "/v1/companies/"+companyID, nil, 204); err != nil {
		return err
	}
	res.EraseAnswer = time.Since(res.eraseStart)
	for {
		resp, err := c.http.Get(c.bases[0] + "/metrics")
		if err != nil {
			return err
		}
		pending, found := -1.0, false
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if v, ok := sample(sc.Text(), erasuresMetric); ok {
				pending, found = v, true
			}
		}
		resp.Body.Close()
		if !found {
			return fmt.Errorf("the service does not expose %s", erasuresMetric)
		}
		if pending == 0 {
			res.EraseTook = time.Since(res.eraseStart)
			return nil
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// register registers n test-mode invoice events in one request, each
// stamped with the time the request was sent, which the sink subtracts
// from the arrival time. It returns how many were registered, and an
// error when any was not.
func (c *apiClient) register(companyID string, n int) (int, error) {
	sentAt := time.Now().UnixNano()
	if n <= 1 {
		if _, err := c.call("POST", "/v1/events", appendEvent(nil, companyID, sentAt, c.nextKey()), 201); err != nil {
			return 0, err
		}
		return 1, nil
	}
	out, err := c.call("POST", "/v1/events/batch", c.batchBody(companyID, n, sentAt), 200)
	if err != nil {
		return 0, err
	}
	return batchOutcome(out, n)
}

// nextKey is the next event's ordering key: empty without keys.
func (c *apiClient) nextKey() string {
	if c.keys <= 0 {
		return ""
	}
	return "inv_" + strconv.FormatUint(c.seq.Add(1)%uint64(c.keys), 10)
}

// appendEvent appends the POST /v1/events body of one bench event, with
// the ordering key key if it is not empty.
func appendEvent(b []byte, companyID string, sentAt int64, key string) []byte {
	b = append(b, `{"type":"invoice.sent","company_id":"`...)
	b = append(b, companyID...)
	if key != "" {
		b = append(b, `","ordering_key":"`...)
		b = append(b, key...)
	}
	b = append(b, `","livemode":false,"data":{"object":{"object":"invoice","number":"FAC-BENCH","total":"1210.00","currency":"EUR","sent_at":`...)
	b = strconv.AppendInt(b, sentAt, 10)
	return append(b, `}}}`...)
}

// batchBody is the POST /v1/events/batch body of n bench events, all
// stamped with one send time: each event's latency counts from its
// request's sending, as a client that batches would see it.
func (c *apiClient) batchBody(companyID string, n int, sentAt int64) []byte {
	b := append(make([]byte, 0, 16+n*200), `{"events":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEvent(b, companyID, sentAt, c.nextKey())
	}
	return append(b, `]}`...)
}

// batchOutcome reads a batch_result: how many of the n items were
// registered (status 201), and an error naming the first that was not.
// Items the answer lacks count as failed, so that a short answer cannot
// pass for a full one.
func batchOutcome(body []byte, n int) (int, error) {
	var res struct {
		Data []struct {
			Status int             `json:"status"`
			Error  json.RawMessage `json:"error"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return 0, fmt.Errorf("POST /v1/events/batch: %w", err)
	}
	ok := 0
	var first error
	for i, item := range res.Data {
		if i >= n {
			break
		}
		if item.Status == 201 {
			ok++
		} else if first == nil {
			first = fmt.Errorf("POST /v1/events/batch: item %d: %d %s", i, item.Status, item.Error)
		}
	}
	if first == nil && ok < n {
		first = fmt.Errorf("POST /v1/events/batch: %d results for %d events", len(res.Data), n)
	}
	return ok, first
}

// sink receives deliveries and records each one's latency.
type sink struct {
	srv *http.Server
	ln  net.Listener
	url string

	mu        sync.Mutex
	latencies []time.Duration
	at        []time.Time // each arrival's time, in the latencies' order
	arrived   chan struct{}
}

func newSink(host string) (*sink, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	s := &sink{ln: ln, url: "http://" + ln.Addr().String(), arrived: make(chan struct{}, 1)}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 5 * time.Second}
	go pprof.Do(context.Background(), pprof.Labels("role", "bench-sink"), func(context.Context) { s.srv.Serve(ln) })
	return s, nil
}

var sentAtKey = []byte(`"sent_at":`)

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	now := time.Now()
	var lat time.Duration = -1
	if i := bytes.Index(body, sentAtKey); i >= 0 {
		rest := body[i+len(sentAtKey):]
		end := bytes.IndexAny(rest, ",}")
		if n, err := strconv.ParseInt(string(rest[:max(end, 0)]), 10, 64); err == nil {
			lat = now.Sub(time.Unix(0, n))
		}
	}
	s.mu.Lock()
	s.latencies = append(s.latencies, lat)
	s.at = append(s.at, now)
	s.mu.Unlock()
	select {
	case s.arrived <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.latencies)
}

func (s *sink) wait(ctx context.Context, n int) error {
	for s.count() < n {
		select {
		case <-s.arrived:
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (s *sink) percentiles() (p50, p99, maxLat time.Duration) {
	s.mu.Lock()
	l := slices.Clone(s.latencies)
	s.mu.Unlock()
	return quantiles(l)
}

// between returns how many deliveries arrived in [from, to), and the
// quantiles of their latencies.
func (s *sink) between(from, to time.Time) (n int, p50, p99, maxLat time.Duration) {
	s.mu.Lock()
	var l []time.Duration
	for i, at := range s.at {
		if !at.Before(from) && at.Before(to) {
			l = append(l, s.latencies[i])
		}
	}
	s.mu.Unlock()
	p50, p99, maxLat = quantiles(l)
	return len(l), p50, p99, maxLat
}

func quantiles(l []time.Duration) (p50, p99, maxLat time.Duration) {
	slices.Sort(l)
	if len(l) == 0 {
		return 0, 0, 0
	}
	at := func(q float64) time.Duration { return l[min(len(l)-1, int(q*float64(len(l))))] }
	return at(0.50), at(0.99), l[len(l)-1]
}

func (s *sink) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
}

// peakRSS reads this process's peak resident set size.
func peakRSS() int64 { return vmHWM("self") }

// selfCPU is this process's CPU time so far, user and system.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU reads a process's CPU time so far, user and system, on Linux;
// 0 when unknown.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	return statCPU(string(b))
}

// statCPU reads utime and stime from the text of /proc/<pid>/stat. The
// command name, in parentheses, may hold spaces and parentheses itself:
// the fields that follow it are counted from its last ") ". utime and
// stime are the 12th and 13th after it, in clock ticks of 1/100 s on
// Linux.
func statCPU(stat string) time.Duration {
	i := strings.LastIndex(stat, ") ")
	if i < 0 {
		return 0
	}
	f := strings.Fields(stat[i+2:])
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseInt(f[11], 10, 64)
	sys, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(user+sys) * 10 * time.Millisecond
}

// vmHWM reads a process's peak resident set size (VmHWM) on Linux; 0 when
// unknown.
func vmHWM(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
