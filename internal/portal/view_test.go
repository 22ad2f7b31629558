package portal

import (
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func TestRelative(t *testing.T) {
	now := time.Date(2026, 10, 14, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "just now"},
		{4 * time.Second, "just now"},
		{-3 * time.Second, "just now"},
		{45 * time.Second, "in 45 s"},
		{3*time.Minute + 59*time.Second, "in 4 min"},
		{4 * time.Minute, "in 4 min"},
		{-4 * time.Minute, "4 min ago"},
		{time.Hour - time.Second, "in 1 h"},
		{2*time.Hour + 5*time.Minute, "in 2 h 5 min"},
		{-(26 * time.Hour), "1 day 2 h ago"},
		{72 * time.Hour, "in 3 days"},
	} {
		if got := relative(now.Add(tc.d), now); got != tc.want {
			t.Errorf("relative(%s): got %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestNextText(t *testing.T) {
	now := time.Date(2026, 10, 14, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		d     webhooks.Delivery
		scope webhooks.Scope
		want  string
	}{
		{webhooks.Delivery{Status: webhooks.DeliveryPending, NextAttemptAt: now.Add(4 * time.Minute)}, webhooks.ScopeCompany, "Next attempt in 4 min"},
		{webhooks.Delivery{Status: webhooks.DeliveryPending, NextAttemptAt: now}, webhooks.ScopeCompany, "Next attempt: due now"},
		{webhooks.Delivery{Status: webhooks.DeliveryDelivered}, webhooks.ScopeCompany, "Nothing more to send"},
		{webhooks.Delivery{Status: webhooks.DeliveryFailed}, webhooks.ScopeAccount, "No more automatic attempts: retry or recover by hand"},
		{webhooks.Delivery{Status: webhooks.DeliveryFailedPermanently}, webhooks.ScopeCompany, "No more automatic attempts: replay or recover by hand"},
	} {
		if got := nextText(&tc.d, tc.scope, now); got != tc.want {
			t.Errorf("%s on a %s endpoint: got %q, want %q", tc.d.Status, tc.scope, got, tc.want)
		}
	}
}

// The wording says "delivered to your endpoint", never "processed".
func TestStateView_Wording(t *testing.T) {
	for _, status := range []string{webhooks.DeliveryPending, webhooks.DeliveryDelivered, webhooks.DeliveryFailed, webhooks.DeliveryFailedPermanently} {
		v := stateView(&webhooks.Delivery{Status: status}, defaultWords)
		if strings.Contains(strings.ToLower(v.Label), "processed") {
			t.Errorf("%s: label %q says processed", status, v.Label)
		}
	}
	if got := stateView(&webhooks.Delivery{Status: webhooks.DeliveryDelivered}, defaultWords).Label; got != "Delivered to your endpoint" {
		t.Errorf("delivered: got %q, want Delivered to your endpoint", got)
	}
}

func TestStats(t *testing.T) {
	for _, tc := range []struct {
		s    Stats
		want string
	}{
		{Stats{}, "—"},
		{Stats{Pending: 3}, "—"},
		{Stats{Delivered: 72}, "100%"},
		{Stats{Delivered: 35, Failed: 1}, "97.2%"},
		{Stats{Delivered: 9999, Failed: 1}, "99.9%"},
		{Stats{Failed: 2}, "0%"},
	} {
		if got := tc.s.Rate(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.s, got, tc.want)
		}
	}
	since := time.Date(2026, 10, 13, 10, 30, 0, 0, time.UTC)
	counts := make([]hourCounts, statsBuckets)
	counts[0] = hourCounts{delivered: 4}
	counts[23] = hourCounts{delivered: 1, failed: 2, pending: 1}
	c := chart(counts, since)
	if len(c.Bars) != statsBuckets || c.Width != statsBuckets*10-2 {
		t.Fatalf("chart: got %d bars, width %d", len(c.Bars), c.Width)
	}
	if got := c.Bars[0].Segments; len(got) != 1 || got[0].Class != "delivered" || got[0].H != float64(c.Height) {
		t.Errorf("busiest bar: got %+v, want one delivered segment of full height", got)
	}
	if got := c.Bars[1].Segments; len(got) != 1 || got[0].Class != "empty" {
		t.Errorf("empty hour: got %+v, want a baseline", got)
	}
	if got := c.Bars[23]; len(got.Segments) != 3 || got.Title != "09:30–10:30 UTC: 1 delivered, 0 retrying, 2 failed, 1 pending" {
		t.Errorf("last hour: got %+v", got)
	}
}

// A delivery being retried is not delivered: it counts against the rate,
// and has its own segment.
func TestStats_Retrying(t *testing.T) {
	for _, tc := range []struct {
		s    Stats
		want string
	}{
		{Stats{Delivered: 72, Health: Health{Retrying: 4}}, "94.7%"},
		{Stats{Health: Health{Retrying: 4}}, "0%"},
		{Stats{Delivered: 9999, Health: Health{Retrying: 1}}, "99.9%"},
		{Stats{Delivered: 3, Pending: 5}, "100%"}, // not attempted yet: no figure
	} {
		if got := tc.s.Rate(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.s, got, tc.want)
		}
	}
	counts := make([]hourCounts, statsBuckets)
	counts[5] = hourCounts{delivered: 1, retrying: 2, failed: 1, pending: 1}
	bar := chart(counts, time.Date(2026, 10, 13, 10, 30, 0, 0, time.UTC)).Bars[5]
	var classes []string
	for _, s := range bar.Segments {
		classes = append(classes, s.Class)
	}
	if strings.Join(classes, " ") != "delivered pending retrying failed" || bar.Title != "15:30–16:30 UTC: 1 delivered, 2 retrying, 1 failed, 1 pending" {
		t.Errorf("bar: got segments %v, title %q", classes, bar.Title)
	}
	s := Stats{Delivered: 1, Failed: 2, Pending: 3, Health: Health{Retrying: 4}}
	if got := s.Summary(); got != "Last 24 hours: 1 delivered to the endpoint, 4 being retried, 2 failed, 3 pending." {
		t.Errorf("summary: got %q", got)
	}
}

func TestFailingSince(t *testing.T) {
	first := time.Date(2026, 10, 14, 7, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		ep   webhooks.Endpoint
		want time.Time
	}{
		{"healthy", webhooks.Endpoint{}, time.Time{}},
		{"failing", webhooks.Endpoint{FailureStreak: 3, FailingSince: first}, first},
		{"a 2xx since", webhooks.Endpoint{FailureStreak: 0, FailingSince: first}, time.Time{}},
	} {
		if got := failingSince(&tc.ep); !got.Equal(tc.want) {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestHealth_Text(t *testing.T) {
	failing := timeView(time.Date(2026, 10, 14, 7, 0, 0, 0, time.UTC), time.Date(2026, 10, 14, 10, 30, 0, 0, time.UTC))
	for _, tc := range []struct {
		h     Health
		shown bool
		want  string
	}{
		{Health{}, false, ""},
		{Health{Retrying: 4, FailingSince: failing}, true, "4 deliveries of the last 24 hours are being retried on the schedule."},
		{Health{Retrying: 1, FailingSince: failing}, true, "1 delivery of the last 24 hours is being retried on the schedule."},
		{Health{Retrying: 2}, true, "2 deliveries of the last 24 hours wait for a retry on the schedule; your endpoint has accepted a delivery since they failed."},
		{Health{FailingSince: failing}, true, ""},
	} {
		if got := tc.h.RetryingText(); got != tc.want || tc.h.Shown() != tc.shown {
			t.Errorf("%+v: got %q, shown %t; want %q, %t", tc.h, got, tc.h.Shown(), tc.want, tc.shown)
		}
	}
}

// A delivery whose schedule ran out says how long it was retried: an
// outage rehearsal's compressed schedule took minutes, not days.
func TestStateView_Exhausted(t *testing.T) {
	exhausted := webhooks.Delivery{Status: webhooks.DeliveryFailedPermanently, Reason: webhooks.ReasonScheduleExhausted}
	rehearsal := exhausted
	rehearsal.Rehearse(webhooks.DefaultRetryPolicy())
	refused := rehearsal
	refused.Reason = webhooks.ReasonNonRetryableStatus
	for _, tc := range []struct {
		name      string
		d         webhooks.Delivery
		want, not string
	}{
		{"on the schedule", exhausted, "4½ days", "minutes"},
		{"a rehearsal", rehearsal, "about ten minutes", "days"},
		{"a rehearsal refused", refused, "4xx", "minutes"},
	} {
		if got := stateView(&tc.d, defaultWords).Reason; !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("%s: reason %q, want it to say %q and not %q", tc.name, got, tc.want, tc.not)
		}
	}
}

// A pending delivery after a failed attempt is retrying; before its
// first, or while a send by hand waits for its attempt, it is pending.
func TestStateView_Retrying(t *testing.T) {
	for _, tc := range []struct {
		d    webhooks.Delivery
		want string
	}{
		{webhooks.Delivery{Status: webhooks.DeliveryPending}, "Pending"},
		{webhooks.Delivery{Status: webhooks.DeliveryPending, AttemptCount: 3}, "Retrying"},
		{webhooks.Delivery{Status: webhooks.DeliveryPending, AttemptCount: 3, Manual: true}, "Pending"},
		{webhooks.Delivery{Status: webhooks.DeliveryFailed, AttemptCount: 3}, "Failed"},
	} {
		if got := stateView(&tc.d, defaultWords).Label; got != tc.want {
			t.Errorf("%s with %d attempts (manual %t): got %q, want %q", tc.d.Status, tc.d.AttemptCount, tc.d.Manual, got, tc.want)
		}
	}
}

// The kinds of error internal/delivery records, as the list names them.
func TestErrorKind(t *testing.T) {
	for _, tc := range []struct{ err, want string }{
		{"timeout: no complete answer within the attempt timeout", "timeout"},
		{"connection failed: connect: connection refused", "connection refused"},
		{"connection failed: connect: no route to host", "no route to host"},
		{"connection failed: connect: network is unreachable", "network unreachable"},
		{`dns: no such host for "hooks.example.com"`, "host not found"},
		{`dns: server misbehaving for "hooks.example.com"`, "DNS error"},
		{"tls: failed to verify certificate: x509: certificate signed by unknown authority", "TLS certificate error"},
		{"remote error: tls: handshake failure", "TLS error"},
		{"incomplete answer: unexpected EOF", "incomplete answer"},
		{"incomplete answer: timeout: no complete answer within the attempt timeout", "incomplete answer"},
		{"read tcp 10.0.0.1:1234->10.0.0.2:443: read: connection reset by peer", "connection reset"},
		{"EOF", "connection closed"},
		{"connection failed: netguard: address not allowed: connection to 10.0.0.1:443 refused before connect: 10.0.0.1 is private", "address not allowed"},
		{"something else", "connection error"},
	} {
		if got := errorKind(tc.err); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestResponseText(t *testing.T) {
	refused := &webhooks.Attempt{Error: "connection failed: connect: connection refused"}
	cut := &webhooks.Attempt{ResponseStatus: 200, Error: "incomplete answer: timeout: no complete answer within the attempt timeout"}
	for _, tc := range []struct {
		status      int
		a           *webhooks.Attempt
		text, class string
	}{
		{0, nil, "—", "code-none"},
		{503, &webhooks.Attempt{ResponseStatus: 503}, "503", "code-bad"},
		{200, &webhooks.Attempt{ResponseStatus: 200}, "200", "code-ok"},
		{200, nil, "200", "code-ok"},
		{0, refused, "connection refused", "code-bad code-words"},
		{200, cut, "200, incomplete answer", "code-bad"},
	} {
		if text, class := responseText(tc.status, tc.a), responseClass(tc.status, tc.a); text != tc.text || class != tc.class {
			t.Errorf("%d %+v: got %q %q, want %q %q", tc.status, tc.a, text, class, tc.text, tc.class)
		}
	}
	for _, tc := range []struct {
		a    *webhooks.Attempt
		want string
	}{
		{&webhooks.Attempt{ResponseStatus: 503}, "the endpoint answered 503 Service Unavailable"},
		{refused, "could not connect (connection refused)"},
		{&webhooks.Attempt{Error: "timeout: no complete answer within the attempt timeout"}, "no complete answer within the attempt timeout"},
		{&webhooks.Attempt{Error: `dns: no such host for "x.example"`}, "the endpoint's host name could not be resolved (host not found)"},
		{cut, "the endpoint answered 200 OK, but its answer broke off"},
	} {
		if got := answerText(tc.a); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.a, got, tc.want)
		}
	}
}

var defaultWords = policyWords(webhooks.DefaultRetryPolicy())

// TestPolicyWords: the pages say the retry policy the service runs, not
// the spec's default: a short WEBHOOKS_RETRY_SCHEDULE makes fewer attempts
// over less time, and the pages say so.
func TestPolicyWords(t *testing.T) {
	for _, tc := range []struct {
		policy            webhooks.RetryPolicy
		attempts, span    string
		exhausted, reject string
	}{
		{webhooks.DefaultRetryPolicy(), "8 attempts", "about 4½ days",
			"All automatic attempts failed (8 attempts over about 4½ days).", "only 408, 425 and 429 are"},
		{webhooks.RetryPolicy{Waits: []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute}}, "4 attempts", "about 6 minutes",
			"All automatic attempts failed (4 attempts over about 6 minutes).", "only 408, 425 and 429 are"},
		{webhooks.RetryPolicy{Waits: []time.Duration{}}, "1 attempt", "no time", "(1 attempt over no time)", ""},
		{webhooks.RetryPolicy{Waits: []time.Duration{90 * time.Minute}}, "2 attempts", "about 1½ hours", "", ""},
	} {
		w := policyWords(tc.policy)
		if w.Attempts != tc.attempts || w.Span != tc.span {
			t.Errorf("%v: got %q over %q, want %q over %q", tc.policy.Waits, w.Attempts, w.Span, tc.attempts, tc.span)
		}
		if got := reasonText(webhooks.ReasonScheduleExhausted, w); tc.exhausted != "" && !strings.Contains(got, tc.exhausted) {
			t.Errorf("%v: exhausted: got %q, want %q", tc.policy.Waits, got, tc.exhausted)
		}
		if got := reasonText(webhooks.ReasonNonRetryableStatus, w); tc.reject != "" && !strings.Contains(got, tc.reject) {
			t.Errorf("%v: not retried: got %q, want %q", tc.policy.Waits, got, tc.reject)
		}
	}
}

// TestRecoveryText: what automatic recovery does, as each endpoint's page
// says it (SPEC 14): nothing said when it is off; what it will do while
// enabled; where it stands while the service probes; never for gone or
// manual; and that it gave up after the window.
func TestRecoveryText(t *testing.T) {
	now := time.Date(2026, 10, 14, 10, 30, 0, 0, time.UTC)
	w := policyWords(webhooks.DefaultRetryPolicy())
	w.Probe, w.ProbeFor = span(time.Hour), span(7*24*time.Hour)
	disabled := func(reason string, ago, probed time.Duration) *webhooks.Endpoint {
		e := &webhooks.Endpoint{Status: webhooks.EndpointEnabled, AutoRecover: true}
		e.Disable(reason, now.Add(-ago))
		if probed > 0 {
			e.ProbedAt = now.Add(-probed)
		}
		return e
	}
	for _, tc := range []struct {
		name string
		ep   *webhooks.Endpoint
		want string
	}{
		{"off", &webhooks.Endpoint{Status: webhooks.EndpointEnabled}, ""},
		{"enabled", &webhooks.Endpoint{Status: webhooks.EndpointEnabled, AutoRecover: true},
			"If the service disables it for failing, it sends it a ping every 1 h for 7 days; at the first 2xx it enables it again and recovers what it missed. Never after a 410 Gone or a disable by hand."},
		{"just disabled", disabled(webhooks.DisabledFailing, 10*time.Minute, 0),
			"The service sends it a ping every 1 h until 21 Oct 2026, 10:20:00 UTC; at the first 2xx it enables it again and recovers what it missed. Next ping in 50 min."},
		{"probed", disabled(webhooks.DisabledFailing, 30*time.Hour, 25*time.Minute),
			"The service sends it a ping every 1 h until 20 Oct 2026, 04:30:00 UTC; at the first 2xx it enables it again and recovers what it missed. Last ping 25 min ago. Next ping in 35 min."},
		{"gave up", disabled(webhooks.DisabledFailing, 8*24*time.Hour, 24*time.Hour),
			"Automatic recovery gave up: no ping got a 2xx in the 7 days after the disable. Enable it by hand once your receiver is back."},
		{"gone", disabled(webhooks.DisabledGone, time.Hour, 0), "Automatic recovery does not apply: it re-enables only an endpoint the service disabled for failing, never one disabled after a 410 Gone or by hand."},
		{"manual", disabled(webhooks.DisabledManual, time.Hour, 0), "Automatic recovery does not apply: it re-enables only an endpoint the service disabled for failing, never one disabled after a 410 Gone or by hand."},
	} {
		if got := recoveryText(tc.ep, w, time.Hour, 7*24*time.Hour, now); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestBacklogView: the endpoint page shows a backlog once its oldest due
// delivery has waited a minute, and that it is clearing while the alert
// is still on.
func TestBacklogView(t *testing.T) {
	now := time.Date(2026, 10, 14, 10, 30, 0, 0, time.UTC)
	ep := &webhooks.Endpoint{Status: webhooks.EndpointEnabled}
	limited := &webhooks.Endpoint{Status: webhooks.EndpointEnabled, RateLimit: 5}
	alerted := &webhooks.Endpoint{Status: webhooks.EndpointEnabled, BackloggedSince: now.Add(-time.Minute)}
	for _, tc := range []struct {
		name  string
		ep    *webhooks.Endpoint
		b     webhooks.Backlog
		shown bool
		want  string
	}{
		{"nothing due", ep, webhooks.Backlog{}, false, ""},
		{"the queue at work", ep, webhooks.Backlog{Due: 40, OldestDue: now.Add(-20 * time.Second)}, false, ""},
		{"one", ep, webhooks.Backlog{Due: 1, OldestDue: now.Add(-3 * time.Minute)}, true,
			"1 delivery is due and waiting to be sent; the oldest has waited 3 min. Your endpoint is not failing: the service is behind on this endpoint."},
		{"rate limited", limited, webhooks.Backlog{Due: 1840, OldestDue: now.Add(-12 * time.Minute)}, true,
			"1840 deliveries are due and waiting to be sent; the oldest has waited 12 min. Your endpoint is not failing: the service is behind on this endpoint (its rate limit is 5 a second)."},
		{"clearing", alerted, webhooks.Backlog{}, true, "The backlog is clearing: nothing due has waited long any more."},
	} {
		v := backlogView(tc.ep, tc.b, now)
		if v.Shown != tc.shown || v.Sentence != tc.want {
			t.Errorf("%s: shown %t %q, want %t %q", tc.name, v.Shown, v.Sentence, tc.shown, tc.want)
		}
	}
}
