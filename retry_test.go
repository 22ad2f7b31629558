package webhooks_test

import (
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func TestRetryPolicy_Wait(t *testing.T) {
	p := webhooks.DefaultRetryPolicy()
	if got := p.MaxAttempts(); got != 8 {
		t.Errorf("MaxAttempts: got %d, want 8", got)
	}
	want := []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour, 24 * time.Hour, 72 * time.Hour}
	for i, w := range want {
		n := i + 1
		for _, r := range []float64{0, 0.25, 0.5, 0.75, 0.999999999} {
			got, ok := p.Wait(n, r)
			lo, hi := time.Duration(float64(w)*0.9), time.Duration(float64(w)*1.1)
			if !ok || got < lo || got > hi {
				t.Errorf("Wait(%d, %v): got %s, %t; want %s..%s, true", n, r, got, ok, lo, hi)
			}
		}
		if got, _ := p.Wait(n, 0.5); got != w {
			t.Errorf("Wait(%d, 0.5): got %s, want exactly %s", n, got, w)
		}
		if got, _ := p.Wait(n, 0); got != time.Duration(float64(w)*0.9) {
			t.Errorf("Wait(%d, 0): got %s, want %s", n, got, time.Duration(float64(w)*0.9))
		}
	}
	for _, n := range []int{-1, 0, 8, 9, 100} {
		if got, ok := p.Wait(n, 0.5); ok || got != 0 {
			t.Errorf("Wait(%d): got %s, %t; want 0, false", n, got, ok)
		}
	}
	// Without jitter every wait is exact.
	exact := webhooks.RetryPolicy{Waits: []time.Duration{time.Second, time.Minute}}
	for _, r := range []float64{0, 0.999} {
		if got, _ := exact.Wait(2, r); got != time.Minute {
			t.Errorf("no jitter, Wait(2, %v): got %s, want 1m", r, got)
		}
	}
}

func TestRetryPolicy_Validate(t *testing.T) {
	tests := []struct {
		name string
		p    webhooks.RetryPolicy
		ok   bool
	}{
		{"default", webhooks.DefaultRetryPolicy(), true},
		{"no waits", webhooks.RetryPolicy{}, true},
		{"no jitter", webhooks.RetryPolicy{Waits: []time.Duration{time.Second}}, true},
		{"negative jitter", webhooks.RetryPolicy{Waits: []time.Duration{time.Second}, Jitter: -0.1}, false},
		{"jitter 1", webhooks.RetryPolicy{Waits: []time.Duration{time.Second}, Jitter: 1}, false},
		{"zero wait", webhooks.RetryPolicy{Waits: []time.Duration{time.Second, 0}}, false},
		{"negative wait", webhooks.RetryPolicy{Waits: []time.Duration{-time.Second}}, false},
	}
	for _, tt := range tests {
		if err := tt.p.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate: got %v, want ok=%t", tt.name, err, tt.ok)
		}
	}
}

func TestRetryPolicy_After(t *testing.T) {
	p := webhooks.DefaultRetryPolicy()
	now := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		n       int
		manual  bool
		outcome webhooks.Outcome
		want    webhooks.Transition
	}{
		{"delivered", 3, false, webhooks.OutcomeDelivered, webhooks.Transition{Status: webhooks.DeliveryDelivered}},
		{"manual delivered", 9, true, webhooks.OutcomeDelivered, webhooks.Transition{Status: webhooks.DeliveryDelivered}},
		{"retry", 1, false, webhooks.OutcomeRetry, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: now.Add(time.Minute)}},
		{"retry after the 7th", 7, false, webhooks.OutcomeRetry, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: now.Add(72 * time.Hour)}},
		{"retry after the 8th", 8, false, webhooks.OutcomeRetry, webhooks.Transition{Status: webhooks.DeliveryFailedPermanently, Reason: webhooks.ReasonScheduleExhausted}},
		{"rejected", 1, false, webhooks.OutcomeRejected, webhooks.Transition{Status: webhooks.DeliveryFailedPermanently, Reason: webhooks.ReasonNonRetryableStatus}},
		{"refused", 1, false, webhooks.OutcomeRefused, webhooks.Transition{Status: webhooks.DeliveryFailedPermanently, Reason: webhooks.ReasonAddressNotAllowed}},
		{"manual retryable", 2, true, webhooks.OutcomeRetry, webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonManualAttemptFailed}},
		{"manual refused", 2, true, webhooks.OutcomeRefused, webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonManualAttemptFailed}},
	}
	for _, tt := range tests {
		if got := p.After(tt.n, tt.manual, tt.outcome, now, 0.5); got != tt.want {
			t.Errorf("%s: After: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestClassifyStatus(t *testing.T) {
	tests := []struct {
		status int
		want   webhooks.Outcome
	}{
		{200, webhooks.OutcomeDelivered}, {201, webhooks.OutcomeDelivered}, {204, webhooks.OutcomeDelivered}, {299, webhooks.OutcomeDelivered},
		{301, webhooks.OutcomeRetry}, {302, webhooks.OutcomeRetry}, {307, webhooks.OutcomeRetry}, {308, webhooks.OutcomeRetry},
		{408, webhooks.OutcomeRetry}, {425, webhooks.OutcomeRetry}, {429, webhooks.OutcomeRetry},
		{500, webhooks.OutcomeRetry}, {502, webhooks.OutcomeRetry}, {503, webhooks.OutcomeRetry}, {599, webhooks.OutcomeRetry},
		{400, webhooks.OutcomeRejected}, {401, webhooks.OutcomeRejected}, {403, webhooks.OutcomeRejected},
		{404, webhooks.OutcomeRejected}, {410, webhooks.OutcomeRejected}, {422, webhooks.OutcomeRejected}, {499, webhooks.OutcomeRejected},
	}
	for _, tt := range tests {
		if got := webhooks.ClassifyStatus(tt.status); got != tt.want {
			t.Errorf("ClassifyStatus(%d): got %v, want %v", tt.status, got, tt.want)
		}
	}
}

// A Retry-After is capped at a day; on an outage rehearsal's schedule
// (SPEC 17) it is divided by the same factor as the waits, and so is the
// cap.
func TestScaledRetryAfter(t *testing.T) {
	factor := webhooks.DefaultRetryPolicy().RehearsalFactor()
	for _, tc := range []struct {
		asked  time.Duration
		factor int
		want   time.Duration
	}{
		{time.Hour, 0, time.Hour},
		{time.Hour, 1, time.Hour},
		{48 * time.Hour, 1, webhooks.MaxRetryAfter},
		{time.Hour, 4, 15 * time.Minute},
		{time.Hour, factor, time.Hour / time.Duration(factor)},
		{48 * time.Hour, factor, webhooks.MaxRetryAfter / time.Duration(factor)},
	} {
		if got := webhooks.ScaledRetryAfter(tc.asked, tc.factor); got != tc.want {
			t.Errorf("ScaledRetryAfter(%s, %d): got %s, want %s", tc.asked, tc.factor, got, tc.want)
		}
	}
}

// A rehearsal's delivery is marked as one whatever its factor: 1 on a
// schedule that fits in ten minutes already.
func TestDelivery_Rehearse(t *testing.T) {
	for _, p := range []webhooks.RetryPolicy{webhooks.DefaultRetryPolicy(), {Waits: []time.Duration{time.Second, time.Second}}} {
		var d webhooks.Delivery
		d.Rehearse(p)
		if !d.Rehearsal || d.ScheduleFactor != p.RehearsalFactor() {
			t.Errorf("after Rehearse(%v): rehearsal %v, factor %d, want true, %d", p.Waits, d.Rehearsal, d.ScheduleFactor, p.RehearsalFactor())
		}
	}
}
