package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/pgtest"
)

// TestMain lets the test binary run as the webhooks command, so that the
// cluster tests start real serve processes of it (and kill them).
func TestMain(m *testing.M) {
	if os.Getenv("WEBHOOKS_TEST_MAIN") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "webhooks:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// process is a `webhooks serve` child process.
type process struct {
	cmd  *exec.Cmd
	url  string
	logs *bytes.Buffer
}

var servingAddr = regexp.MustCompile(`msg="webhooks: serving" addr=(\S+)`)

// startServe starts `webhooks serve` with env and waits until it serves.
func startServe(t *testing.T, env ...string) *process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve")
	cmd.Env = append(os.Environ(), append([]string{"WEBHOOKS_TEST_MAIN=1", "WEBHOOKS_ADDR=127.0.0.1:0"}, env...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, logs: &bytes.Buffer{}}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("logs of %s:\n%s", p.url, p.logs)
		}
	})
	addr := make(chan string, 1)
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			p.logs.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := servingAddr.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		p.url = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start:\n%s", p.logs)
	}
	return p
}

// api makes an admin call to a process and decodes the answer.
func (p *process) api(t *testing.T, key, method, path string, body any, want int) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, p.url+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: got %d %s, want %d", method, path, resp.StatusCode, raw, want)
	}
	var out map[string]any
	json.Unmarshal(raw, &out)
	return out
}

// TestCluster_KillOneProcess runs three serve processes on one PostgreSQL
// database, registers a load of events through all of them, and kills one
// with SIGKILL while deliveries are in flight. Every delivery reaches the
// sink at least once, and the repeats are at most what the killed process
// had in flight: its claims, which the others take over when they lapse;
// and the two left count two processes on the database.
func TestCluster_KillOneProcess(t *testing.T) {
	const (
		adminKey    = "cluster-test-admin-key"
		events      = 400
		endpoints   = 4
		concurrency = 16 // per process: the killed one holds at most this many claims
	)
	db := pgtest.SchemaURL(t)
	var mu sync.Mutex
	arrivals := map[string]int{} // by delivery id
	var total atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		arrivals[r.Header.Get("Factuarea-Delivery-Id")]++
		mu.Unlock()
		total.Add(1)
	}))
	defer sink.Close()

	env := []string{
		"WEBHOOKS_DATABASE=" + db, "WEBHOOKS_ADMIN_KEY=" + adminKey,
		"WEBHOOKS_ALLOW_NETWORKS=127.0.0.0/8", "WEBHOOKS_ALLOW_HTTP=true",
		"WEBHOOKS_ATTEMPT_TIMEOUT=1s", "WEBHOOKS_LEASE=3s", "WEBHOOKS_POLL_INTERVAL=200ms",
		fmt.Sprintf("WEBHOOKS_CONCURRENCY=%d", concurrency), "WEBHOOKS_LOG_LEVEL=info",
	}
	procs := []*process{startServe(t, env...), startServe(t, env...), startServe(t, env...)}

	a := procs[0].api(t, adminKey, "POST", "/v1/accounts", map[string]any{"name": "Cluster"}, 201)
	c := procs[0].api(t, adminKey, "POST", "/v1/companies", map[string]any{"account_id": a["id"], "nif": "B12345674", "name": "Cluster SL"}, 201)
	companyID := c["id"].(string)
	for i := range endpoints {
		procs[i%3].api(t, adminKey, "POST", "/v1/companies/"+companyID+"/webhook_endpoints",
			map[string]any{"url": fmt.Sprintf("%s/e%d", sink.URL, i), "enabled_events": []string{"invoice.*"}}, 201)
	}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := w; i < events; i += 6 {
				procs[i%3].api(t, adminKey, "POST", "/v1/events", map[string]any{
					"type": "invoice.sent", "company_id": companyID, "data": map[string]any{"object": map[string]any{"object": "invoice", "n": i}},
				}, 201)
			}
		})
	}
	wg.Wait()
	want := events * endpoints
	// Kill the second process while deliveries are in flight.
	deadline := time.Now().Add(30 * time.Second)
	for total.Load() < int64(want/4) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	atKill := total.Load()
	if atKill >= int64(want) {
		t.Fatalf("every delivery arrived before the kill (%d): make the sink slower", atKill)
	}
	// The victim is working: it has made attempts.
	made := metric(t, procs[1], `webhooks_attempts_total{outcome="delivered"}`)
	if made == 0 {
		t.Fatalf("the process to kill made no attempts")
	}
	if err := procs[1].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Every delivery arrives, the killed process's after its claims lapse.
	deadline = time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		distinct := len(arrivals)
		mu.Unlock()
		if distinct >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries arrived", distinct, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The history agrees: every delivery is delivered. The killed process's
	// claims lapse first, and the others take them over.
	deadline = time.Now().Add(10 * time.Second)
	for {
		delivered := 0
		ds := listAll(t, procs[0], adminKey, companyID)
		for _, d := range ds {
			if d["status"] == "delivered" {
				delivered++
			}
		}
		if delivered == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history: %d of %d deliveries delivered", delivered, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The survivors count each other, and not the killed process, whose
	// session ended with it (webhooks_processes, every 5 s).
	deadline = time.Now().Add(15 * time.Second)
	for n := 0.0; n != 2; n = metric(t, procs[0], "webhooks_processes") {
		if time.Now().After(deadline) {
			t.Fatalf("a survivor counts %v processes, want 2", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Count the repeats once every claim of the killed process lapsed and
	// its deliveries were made again and recorded.
	mu.Lock()
	repeats := 0
	for _, n := range arrivals {
		repeats += n - 1
	}
	mu.Unlock()
	t.Logf("%d deliveries, %d arrived before the kill (%.0f from the killed process), %d repeats (bound %d)", want, atKill, made, repeats, concurrency)
	if repeats > concurrency {
		t.Errorf("got %d repeated arrivals, more than the %d attempts the killed process could have in flight", repeats, concurrency)
	}
}

// listAll lists every delivery of every endpoint of the company.
func listAll(t *testing.T, p *process, key, companyID string) []map[string]any {
	t.Helper()
	eps := p.api(t, key, "GET", "/v1/companies/"+companyID+"/webhook_endpoints?limit=100", nil, 200)["data"].([]any)
	var out []map[string]any
	for _, e := range eps {
		path := "/v1/companies/" + companyID + "/webhook_endpoints/" + e.(map[string]any)["id"].(string) + "/deliveries?limit=100"
		after := ""
		for {
			page := p.api(t, key, "GET", path+after, nil, 200)
			data := page["data"].([]any)
			for _, d := range data {
				out = append(out, d.(map[string]any))
			}
			if page["has_more"] != true {
				break
			}
			after = "&starting_after=" + data[len(data)-1].(map[string]any)["id"].(string)
		}
	}
	return out
}

// metric reads one sample of a process's /metrics.
func metric(t *testing.T, p *process, name string) float64 {
	t.Helper()
	resp, err := http.Get(p.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// TestCluster_CapAcrossProcesses: WEBHOOKS_ENDPOINT_CONCURRENCY holds
// across every process, as the receiver sees it (SPEC 14). Three serve
// processes on one database, a cap of 4 and 600 events registered through
// all of them to one slow endpoint: the receiver never has a fifth request
// in flight, however each delivery reached a worker (handed over at
// registration, or claimed). The hand-off used to count the endpoint's
// attempts in the inserting statement's snapshot, without a lock: the
// receiver saw 6 at once.
func TestCluster_CapAcrossProcesses(t *testing.T) {
	const (
		adminKey = "cluster-cap-admin-key"
		events   = 600
		cap      = 4
	)
	db := pgtest.SchemaURL(t)
	var inFlight, most, arrived atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		io.Copy(io.Discard, r.Body)
		time.Sleep(5 * time.Millisecond)
		inFlight.Add(-1)
		arrived.Add(1)
	}))
	defer sink.Close()
	env := []string{
		"WEBHOOKS_DATABASE=" + db, "WEBHOOKS_ADMIN_KEY=" + adminKey,
		"WEBHOOKS_ALLOW_NETWORKS=127.0.0.0/8", "WEBHOOKS_ALLOW_HTTP=true",
		fmt.Sprintf("WEBHOOKS_ENDPOINT_CONCURRENCY=%d", cap), "WEBHOOKS_POLL_INTERVAL=200ms",
	}
	procs := []*process{startServe(t, env...), startServe(t, env...), startServe(t, env...)}
	a := procs[0].api(t, adminKey, "POST", "/v1/accounts", map[string]any{"name": "Cap"}, 201)
	c := procs[0].api(t, adminKey, "POST", "/v1/companies", map[string]any{"account_id": a["id"], "nif": "B12345674", "name": "Cap SL"}, 201)
	companyID := c["id"].(string)
	procs[1].api(t, adminKey, "POST", "/v1/companies/"+companyID+"/webhook_endpoints",
		map[string]any{"url": sink.URL + "/hooks", "enabled_events": []string{"invoice.*"}}, 201)
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := w; i < events; i += 6 {
				procs[i%3].api(t, adminKey, "POST", "/v1/events", map[string]any{
					"type": "invoice.sent", "company_id": companyID, "data": map[string]any{"object": map[string]any{"object": "invoice", "n": i}},
				}, 201)
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(90 * time.Second)
	for arrived.Load() < events {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries arrived", arrived.Load(), events)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d arrivals, at most %d in flight at once (cap %d)", arrived.Load(), most.Load(), cap)
	if most.Load() > cap {
		t.Errorf("the receiver had %d requests in flight at once, past the cap of %d", most.Load(), cap)
	}
	if most.Load() < 2 {
		t.Errorf("at most %d request in flight: the test's load does not reach the cap", most.Load())
	}
}

// TestCluster_OrderedAcrossProcesses: an ordered endpoint gets each
// ordering key's deliveries one at a time, in registration order, across
// three serve processes on one database, though a third of the first
// attempts fail and one process is killed with SIGKILL midway (SPEC 18).
// 20 keys of 50 events each, each key's registered one after the other
// (each answered before the next is sent), the keys at once: for every key
// the first arrivals are in registration order, and no two of a key are
// ever in flight at once.
func TestCluster_OrderedAcrossProcesses(t *testing.T) {
	const (
		adminKey = "cluster-ordered-admin-key"
		keys     = 20
		perKey   = 50
	)
	db := pgtest.SchemaURL(t)
	var (
		mu       sync.Mutex
		seen     = map[string]bool{}  // delivery ids that arrived once
		first    = map[string][]int{} // per key, the seq of each first arrival, in order
		inFlight = map[string]int{}   // per key
		overlaps []string
		attempts atomic.Int64
	)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Data struct {
				Object struct {
					Key string `json:"key"`
					Seq int    `json:"seq"`
				} `json:"object"`
			} `json:"data"`
		}
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &body)
		k, id := body.Data.Object.Key, r.Header.Get("Factuarea-Delivery-Id")
		mu.Lock()
		inFlight[k]++
		if inFlight[k] > 1 {
			overlaps = append(overlaps, fmt.Sprintf("key %s: %d in flight at seq %d", k, inFlight[k], body.Data.Object.Seq))
		}
		fail := false
		if !seen[id] {
			seen[id] = true
			first[k] = append(first[k], body.Data.Object.Seq)
			fail = len(seen)%3 == 0 // a third of the first attempts
		}
		mu.Unlock()
		attempts.Add(1)
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		inFlight[k]--
		mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer sink.Close()
	env := []string{
		"WEBHOOKS_DATABASE=" + db, "WEBHOOKS_ADMIN_KEY=" + adminKey,
		"WEBHOOKS_ALLOW_NETWORKS=127.0.0.0/8", "WEBHOOKS_ALLOW_HTTP=true",
		"WEBHOOKS_ATTEMPT_TIMEOUT=1s", "WEBHOOKS_LEASE=3s", "WEBHOOKS_POLL_INTERVAL=200ms",
		"WEBHOOKS_RETRY_SCHEDULE=100ms,100ms,100ms,100ms,100ms,100ms,100ms", "WEBHOOKS_RETRY_JITTER=0",
	}
	procs := []*process{startServe(t, env...), startServe(t, env...), startServe(t, env...)}
	a := procs[0].api(t, adminKey, "POST", "/v1/accounts", map[string]any{"name": "Ordered"}, 201)
	c := procs[0].api(t, adminKey, "POST", "/v1/companies", map[string]any{"account_id": a["id"], "nif": "B12345674", "name": "Ordered SL"}, 201)
	companyID := c["id"].(string)
	procs[1].api(t, adminKey, "POST", "/v1/companies/"+companyID+"/webhook_endpoints",
		map[string]any{"url": sink.URL + "/hooks", "enabled_events": []string{"invoice.*"}, "ordered": true}, 201)
	var wg sync.WaitGroup
	var registered atomic.Int64
	var dead atomic.Bool
	// register registers one event, with an idempotency key of its own:
	// a request the killed process cut is sent again to another, and
	// registers the event once.
	register := func(k, seq int) error {
		key := fmt.Sprintf("inv_%02d", k)
		body, _ := json.Marshal(map[string]any{
			"type": "invoice.sent", "company_id": companyID, "ordering_key": key,
			"data": map[string]any{"object": map[string]any{"object": "invoice", "key": key, "seq": seq}},
		})
		var err error
		for try := range 20 {
			p := procs[(k+seq+try)%3]
			if p == procs[2] && dead.Load() {
				continue
			}
			req, _ := http.NewRequest("POST", p.url+"/v1/events", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+adminKey)
			req.Header.Set("Idempotency-Key", fmt.Sprintf("%s-%d", key, seq))
			var resp *http.Response
			if resp, err = http.DefaultClient.Do(req); err != nil {
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 201 || resp.StatusCode == 200 {
				return nil
			}
			err = fmt.Errorf("POST /v1/events: %d", resp.StatusCode)
		}
		return err
	}
	for k := range keys {
		wg.Go(func() {
			for seq := range perKey {
				if err := register(k, seq); err != nil {
					t.Errorf("key %d, event %d: %v", k, seq, err)
					return
				}
				if registered.Add(1) == keys*perKey/2 {
					// Midway: the third process dies, its claims in flight.
					dead.Store(true)
					procs[2].cmd.Process.Signal(syscall.SIGKILL)
				}
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(120 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n >= keys*perKey {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries arrived", n, keys*perKey)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d deliveries, %d attempts", len(seen), attempts.Load())
	for _, o := range overlaps {
		t.Error(o)
	}
	for k, seqs := range first {
		if !slices.IsSorted(seqs) || len(seqs) != perKey {
			t.Errorf("key %s: first arrivals in the order %v, want 0 to %d in order", k, seqs, perKey-1)
		}
	}
}
