// Package metrics exposes the service's Prometheus metrics at /metrics.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	webhooks "github.com/factuarea/webhooks"
)

// Metrics holds the service's metrics. It implements delivery.Metrics.
type Metrics struct {
	registry *prometheus.Registry

	events         prometheus.Counter
	finished       *prometheus.CounterVec
	attempts       *prometheus.CounterVec
	attemptSeconds prometheus.Histogram
	inFlight       prometheus.Gauge
	started        *prometheus.CounterVec
	throttled      *prometheus.CounterVec
	waiting        prometheus.Gauge
	requests       *prometheus.CounterVec
	requestSeconds *prometheus.HistogramVec
}

// Queue is what the metrics read of the work queue at each scrape.
type Queue interface {
	// QueueStats measures the queue at now.
	QueueStats(ctx context.Context, now time.Time) (webhooks.QueueStats, error)
}

// New returns the metrics, with the queue's gauges read from queue (with
// now's clock) at each scrape.
func New(queue Queue, now func() time.Time) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		events: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "webhooks_events_registered_total",
			Help: "Events registered by this process (repeated Idempotency-Keys not counted).",
		}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhooks_deliveries_finished_total",
			Help: "Deliveries that reached a final state after an attempt of this process, by state and reason.",
		}, []string{"status", "reason"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhooks_attempts_total",
			Help: "Attempts made by this process, by outcome: delivered (2xx), retry (retryable failure), rejected (other 4xx), refused (address not allowed).",
		}, []string{"outcome"}),
		attemptSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "webhooks_attempt_duration_seconds",
			Help:    "Time from the start of an attempt to the end of the endpoint's answer (or the failure).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "webhooks_attempts_in_flight",
			Help: "Attempts this process is making now.",
		}),
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhooks_attempts_started_total",
			Help: "Attempts this process started, by how it got the delivery: handed (registered here and handed to the engine in memory, already leased) or claimed (from the database's queue: retries, backlogs, other processes' work).",
		}, []string{"source"}),
		throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhooks_throttled_total",
			Help: "Attempts to rate-limited endpoints that the limit held: waited (for their start, a few seconds at most) or deferred (handed back, pending, until about their turn).",
		}, []string{"action"}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "webhooks_throttled_waiting",
			Help: "Attempts of this process waiting now for their rate-limited endpoint's next start.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhooks_http_requests_total",
			Help: "API requests, by route pattern and status code.",
		}, []string{"route", "code"}),
		requestSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "webhooks_http_request_duration_seconds",
			Help:    "API request latency, by route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
	}
	m.registry.MustRegister(m.events, m.finished, m.attempts, m.attemptSeconds, m.inFlight, m.started, m.throttled, m.waiting,
		m.requests, m.requestSeconds,
		&queueCollector{queue: queue, now: now},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if w, ok := queue.(WritePath); ok {
		m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "webhooks_store_write_seconds_total",
			Help: "Time the store's write path (SQLite's one write connection) was busy in transactions: its rate is how busy it is, and what bounds the throughput when it nears 1.",
		}, func() float64 { return w.WriteBusy().Seconds() }))
	}
	if st, ok := queue.(StoreSize); ok {
		m.registry.MustRegister(&sizeCollector{store: st})
	}
	if c, ok := queue.(Cluster); ok {
		m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "webhooks_processes",
			Help: "Processes on the database, as this process last counted them (every few seconds): its registrations and attempt records wait that many times one process's windows to be stored together.",
		}, func() float64 { return float64(c.Processes()) }))
	}
	return m
}

// Cluster is a store that several processes share, which counts them.
type Cluster interface {
	// Processes returns how many processes share the database, this one
	// included.
	Processes() int
}

// WritePath is a store whose writes go through one path, which it
// measures.
type WritePath interface {
	// WriteBusy returns the time the path was busy since the store opened.
	WriteBusy() time.Duration
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// EventRegistered counts a registered event.
func (m *Metrics) EventRegistered() { m.events.Inc() }

// ObserveRequest records an API request; pattern is the route's pattern
// (r.Pattern), so the label stays low-cardinality.
func (m *Metrics) ObserveRequest(pattern string, status int, d time.Duration) {
	if pattern == "" {
		pattern = "unmatched"
	}
	m.requests.WithLabelValues(pattern, strconv.Itoa(status)).Inc()
	m.requestSeconds.WithLabelValues(pattern).Observe(d.Seconds())
}

var outcomes = map[webhooks.Outcome]string{
	webhooks.OutcomeDelivered: "delivered",
	webhooks.OutcomeRetry:     "retry",
	webhooks.OutcomeRejected:  "rejected",
	webhooks.OutcomeRefused:   "refused",
}

// Attempted implements delivery.Metrics.
func (m *Metrics) Attempted(outcome webhooks.Outcome, a *webhooks.Attempt) {
	m.attempts.WithLabelValues(outcomes[outcome]).Inc()
	m.attemptSeconds.Observe(a.Duration.Seconds())
}

// Recorded implements delivery.Metrics.
func (m *Metrics) Recorded(r *webhooks.AttemptRecord) {
	if r.Transition.Status != webhooks.DeliveryPending {
		m.finished.WithLabelValues(r.Transition.Status, r.Transition.Reason).Inc()
	}
}

// InFlight implements delivery.Metrics.
func (m *Metrics) InFlight(n int) { m.inFlight.Set(float64(n)) }

// Started implements delivery.Metrics.
func (m *Metrics) Started(n int, handed bool) {
	source := "claimed"
	if handed {
		source = "handed"
	}
	m.started.WithLabelValues(source).Add(float64(n))
}

// Throttled implements delivery.Metrics.
func (m *Metrics) Throttled(waited bool) {
	action := "deferred"
	if waited {
		action = "waited"
	}
	m.throttled.WithLabelValues(action).Inc()
}

// Waiting implements delivery.Metrics.
func (m *Metrics) Waiting(n int) { m.waiting.Set(float64(n)) }

// queueCollector reads the queue's state from the store at each scrape:
// the figures are the database's, the same from every process.
type queueCollector struct {
	queue Queue
	now   func() time.Time
}

var (
	dueDesc = prometheus.NewDesc("webhooks_deliveries_due",
		"Deliveries whose attempt is due and not started (the backlog; held back for a rate limit or the cap too), across every process.", nil, nil)
	oldestDesc = prometheus.NewDesc("webhooks_oldest_due_seconds",
		"How long the oldest due delivery of the whole service has waited: since its first attempt or its next retry was due, with no attempt started since (0 when none).", nil, nil)
	claimedDesc = prometheus.NewDesc("webhooks_deliveries_claimed",
		"Deliveries claimed for an attempt now, across every process.", nil, nil)
	failingDesc = prometheus.NewDesc("webhooks_endpoints_failing",
		"Enabled endpoints whose last 4 or more attempts all failed (webhook_endpoint.failing was sent), across every process.", nil, nil)
	erasuresDesc = prometheus.NewDesc("webhooks_erasures_pending",
		"Erasure jobs of deleted companies and accounts whose events are not all erased yet (SPEC 19), across every process.", nil, nil)
	disabledDesc = prometheus.NewDesc("webhooks_endpoints_disabled",
		"Disabled endpoints, by disabled_reason: manual, failing (every attempt failed for WEBHOOKS_DISABLE_AFTER) or gone (410).", []string{"reason"}, nil)
)

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- dueDesc
	ch <- oldestDesc
	ch <- claimedDesc
	ch <- failingDesc
	ch <- disabledDesc
	ch <- erasuresDesc
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	now := c.now()
	st, err := c.queue.QueueStats(ctx, now)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(dueDesc, err)
		return
	}
	age := 0.0
	if !st.OldestDue.IsZero() {
		age = max(now.Sub(st.OldestDue).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(dueDesc, prometheus.GaugeValue, float64(st.Due))
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age)
	ch <- prometheus.MustNewConstMetric(claimedDesc, prometheus.GaugeValue, float64(st.InFlight))
	ch <- prometheus.MustNewConstMetric(failingDesc, prometheus.GaugeValue, float64(st.Failing))
	ch <- prometheus.MustNewConstMetric(erasuresDesc, prometheus.GaugeValue, float64(st.Erasures))
	for _, reason := range []string{webhooks.DisabledManual, webhooks.DisabledFailing, webhooks.DisabledGone} {
		ch <- prometheus.MustNewConstMetric(disabledDesc, prometheus.GaugeValue, float64(st.Disabled[reason]), reason)
	}
}
