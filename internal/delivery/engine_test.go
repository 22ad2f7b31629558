package delivery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// queueStore is a Queue in memory: due deliveries, claims by token, and
// what was recorded and how.
type queueStore struct {
	mu          sync.Mutex
	ep          *webhooks.Endpoint
	due         []*webhooks.Delivery
	claimed     map[string]string // delivery id: token
	recorded    map[string]int    // delivery id: records stored
	viaClaim    int               // records stored by ClaimDeliveries
	viaRecord   int               // records stored by RecordAttempts
	released    []string
	deferred    []webhooks.Deferral
	failRecords int           // storing records fails this many times first
	mostClaimed int           // the most claims held at once
	claimCalls  int           // ClaimDeliveries transactions
	recordCalls int           // RecordAttempts transactions
	recordGate  chan struct{} // if set, storing records waits for it to close
}

func newQueueStore(url string, n int) *queueStore {
	s := &queueStore{
		ep:       &webhooks.Endpoint{ID: webhooks.NewID(), Scope: webhooks.ScopeCompany, URL: url, Secret: "whsec_test", Status: webhooks.EndpointEnabled},
		claimed:  map[string]string{},
		recorded: map[string]int{},
	}
	for range n {
		s.due = append(s.due, s.pending())
	}
	return s
}

// store stores records whose token still holds the claim. s.mu is held.
func (s *queueStore) store(records []*webhooks.AttemptRecord) int {
	n := 0
	for _, r := range records {
		id := r.Attempt.DeliveryID
		if s.claimed[id] == r.Token {
			delete(s.claimed, id)
			s.recorded[id]++
			n++
		}
	}
	return n
}

// pending is a new pending delivery to the store's endpoint.
func (s *queueStore) pending() *webhooks.Delivery {
	return &webhooks.Delivery{ID: webhooks.NewID(), EndpointID: s.ep.ID, EventID: webhooks.NewID(), EventType: "invoice.sent",
		Status: webhooks.DeliveryPending, Body: []byte(`{"id":"evt"}`)}
}

// inserted is what a registration inserts leased to token, for the
// engine to be handed: a pending delivery of the endpoint, claimed.
func (s *queueStore) inserted(token string) *webhooks.Claim {
	d := s.pending()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claimed[d.ID] = token
	return &webhooks.Claim{Delivery: d, Endpoint: s.ep, Token: token}
}

func (s *queueStore) ClaimDeliveries(_ context.Context, r webhooks.ClaimRequest) ([]*webhooks.Claim, error) {
	if s.recordGate != nil && len(r.Records) > 0 {
		<-s.recordGate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failRecords > 0 && len(r.Records) > 0 {
		s.failRecords--
		return nil, errors.New("the database is down")
	}
	s.claimCalls++
	s.viaClaim += s.store(r.Records)
	var claims []*webhooks.Claim
	for len(claims) < r.Limit && len(s.due) > 0 && (r.PerEndpoint == 0 || len(s.claimed) < r.PerEndpoint) {
		d := s.due[0]
		s.due = s.due[1:]
		s.claimed[d.ID] = r.Token
		claims = append(claims, &webhooks.Claim{Delivery: d, Endpoint: s.ep, Token: r.Token})
	}
	s.mostClaimed = max(s.mostClaimed, len(s.claimed))
	for _, c := range claims {
		r.Hold(c.Endpoint.ID)
	}
	return claims, nil
}

func (s *queueStore) RecordAttempts(_ context.Context, records []*webhooks.AttemptRecord) error {
	if s.recordGate != nil {
		<-s.recordGate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failRecords > 0 {
		s.failRecords--
		return errors.New("the database is down")
	}
	s.recordCalls++
	s.viaRecord += s.store(records)
	return nil
}

func (s *queueStore) ReleaseClaims(_ context.Context, token string, ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if s.claimed[id] == token {
			delete(s.claimed, id)
			s.released = append(s.released, id)
		}
	}
	return nil
}

func (s *queueStore) DeferClaims(_ context.Context, ds []webhooks.Deferral) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range ds {
		if s.claimed[d.DeliveryID] == d.Token {
			delete(s.claimed, d.DeliveryID)
			s.deferred = append(s.deferred, d)
		}
	}
	return nil
}

func (s *queueStore) NextScheduled(context.Context, time.Time) (time.Time, error) {
	return time.Time{}, nil
}

// counts returns what the store holds, under its lock.
func (s *queueStore) counts() (recorded, twice, viaClaim, viaRecord, released, claimed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.recorded {
		recorded++
		if n > 1 {
			twice++
		}
	}
	return recorded, twice, s.viaClaim, s.viaRecord, len(s.released), len(s.claimed)
}

// newEngine returns an engine on s with cfg's settings, and test ones for
// those cfg leaves zero; its safety-net poll is an hour: whatever it does
// in a test, it does because something woke it.
func newEngine(s *queueStore, cfg Config) *Engine {
	cfg.Queue, cfg.Client = s, NewClient(http.DefaultTransport)
	cfg.AttemptTimeout = cmp.Or(cfg.AttemptTimeout, 5*time.Second)
	cfg.Lease = cmp.Or(cfg.Lease, time.Minute)
	cfg.PollInterval = cmp.Or(cfg.PollInterval, time.Hour)
	return New(cfg)
}

// run runs e until the returned stop is called; stop returns once Run has.
func run(t *testing.T, e *Engine) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// runEngine runs an engine on s, with a cap of 8 attempts per endpoint,
// until the returned stop is called.
func runEngine(t *testing.T, s *queueStore, grace time.Duration) (stop func()) {
	t.Helper()
	return run(t, newEngine(s, Config{PerEndpoint: 8, ShutdownGrace: grace}))
}

// okServer is a receiver that answers 204 at once.
func okServer(t *testing.T) (url string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	t.Cleanup(srv.Close)
	return srv.URL
}

// hangingServer is a receiver that answers no request until the test
// ends; arrived counts the requests.
func hangingServer(t *testing.T) (url string, arrived *atomic.Int32) {
	arrived = new(atomic.Int32)
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hang) }) // runs first
	return srv.URL, arrived
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEngine_Records: every attempt is recorded once, and the cap of 8
// claims per endpoint turns over as records free slots (the attempt's end
// wakes the dispatcher: its poll would take an hour). While the endpoint
// holds its cap, with a backlog queued, the records go with the claims
// that take their slots; the last ones, with nothing left queued, alone.
func TestEngine_Records(t *testing.T) {
	url := okServer(t)
	const n = 100
	s := newQueueStore(url, n)
	runEngine(t, s, time.Second)
	waitUntil(t, "every delivery recorded", func() bool { r, _, _, _, _, _ := s.counts(); return r == n })
	_, twice, viaClaim, viaRecord, _, _ := s.counts()
	if twice != 0 {
		t.Errorf("%d deliveries recorded twice", twice)
	}
	if viaClaim+viaRecord != n || viaClaim < n-8 {
		t.Errorf("%d records by claims, %d by RecordAttempts; want %d in all, at least %d by claims", viaClaim, viaRecord, n, n-8)
	}
}

// TestEngine_ShutdownWaitsForAttempts: a stop within the grace lets the
// attempts in flight finish, and stores their records before Run returns.
func TestEngine_ShutdownWaitsForAttempts(t *testing.T) {
	var arrived atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		time.Sleep(200 * time.Millisecond)
		w.WriteHeader(204)
	}))
	defer srv.Close()
	s := newQueueStore(srv.URL, 5)
	stop := runEngine(t, s, 10*time.Second)
	waitUntil(t, "5 attempts in flight", func() bool { return arrived.Load() == 5 })
	stop()
	if recorded, _, _, _, released, claimed := s.counts(); recorded != 5 || released != 0 || claimed != 0 {
		t.Errorf("after a graceful stop: %d recorded, %d handed back, %d still claimed; want 5, 0, 0", recorded, released, claimed)
	}
}

// TestEngine_ShutdownHandsBack: attempts still in flight when the grace
// ends are aborted, and their claims handed back, not recorded.
func TestEngine_ShutdownHandsBack(t *testing.T) {
	url, arrived := hangingServer(t)
	s := newQueueStore(url, 5)
	stop := runEngine(t, s, 50*time.Millisecond)
	waitUntil(t, "5 attempts in flight", func() bool { return arrived.Load() == 5 })
	stop()
	if recorded, _, _, _, released, claimed := s.counts(); recorded != 0 || released != 5 || claimed != 0 {
		t.Errorf("after an aborted stop: %d recorded, %d handed back, %d still claimed; want 0, 5, 0", recorded, released, claimed)
	}
}

// TestEngine_RecordFailuresRetried: while the store refuses the claims
// that carry records, the dispatcher keeps them and tries again; none is
// lost or stored twice.
func TestEngine_RecordFailuresRetried(t *testing.T) {
	url := okServer(t)
	const n = 20
	s := newQueueStore(url, n)
	s.failRecords = 3
	runEngine(t, s, time.Second)
	waitUntil(t, "every delivery recorded", func() bool { r, _, _, _, _, _ := s.counts(); return r == n })
	if _, twice, _, _, _, _ := s.counts(); twice != 0 {
		t.Errorf("%d deliveries recorded twice", twice)
	}
}

// TestEngine_ConcurrencyCountsUnstoredRecords: an ended attempt holds its
// slot until its record is stored, so a process never holds more claims
// than its concurrency, and one that dies repeats at most that many
// attempts; here the store refuses the claims that carry records for a
// while, and wake-ups (registrations, other processes) keep asking the
// dispatcher to claim.
func TestEngine_ConcurrencyCountsUnstoredRecords(t *testing.T) {
	url := okServer(t)
	const n, concurrency = 40, 4
	s := newQueueStore(url, n)
	s.failRecords = 4
	e := newEngine(s, Config{Concurrency: concurrency})
	defer run(t, e)()
	deadline := time.Now().Add(20 * time.Second)
	for r, _, _, _, _, _ := s.counts(); r < n; r, _, _, _, _, _ = s.counts() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %d of %d deliveries recorded", r, n)
		}
		e.Wake()
		time.Sleep(time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mostClaimed > concurrency {
		t.Errorf("the engine held %d claims at once, more than its concurrency of %d", s.mostClaimed, concurrency)
	}
}

// TestEngine_HasRoom: the engine has room while it runs with fewer
// attempts in flight than its concurrency of 2, and none before or after.
func TestEngine_HasRoom(t *testing.T) {
	for _, tc := range []struct {
		inFlight int
		want     bool
	}{{1, true}, {2, false}} {
		t.Run(fmt.Sprint(tc.inFlight, " in flight"), func(t *testing.T) {
			url, arrived := hangingServer(t)
			e := newEngine(newQueueStore(url, tc.inFlight), Config{Concurrency: 2, ShutdownGrace: 50 * time.Millisecond})
			if e.HasRoom() {
				t.Error("an engine not yet running has room")
			}
			stop := run(t, e)
			waitUntil(t, "the attempts in flight", func() bool { return int(arrived.Load()) == tc.inFlight })
			if got := e.HasRoom(); got != tc.want {
				t.Errorf("running with %d of 2 attempts in flight: HasRoom() = %v, want %v", tc.inFlight, got, tc.want)
			}
			stop()
			if e.HasRoom() {
				t.Error("a stopped engine has room")
			}
		})
	}
}

// TestEngine_HandOff: deliveries a store leased to the engine and handed
// over are attempted and recorded without a claim transaction; leases stop
// at the endpoint's cap and the engine's concurrency, and a lease given
// back frees its slot.
func TestEngine_HandOff(t *testing.T) {
	s := newQueueStore(okServer(t), 0)
	e := newEngine(s, Config{PerEndpoint: 8, Concurrency: 10, ShutdownGrace: time.Second})
	run(t, e)
	waitUntil(t, "the engine running", func() bool { return e.HasRoom() })
	now := time.Now()
	var tokens []string
	for range 8 {
		token, until, ok := e.Lease(s.ep.ID, now)
		if !ok || until.Before(now.Add(e.cfg.AttemptTimeout)) {
			t.Fatalf("lease refused or too short (%v, until %v) below the cap", ok, until)
		}
		tokens = append(tokens, token)
	}
	if _, _, ok := e.Lease(s.ep.ID, now); ok {
		t.Fatal("a 9th lease to an endpoint with a cap of 8")
	}
	other := webhooks.NewID()
	for range 2 {
		if _, _, ok := e.Lease(other, now); !ok {
			t.Fatal("a lease to another endpoint refused below the concurrency")
		}
	}
	if _, _, ok := e.Lease(webhooks.NewID(), now); ok {
		t.Fatal("an 11th lease with a concurrency of 10")
	}
	e.Unlease([]string{other, other})
	e.Unlease([]string{s.ep.ID, s.ep.ID, s.ep.ID})

	s.mu.Lock()
	calls := s.claimCalls
	s.mu.Unlock()
	var claims []*webhooks.Claim
	for _, token := range tokens[:5] {
		claims = append(claims, s.inserted(token))
	}
	e.Hand(claims)
	waitUntil(t, "the handed deliveries recorded", func() bool { r, _, _, _, _, _ := s.counts(); return r == 5 })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.viaRecord != 5 || s.claimCalls != calls {
		t.Errorf("%d records by RecordAttempts and %d claim transactions; want 5 and none", s.viaRecord, s.claimCalls-calls)
	}
}

// TestEngine_RecordWindow: the records of attempts that end apart are
// stored together within the RecordWindow, and at once without one; with
// several processes on the database, the window is that many times
// longer (Processes).
func TestEngine_RecordWindow(t *testing.T) {
	for _, tc := range []struct {
		window   time.Duration
		procs    int // 0: no Processes
		min, max int // transactions
	}{{0, 0, 3, 5}, {time.Second, 0, 1, 1}, {100 * time.Millisecond, 1, 2, 3}, {100 * time.Millisecond, 3, 1, 1}} {
		t.Run(fmt.Sprintf("%v×%d", tc.window, tc.procs), func(t *testing.T) {
			// The n-th request is answered 50·n ms after it arrives.
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(time.Duration(n.Add(1)) * 50 * time.Millisecond)
				w.WriteHeader(204)
			}))
			t.Cleanup(srv.Close)
			s := newQueueStore(srv.URL, 0)
			cfg := Config{PerEndpoint: 8, ShutdownGrace: time.Second, RecordWindow: tc.window}
			if tc.procs > 0 {
				cfg.Processes = func() int { return tc.procs }
			}
			e := newEngine(s, cfg)
			run(t, e)
			waitUntil(t, "the engine running", func() bool { return e.HasRoom() })
			var claims []*webhooks.Claim
			for range 5 {
				token, _, ok := e.Lease(s.ep.ID, time.Now())
				if !ok {
					t.Fatal("lease refused")
				}
				claims = append(claims, s.inserted(token))
			}
			e.Hand(claims)
			waitUntil(t, "the records stored", func() bool { r, _, _, _, _, _ := s.counts(); return r == 5 })
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.recordCalls < tc.min || s.recordCalls > tc.max {
				t.Errorf("records stored in %d transactions, want %d to %d", s.recordCalls, tc.min, tc.max)
			}
		})
	}
}

// TestEngine_ChainRecordsSkipTheWindow: a record that ends a delivery of
// a chain is stored at once, whatever the RecordWindow: the chain's next
// delivery waits for it (SPEC 18). One of a delivery outside any chain
// waits for the window.
func TestEngine_ChainRecordsSkipTheWindow(t *testing.T) {
	s := newQueueStore(okServer(t), 0)
	e := newEngine(s, Config{PerEndpoint: 8, ShutdownGrace: time.Second, RecordWindow: time.Hour})
	run(t, e)
	waitUntil(t, "the engine running", func() bool { return e.HasRoom() })
	hand := func(key string) {
		token, _, ok := e.Lease(s.ep.ID, time.Now())
		if !ok {
			t.Fatal("lease refused")
		}
		c := s.inserted(token)
		c.Delivery.OrderingKey = key
		e.Hand([]*webhooks.Claim{c})
	}
	hand("")
	waitUntil(t, "the first record waiting", func() bool { return e.inflight.Load() == 0 && e.unstored.Load() == 1 })
	if r, _, _, _, _, _ := s.counts(); r != 0 {
		t.Fatalf("%d records stored within the window, want 0", r)
	}
	hand("customer-1")
	waitUntil(t, "both records stored", func() bool { r, _, _, _, _, _ := s.counts(); return r == 2 })
}

// TestEngine_LeaseCountsAttemptsInFlight: the cap bounds an endpoint's
// attempts in flight. An attempt that ended frees its slot for a lease
// before its record is stored (the record may wait behind other writes);
// it still counts for the claims, as its lease does in the database.
func TestEngine_LeaseCountsAttemptsInFlight(t *testing.T) {
	s := newQueueStore(okServer(t), 0)
	s.recordGate = make(chan struct{})
	e := newEngine(s, Config{PerEndpoint: 2, ShutdownGrace: time.Second})
	defer close(s.recordGate)
	run(t, e)
	waitUntil(t, "the engine running", func() bool { return e.HasRoom() })
	var claims []*webhooks.Claim
	for range 2 {
		token, _, ok := e.Lease(s.ep.ID, time.Now())
		if !ok {
			t.Fatal("a lease refused below the cap")
		}
		claims = append(claims, s.inserted(token))
	}
	if _, _, ok := e.Lease(s.ep.ID, time.Now()); ok {
		t.Fatal("a third lease with two attempts in flight and a cap of 2")
	}
	e.Hand(claims)
	// Both attempts end; their records wait at the gate.
	waitUntil(t, "the attempts ended", func() bool {
		e.slots.mu.Lock()
		defer e.slots.mu.Unlock()
		return e.slots.active[s.ep.ID] == 0 && e.slots.held[s.ep.ID] == 2
	})
	if _, _, ok := e.Lease(s.ep.ID, time.Now()); !ok {
		t.Error("a lease refused with no attempt in flight, only records not yet stored")
	} else {
		e.Unlease([]string{s.ep.ID})
	}
}

// TestEngine_ClaimPastTheCapWaits: a claim that comes back for an endpoint
// whose slots a store's hand-off took meanwhile (the claim's transaction
// could not see the hand-off, not yet committed) is not attempted past the
// endpoint's cap: it goes back to the queue, deferred, and no second
// request reaches the receiver while the first hangs.
func TestEngine_ClaimPastTheCapWaits(t *testing.T) {
	url, arrived := hangingServer(t)
	s := newQueueStore(url, 0)
	e := newEngine(s, Config{PerEndpoint: 1, ShutdownGrace: time.Second})
	run(t, e)
	waitUntil(t, "the engine running", func() bool { return e.HasRoom() })
	token, _, ok := e.Lease(s.ep.ID, time.Now())
	if !ok {
		t.Fatal("lease refused")
	}
	// Not in the store's claims: its transaction has not committed when
	// the claim below counts the endpoint's.
	e.Hand([]*webhooks.Claim{{Delivery: s.pending(), Endpoint: s.ep, Token: token}})
	waitUntil(t, "the handed attempt", func() bool { return arrived.Load() == 1 })
	s.mu.Lock()
	s.due = append(s.due, s.pending())
	s.mu.Unlock()
	e.Wake() // the claim finds it due
	waitUntil(t, "the claim deferred", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.deferred) == 1
	})
	if n := arrived.Load(); n != 1 {
		t.Errorf("the receiver got %d requests at once, want 1 (the cap)", n)
	}
}
