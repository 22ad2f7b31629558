// Package bench measures the service: producers register events through
// the API as fast as they can (or at a set rate), a loopback sink receives
// the deliveries, and the report gives events/s, deliveries/s, the latency
// from registration to arrival, and the peak RSS.
package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
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
}

// Config configures a run.
type Config struct {
	// URL and AdminKey of a running service; empty runs one in-process on
	// a fresh SQLite file per scenario (or on Database, for PostgreSQL).
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
	// Producers is how many concurrent POST /v1/events run.
	Producers int
	Scenarios []Scenario
	Out       io.Writer
	Logger    *slog.Logger
}

// Result is one scenario's figures.
type Result struct {
	Scenario         Scenario
	Events           int
	Deliveries       int
	EventsPerSec     float64
	DeliveriesPerSec float64
	P50, P99, Max    time.Duration
	// Drain is how long the last deliveries took to arrive after the
	// producers stopped.
	Drain   time.Duration
	PeakRSS int64 // bytes, of this process; 0 when unknown
	// CPUPerDelivery is the CPU time spent per delivery, from the setup's
	// end to the drain's: the serve processes' with Processes, and this
	// whole process's (producers and sink included) otherwise.
	CPUPerDelivery time.Duration
	Errors         int
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
	cpuOf := "this process's CPU (producers and sink included)"
	if cfg.Processes > 0 {
		cpuOf = "the serve processes' CPU"
	}
	fmt.Fprintf(cfg.Out, "CPU/dlv: %s per delivery\n", cpuOf)
	fmt.Fprintf(cfg.Out, "%-26s %9s %11s %13s %9s %9s %9s %8s %9s %8s\n", "scenario", "events/s", "deliveries", "deliveries/s", "p50", "p99", "max", "drain", "peak RSS", "CPU/dlv")
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
		results = append(results, r)
		name := sc.Name
		if sc.Rate > 0 {
			name += fmt.Sprintf(" (%.0f/s)", sc.Rate)
		}
		fmt.Fprintf(cfg.Out, "%-26s %9.0f %11d %13.0f %9s %9s %9s %8s %9s %8s\n", name, r.EventsPerSec, r.Deliveries, r.DeliveriesPerSec,
			ms(r.P50), ms(r.P99), ms(r.Max), ms(r.Drain), mib(r.PeakRSS), us(r.CPUPerDelivery))
		if r.Errors > 0 {
			fmt.Fprintf(cfg.Out, "  (%d registrations failed)\n", r.Errors)
		}
	}
	return results, nil
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
}

func us(d time.Duration) string {
	if d == 0 {
		return "n/a"
	}
	return strconv.FormatInt(d.Microseconds(), 10) + "µs"
}

func mib(b int64) string {
	if b == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 0, 64) + "MiB"
}

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

	bases, adminKey := []string{cfg.URL}, cfg.AdminKey
	var rss func() int64 = peakRSS
	cpu := selfCPU
	switch {
	case cfg.URL != "":
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
		bases, adminKey = []string{url}, key
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Producers * 2, MaxIdleConns: cfg.Producers * 2}, Timeout: 30 * time.Second}
	api := &apiClient{bases: bases, key: adminKey, http: client}
	companyID, err := api.setup(sc.Endpoints, sink.url)
	if err != nil {
		return res, err
	}

	var events, failures atomic.Int64
	cpuBefore := cpu()
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	// At a set rate, event k is due at start + k/rate, whichever producer
	// sends it: a producer that falls behind sends at once, so the rate
	// holds as long as the service keeps up.
	var seq atomic.Int64
	interval := time.Duration(0)
	if sc.Rate > 0 {
		interval = time.Duration(float64(time.Second) / sc.Rate)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < cfg.Producers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
				if err := api.register(companyID); err != nil {
					if runCtx.Err() == nil {
						failures.Add(1)
						cfg.Logger.Warn("bench: registration failed", "err", err)
					}
					continue
				}
				events.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopped := time.Now()
	want := int(events.Load()) * sc.Endpoints
	drainCtx, drainCancel := context.WithTimeout(ctx, 2*time.Minute)
	defer drainCancel()
	if err := sink.wait(drainCtx, want); err != nil {
		return res, fmt.Errorf("waiting for %d deliveries (got %d): %w", want, sink.count(), err)
	}
	res.Drain = time.Since(stopped)
	res.Events, res.Errors = int(events.Load()), int(failures.Load())
	res.Deliveries = sink.count()
	if spent := cpu() - cpuBefore; spent > 0 && res.Deliveries > 0 {
		res.CPUPerDelivery = spent / time.Duration(res.Deliveries)
	}
	res.EventsPerSec = float64(res.Events) / elapsed.Seconds()
	// Deliveries per second over the whole run, drain included: what the
	// service sustained, not what it buffered.
	res.DeliveriesPerSec = float64(res.Deliveries) / (elapsed + res.Drain).Seconds()
	res.P50, res.P99, res.Max = sink.percentiles()
	res.PeakRSS = rss()
	return res, nil
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
	var raw [24]byte
	rand.Read(raw[:])
	key = "bench_" + base64.RawURLEncoding.EncodeToString(raw[:])
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
		body := fmt.Sprintf(`{"url":"%s/e%d","enabled_events":["invoice.*"],"livemode":false}`, sinkURL, i)
		if _, err := c.call("POST", "/v1/companies/"+co.ID+"/webhook_endpoints", []byte(body), 201); err != nil {
			return "", err
		}
	}
	return co.ID, nil
}

// register registers one test-mode invoice event stamped with the time it
// was sent, which the sink subtracts from the arrival time.
func (c *apiClient) register(companyID string) error {
	body := `{"type":"invoice.sent","company_id":"` + companyID + `","livemode":false,"data":{"object":{"object":"invoice","number":"FAC-BENCH","total":"1210.00","currency":"EUR","sent_at":` +
		strconv.FormatInt(time.Now().UnixNano(), 10) + `}}}`
	_, err := c.call("POST", "/v1/events", []byte(body), 201)
	return err
}

// sink receives deliveries and records each one's latency.
type sink struct {
	srv *http.Server
	ln  net.Listener
	url string

	mu        sync.Mutex
	latencies []time.Duration
	arrived   chan struct{}
}

func newSink(host string) (*sink, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	s := &sink{ln: ln, url: "http://" + ln.Addr().String(), arrived: make(chan struct{}, 1)}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln)
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
