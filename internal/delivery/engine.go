package delivery

import (
	"cmp"
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime/pprof"
	"sync/atomic"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/tracing"
)

// Defaults of Config.
const (
	DefaultAttemptTimeout = 10 * time.Second
	DefaultConcurrency    = 512
	DefaultPerEndpoint    = 256
	DefaultPollInterval   = time.Second
	DefaultBatchSize      = 100
)

// Queue is the work queue the engine takes deliveries from and records
// attempts in. Each method is one transaction.
type Queue interface {
	// ClaimDeliveries stores r.Records, then claims up to r.Limit due
	// deliveries (none when r.Limit is 0), oldest due first, skipping
	// endpoints at their cap.
	ClaimDeliveries(ctx context.Context, r webhooks.ClaimRequest) ([]*webhooks.Claim, error)
	// RecordAttempts stores attempts and the deliveries' new states. A
	// record whose token the delivery no longer holds is dropped, so a
	// lapsed claim cannot record an attempt twice. If the delivery stopped
	// being pending meanwhile (its endpoint was disabled), only a
	// transition that OverridesEnd changes its state.
	RecordAttempts(ctx context.Context, records []*webhooks.AttemptRecord) error
	// ReleaseClaims hands back claimed deliveries without an attempt.
	ReleaseClaims(ctx context.Context, token string, ids []string) error
	// DeferClaims hands back claimed deliveries without an attempt, each
	// due again at its Until: those a rate limit holds back (SPEC 14). A
	// deferral whose token the delivery no longer holds is dropped.
	DeferClaims(ctx context.Context, deferrals []webhooks.Deferral) error
	// NextScheduled returns the earliest next_attempt_at after now, or the
	// zero time when nothing is scheduled.
	NextScheduled(ctx context.Context, now time.Time) (time.Time, error)
}

// Config configures an Engine. Zero fields take the defaults above.
type Config struct {
	Queue Queue
	// Client makes the attempts. It must not follow redirects and should
	// dial through the SSRF guard; NewClient builds one.
	Client *http.Client
	Policy webhooks.RetryPolicy
	// AttemptTimeout bounds an attempt from dial to the end of the answer.
	AttemptTimeout time.Duration
	// Concurrency caps this process's claims: its attempts in flight and
	// the ended ones whose records are not stored yet (a process that
	// dies repeats at most that many attempts).
	Concurrency int
	// PerEndpoint caps the attempts in flight to one endpoint across every
	// process on the database, so that a slow endpoint with a deep backlog
	// holds at most that many workers.
	PerEndpoint int
	// Lease is how long a claim lasts before another worker may take the
	// delivery. It must exceed AttemptTimeout. Defaults to AttemptTimeout
	// plus 30 seconds.
	Lease time.Duration
	// PollInterval is the safety net: the engine looks for due work at
	// least this often, even if nothing woke it.
	PollInterval time.Duration
	// RecordWindow is how long the records of ended attempts may wait for
	// more before they are stored (0: stored once the dispatcher is free;
	// a claim stores them at once, and a batch of DefaultBatchSize, or one
	// with a record that ends a delivery of a chain, goes without
	// waiting). It is the backend's (driver.GroupCommit): a
	// database whose cost follows its transactions, shared by several
	// processes that each see a share of the attempts, would otherwise
	// store a few records per transaction. The slots free as the attempts
	// end, so the window delays only what the API shows.
	RecordWindow time.Duration
	// Processes, if set, says how many processes share the database: the
	// window is RecordWindow times that (driver.GroupCommit.Processes).
	Processes func() int
	// ShutdownGrace is how long Run waits, once its context ends, for the
	// attempts in flight to finish before it aborts them and hands their
	// deliveries back. Defaults to AttemptTimeout plus one second.
	ShutdownGrace time.Duration
	// IsRefused reports whether an attempt's error means the address was
	// refused by the SSRF guard: such a delivery fails permanently.
	IsRefused func(error) bool
	// Now and Random are the clock and the jitter's source; tests replace them.
	Now    func() time.Time
	Random func() float64
	Logger *slog.Logger
	// Metrics receives the engine's measurements; nil discards them.
	Metrics Metrics
	// Tracing makes a span of each attempt, linked to the span that
	// registered its event (nil: tracing off).
	Tracing *tracing.Tracing
	// Recorded, if set, is called after each batch of attempts is stored.
	Recorded func([]*webhooks.AttemptRecord)
	// Limiter spaces the attempts to rate-limited endpoints. Nil: one of
	// this process alone (right for a store only this process uses).
	Limiter Limiter
	// Slots, if set, is the semaphore of the per-endpoint cap across every
	// process on a shared database: an attempt starts only with a slot of
	// it. Nil: this process's own count is the cap (a database only this
	// process uses).
	Slots driver.Semaphore
	// Relay carries the attempts of relay endpoints (SPEC 20). Nil: they
	// fail relay_not_connected.
	Relay Relay
	// Looked, if set, is called after each claim that looked for due
	// deliveries, with the time it looked at and how many it claimed: a
	// look at t that claimed none proves nothing was due at t (tests wait
	// on it instead of sleeping).
	Looked func(now time.Time, claimed int)
}

// Engine claims due deliveries and attempts them.
type Engine struct {
	cfg Config

	wake     chan struct{}
	results  chan result            // finished attempts, to the dispatcher
	handed   chan []*webhooks.Claim // see Hand
	slots    slots                  // per endpoint, see Lease
	progress progress               // see Pace
	token    string                 // of the leases stores take for the engine
	// inflight counts the attempts in flight, and the leases taken for
	// attempts about to start; unstored the ended ones whose records (or
	// deferrals) are not stored yet. Their sum, the claims the process
	// holds, is what Concurrency caps: a process that dies repeats at most
	// that many attempts, however slow its database was to store them.
	inflight atomic.Int64
	unstored atomic.Int64
	// running is true while Run claims.
	running atomic.Bool
	// storing is true while the dispatcher stores records (see Pace).
	storing atomic.Bool
	// waiting counts the attempts waiting for a rate-limited endpoint's
	// next start; deferrals spreads the ones handed back (see throttle).
	waiting   atomic.Int64
	deferrals deferrals
}

// result is a finished attempt: its record, or nil when shutdown aborted it
// and its claim is to be handed back.
type result struct {
	claim  *webhooks.Claim
	record *webhooks.AttemptRecord
	// deferUntil is set instead of record when a rate limit held the
	// attempt back: the delivery is due again then.
	deferUntil time.Time
}

// New returns an engine; Run starts it.
func New(cfg Config) *Engine {
	cfg.AttemptTimeout = cmp.Or(cfg.AttemptTimeout, DefaultAttemptTimeout)
	cfg.Concurrency = cmp.Or(cfg.Concurrency, DefaultConcurrency)
	cfg.PerEndpoint = cmp.Or(cfg.PerEndpoint, DefaultPerEndpoint)
	cfg.Lease = cmp.Or(cfg.Lease, cfg.AttemptTimeout+30*time.Second)
	cfg.PollInterval = cmp.Or(cfg.PollInterval, DefaultPollInterval)
	cfg.ShutdownGrace = cmp.Or(cfg.ShutdownGrace, cfg.AttemptTimeout+time.Second)
	if cfg.Policy.Waits == nil {
		cfg.Policy = webhooks.DefaultRetryPolicy()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Random == nil {
		cfg.Random = rand.Float64
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = nopMetrics{}
	}
	if cfg.IsRefused == nil {
		cfg.IsRefused = func(error) bool { return false }
	}
	if cfg.Client == nil {
		cfg.Client = NewClient(http.DefaultTransport)
	}
	if cfg.Limiter == nil {
		cfg.Limiter = newLocalLimiter()
	}
	if cfg.Lease <= cfg.AttemptTimeout {
		panic("delivery: Lease must exceed AttemptTimeout")
	}
	e := &Engine{
		cfg:     cfg,
		wake:    make(chan struct{}, 1),
		results: make(chan result, cfg.Concurrency),
		handed:  make(chan []*webhooks.Claim, cfg.Concurrency),
		slots:   newSlots(),
		token:   webhooks.NewID(),
	}
	return e
}

// Wake tells the engine that deliveries may be due now: it claims at once
// instead of waiting for its next poll. It never blocks.
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Policy returns the retry schedule the engine follows (the default when
// its Config had none).
func (e *Engine) Policy() webhooks.RetryPolicy { return e.cfg.Policy }

// HasRoom reports whether the engine is running and holds fewer claims
// than its Concurrency: a Wake makes it claim due work at once. A store
// shared by several processes uses it to wake the others only for work
// this one cannot take (see app.Engine).
func (e *Engine) HasRoom() bool {
	return e.running.Load() && e.held() < int64(e.cfg.Concurrency)
}

// held is the number of claims the process holds (see inflight).
func (e *Engine) held() int64 { return e.inflight.Load() + e.unstored.Load() }

// Run claims and attempts deliveries until ctx ends, then stops: it waits
// up to ShutdownGrace for the attempts in flight, aborts and hands back the
// rest, and stores every result it has.
//
// The dispatcher (this goroutine) starts the attempts of the deliveries
// stores hand over (see Lease), claims due deliveries when told some wait
// in the database (see loop), one transaction at a time, and stores the
// records of ended attempts in batches: those that ended while the last
// transaction ran. A claim stores the records waiting first, in its own
// transaction, so that the slots they free are its to take.
func (e *Engine) Run(ctx context.Context) error {
	// Attempts outlive ctx: a SIGTERM lets them finish within the grace.
	attemptCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	d := &dispatcher{Engine: e, attemptCtx: attemptCtx}
	e.running.Store(true)
	d.loop(ctx)
	e.running.Store(false)

	grace := time.NewTimer(e.cfg.ShutdownGrace)
	defer grace.Stop()
	for e.inflight.Load() > 0 {
		select {
		case r := <-e.results:
			d.collect(r)
		case cs := <-e.handed:
			// Handed over as the loop stopped: given back, not attempted.
			for _, c := range cs {
				d.inflight.Add(-1)
				d.slots.ended(c.Endpoint.ID)
				d.aborted = append(d.aborted, c)
			}
		case <-grace.C:
			e.cfg.Logger.Warn("delivery: attempts still in flight after the shutdown grace; handing them back", "attempts", e.inflight.Load())
			abort()
		}
	}
	d.flush()
	// What a rate limit held back is handed back due now, with the
	// aborted: the next process spaces it again.
	d.aborted, d.deferred, d.until = append(d.aborted, d.deferred...), nil, nil
	d.release()
	return nil
}

// attemptLabels label the attempts' goroutines in CPU profiles, apart
// from the dispatcher's (role=engine) that starts them.
var attemptLabels = pprof.WithLabels(context.Background(), pprof.Labels("role", "attempt"))

// dispatcher is the state of Run's goroutine.
type dispatcher struct {
	*Engine
	attemptCtx context.Context
	records    []*webhooks.AttemptRecord // of ended attempts, not stored yet
	endpoints  []string                  // records[i]'s endpoint, whose slot it holds
	since      time.Time                 // when records' first ended (see RecordWindow)
	chained    bool                      // one of records ends a delivery of a chain (see recordsDue)
	aborted    []*webhooks.Claim         // claims to hand back
	deferred   []*webhooks.Claim         // claims a rate limit held back, to hand back until…
	until      []time.Time               // …deferred[i]'s time
	// next is the earliest scheduled attempt known at nextAsked, and
	// since learned from records (see nextScheduled).
	next, nextAsked time.Time
}

// collect takes in a finished attempt.
func (d *dispatcher) collect(r result) {
	d.cfg.Metrics.InFlight(int(d.inflight.Add(-1)))
	if !r.deferUntil.IsZero() {
		d.unstored.Add(1)
		d.deferred, d.until = append(d.deferred, r.claim), append(d.until, r.deferUntil)
		if d.next.IsZero() || r.deferUntil.Before(d.next) {
			d.next = r.deferUntil
		}
		return
	}
	if r.record == nil {
		d.aborted = append(d.aborted, r.claim)
		return
	}
	d.unstored.Add(1)
	if len(d.records) == 0 {
		d.since = time.Now() // the wall's: the window is the process's, not the domain's clock
	}
	d.records = append(d.records, r.record)
	d.endpoints = append(d.endpoints, r.claim.Endpoint.ID)
	d.chained = d.chained || r.record.Chained() && r.record.Transition.Status != webhooks.DeliveryPending
	// The dispatcher learns the retries it schedules (see nextScheduled).
	if t := r.record.Transition; t.Status == webhooks.DeliveryPending && !t.NextAttemptAt.IsZero() &&
		(d.next.IsZero() || t.NextAttemptAt.Before(d.next)) {
		d.next = t.NextAttemptAt
	}
}

// loop claims, starts attempts and stores their results until ctx ends.
//
// Most deliveries do not need a claim: the store that registered them
// handed them over already leased (see Lease). The loop looks in the
// database for due work only when told some is there (a wake, the poll,
// a retry it scheduled, a claim that filled its limit), and stores the
// records of ended attempts in batches: those that ended while the last
// transaction ran.
func (d *dispatcher) loop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	backoff := time.Duration(0)
	look := true
	for ctx.Err() == nil {
		d.drain()
		limit := min(d.cfg.Concurrency-int(d.held()), DefaultBatchSize)
		var err error
		switch {
		case len(d.deferred) > 0:
			err = d.deferNow(ctx)
		case look && limit > 0, len(d.records) > 0 && d.queued():
			// The claim stores the records first: the slots they free
			// are the claim's to take.
			var n int
			if n, err = d.claim(ctx, limit); err == nil {
				look = limit > 0 && n == limit // there may be more due right now
			}
		case len(d.records) > 0 && d.recordsDue():
			err = d.record(ctx)
		default:
			d.wait(ctx, timer, &look)
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, 50*time.Millisecond), 5*time.Second)
			d.cfg.Logger.Error("delivery: claiming or recording failed; retrying", "err", err, "retry_in", backoff)
			if !sleep(ctx, backoff) {
				return
			}
			continue
		}
		backoff = 0
	}
}

// drain takes in the attempts that ended and the claims handed over.
func (d *dispatcher) drain() {
	for {
		select {
		case r := <-d.results:
			d.collect(r)
		case cs := <-d.handed:
			d.startHanded(cs)
		default:
			return
		}
	}
}

// queued reports whether one of the records' endpoints holds its cap: it
// may have deliveries queued for a slot (parked), which only a claim
// takes.
func (d *dispatcher) queued() bool {
	if d.cfg.PerEndpoint == 0 {
		return false
	}
	d.slots.mu.Lock()
	defer d.slots.mu.Unlock()
	for _, e := range d.endpoints {
		if d.slots.held[e] >= d.cfg.PerEndpoint {
			return true
		}
	}
	return false
}

// recordsDue reports whether the records waiting are to be stored now
// (see RecordWindow). One that ends a delivery of a chain goes at once:
// the next delivery of the chain waits for it (SPEC 18), so a window
// would hold every chain to a delivery per window.
func (d *dispatcher) recordsDue() bool {
	return d.chained || len(d.records) >= DefaultBatchSize || time.Since(d.since) >= d.recordWindow()
}

// recordWindow is RecordWindow, times Processes().
func (d *dispatcher) recordWindow() time.Duration {
	return driver.ScaleByProcesses(d.cfg.RecordWindow, d.cfg.Processes)
}

// wait waits for something to do: a wake-up or the poll (then *look is
// set), the end of the records' window, an ended attempt, or handed
// claims.
func (d *dispatcher) wait(ctx context.Context, timer *time.Timer, look *bool) {
	wait := d.cfg.PollInterval
	if next := d.nextScheduled(ctx); !next.IsZero() {
		wait = min(wait, max(next.Sub(d.cfg.Now()), time.Millisecond))
	}
	polled := true // the timer is the poll's, not the records' window's
	if len(d.records) > 0 {
		if w := max(time.Until(d.since.Add(d.recordWindow())), 0); w < wait {
			wait, polled = w, false
		}
	}
	timer.Reset(wait)
	select {
	case <-ctx.Done():
	case <-d.wake:
		*look = true
	case <-timer.C:
		*look = polled
	case r := <-d.results:
		d.collect(r)
	case cs := <-d.handed:
		d.startHanded(cs)
	}
	if !timer.Stop() {
		select {
		case <-timer.C:
		default:
		}
	}
}

// nextScheduled returns the earliest attempt scheduled after now that the
// dispatcher knows of, or the zero time. Asking the store is a transaction
// on the dispatcher's path, which under load waits every few milliseconds
// (and, with several processes, between each process's few attempts); so
// it asks at most once per poll interval, and learns the retries it
// schedules itself from its own records. What the API makes due comes with
// a wake-up, and the retries another process scheduled and did not make
// (it died) are found within a poll interval, as the poll finds them.
func (d *dispatcher) nextScheduled(ctx context.Context) time.Time {
	now := d.cfg.Now()
	if now.Sub(d.nextAsked) < d.cfg.PollInterval && (d.next.IsZero() || d.next.After(now)) {
		return d.next
	}
	next, err := d.cfg.Queue.NextScheduled(ctx, now)
	if err != nil {
		return time.Time{}
	}
	d.next, d.nextAsked = next, now
	return next
}

// claim stores the records of ended attempts and claims up to limit due
// deliveries, starting their attempts.
func (d *dispatcher) claim(ctx context.Context, limit int) (int, error) {
	now := d.cfg.Now()
	if len(d.records) > 0 {
		d.storing.Store(true)
		defer d.storing.Store(false)
	}
	var held []string // the claims' slots, taken before the claim commits
	claims, err := d.cfg.Queue.ClaimDeliveries(ctx, webhooks.ClaimRequest{
		Now:         now,
		Limit:       limit,
		Token:       webhooks.NewID(),
		LeaseUntil:  now.Add(d.cfg.Lease),
		PerEndpoint: d.cfg.PerEndpoint,
		Records:     d.records,
		Hold: func(endpointID string) {
			d.inflight.Add(1)
			d.slots.add(endpointID)
			held = append(held, endpointID)
		},
		Traceparents: d.cfg.Tracing.Enabled(),
	})
	if err != nil {
		d.Unlease(held)
		return 0, err // the records wait for the next claim
	}
	d.stored()
	if limit > 0 && d.cfg.Looked != nil {
		d.cfg.Looked(now, len(claims))
	}
	d.start(claims)
	d.cfg.Metrics.Started(len(claims), false)
	return len(claims), nil
}

// startHanded starts the attempts of claims a store handed over.
func (d *dispatcher) startHanded(claims []*webhooks.Claim) {
	d.start(claims)
	d.cfg.Metrics.Started(len(claims), true)
}

// start starts the attempts of claims, whose slots are taken.
func (d *dispatcher) start(claims []*webhooks.Claim) {
	var ok []*webhooks.Claim
	for _, c := range claims {
		if d.slots.over(c.Endpoint.ID, d.cfg.PerEndpoint) {
			// A registration's hand-off, which the claim's transaction did
			// not see (it had not committed), took the endpoint's last
			// slot: this one goes back to the queue, due again shortly,
			// rather than past the cap.
			d.overCap(c)
			continue
		}
		ok = append(ok, c)
	}
	slots := d.acquire(ok)
	for i, c := range ok {
		if !slots[i].OK {
			d.overCap(c) // every slot of the endpoint is taken, in this process or another
			continue
		}
		slot := slots[i]
		go func() {
			pprof.SetGoroutineLabels(attemptLabels)
			if c.Endpoint.RateLimit > 0 {
				if ok, until := d.throttle(d.attemptCtx, c); !ok {
					d.ended(c, slot)
					if d.attemptCtx.Err() != nil {
						until = time.Time{} // shutdown: handed back as aborted
					}
					d.results <- result{claim: c, deferUntil: until}
					return
				}
			}
			rec := d.attempt(d.attemptCtx, c)
			// The endpoint's slot frees as the attempt ends, not when the
			// dispatcher, which may be storing records, takes its result.
			d.ended(c, slot)
			d.results <- result{claim: c, record: rec}
		}()
	}
	if len(claims) > 0 {
		d.cfg.Metrics.InFlight(int(d.inflight.Load()))
	}
}

// overCap hands c back to the queue, due again about an attempt's time
// later: its endpoint has no free slot.
func (d *dispatcher) overCap(c *webhooks.Claim) {
	d.slots.ended(c.Endpoint.ID)
	d.collect(result{claim: c, deferUntil: d.cfg.Now().Add(overCapDelay)})
}

// acquire takes a slot of the cluster's semaphore for each claim (every
// one is OK without a semaphore or a cap).
func (d *dispatcher) acquire(claims []*webhooks.Claim) []driver.Slot {
	out := make([]driver.Slot, len(claims))
	if d.cfg.Slots == nil || d.cfg.PerEndpoint == 0 || len(claims) == 0 {
		for i := range out {
			out[i].OK = true
		}
		return out
	}
	endpoints := make([]string, len(claims))
	for i, c := range claims {
		endpoints[i] = c.Endpoint.ID
	}
	got, err := d.cfg.Slots.Acquire(d.attemptCtx, endpoints, d.cfg.PerEndpoint)
	if err != nil {
		// The semaphore does not answer: the attempts wait rather than go
		// past the cap.
		d.cfg.Logger.Warn("delivery: the endpoints' slots are not available; handing the deliveries back", "err", err)
		return out
	}
	return got
}

// ended counts c's attempt as ended, and gives back its slot.
func (d *dispatcher) ended(c *webhooks.Claim, slot driver.Slot) {
	d.slots.ended(c.Endpoint.ID)
	if d.cfg.Slots != nil && slot.Endpoint != "" {
		d.cfg.Slots.Release([]driver.Slot{slot})
	}
}

// record stores the records of ended attempts, without a claim.
func (d *dispatcher) record(ctx context.Context) error {
	d.storing.Store(true)
	defer d.storing.Store(false)
	if err := d.cfg.Queue.RecordAttempts(ctx, d.records); err != nil {
		return err
	}
	d.stored()
	return nil
}

// overCapDelay is how long a claim that would exceed its endpoint's cap
// waits in the queue: about an attempt's time, for a slot to free.
const overCapDelay = 100 * time.Millisecond

// deferNow hands back the claims a rate limit held back, each due again
// at its time, and frees their slots.
func (d *dispatcher) deferNow(ctx context.Context) error {
	ds := make([]webhooks.Deferral, len(d.deferred))
	for i, c := range d.deferred {
		ds[i] = webhooks.Deferral{DeliveryID: c.Delivery.ID, Token: c.Token, Until: d.until[i]}
	}
	if err := d.cfg.Queue.DeferClaims(ctx, ds); err != nil {
		return err
	}
	for _, c := range d.deferred {
		d.slots.free(c.Endpoint.ID)
	}
	d.unstored.Add(-int64(len(d.deferred)))
	d.deferred, d.until = nil, nil
	return nil
}

// stored reports the records just stored and frees their slots.
func (d *dispatcher) stored() {
	for _, rec := range d.records {
		d.cfg.Metrics.Recorded(rec)
	}
	if d.cfg.Recorded != nil && len(d.records) > 0 {
		d.cfg.Recorded(d.records)
	}
	for _, e := range d.endpoints {
		d.slots.free(e)
	}
	d.unstored.Add(-int64(len(d.records)))
	if len(d.records) > 0 {
		d.progress.signal()
	}
	d.records, d.endpoints, d.chained = nil, nil, false
}

// flush stores the last records (see persist).
func (d *dispatcher) flush() {
	if len(d.records) == 0 {
		return
	}
	err := persist(func(ctx context.Context) error { return d.cfg.Queue.RecordAttempts(ctx, d.records) })
	if err != nil {
		d.cfg.Logger.Error("delivery: could not store the last attempts; they will be made again when their claims lapse", "attempts", len(d.records), "err", err)
		return
	}
	d.stored()
}

// release hands back the claims of the attempts shutdown aborted (see
// persist).
func (d *dispatcher) release() {
	err := persist(func(ctx context.Context) error {
		for len(d.aborted) > 0 {
			c := d.aborted[0]
			if err := d.cfg.Queue.ReleaseClaims(ctx, c.Token, []string{c.Delivery.ID}); err != nil {
				return err
			}
			d.slots.free(c.Endpoint.ID)
			d.aborted = d.aborted[1:]
		}
		return nil
	})
	if err != nil {
		d.cfg.Logger.Error("delivery: could not hand back aborted attempts; they will be made again when their claims lapse", "attempts", len(d.aborted), "err", err)
	}
}

// persist calls fn, what Run stores as it stops, until it succeeds or 30
// seconds have passed, pausing longer after each failure, and returns its
// last error. Giving up costs little: what was not stored is an attempt
// made again once its claim lapses.
func persist(fn func(ctx context.Context) error) error {
	deadline := time.Now().Add(30 * time.Second)
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, 2*time.Second) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := fn(ctx)
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(backoff)
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
