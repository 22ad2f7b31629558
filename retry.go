package webhooks

import (
	"fmt"
	"time"
)

// DefaultRetryWaits is the schedule: the waits after each failed attempt,
// 8 attempts in all.
var DefaultRetryWaits = []time.Duration{
	time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	12 * time.Hour, 24 * time.Hour, 72 * time.Hour,
}

// DefaultRetryJitter varies each wait at random by up to 10 % either way, so
// that the deliveries of one outage do not all come back at once.
const DefaultRetryJitter = 0.1

// RetryPolicy is the automatic retry schedule.
type RetryPolicy struct {
	Waits  []time.Duration // the wait after attempt i+1 fails
	Jitter float64         // the fraction each wait may vary either way
}

// DefaultRetryPolicy returns the spec's schedule.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Waits: DefaultRetryWaits, Jitter: DefaultRetryJitter}
}

// Validate checks an operator's schedule.
func (p RetryPolicy) Validate() error {
	if p.Jitter < 0 || p.Jitter >= 1 {
		return fmt.Errorf("retry jitter must be at least 0 and less than 1, got %v", p.Jitter)
	}
	for _, w := range p.Waits {
		if w <= 0 {
			return fmt.Errorf("retry waits must be positive, got %s", w)
		}
	}
	return nil
}

// Scaled returns the policy with every wait divided by factor (an outage
// rehearsal's compressed schedule, SPEC 17), at least a second each; p
// itself for a factor of 1 or less.
func (p RetryPolicy) Scaled(factor int) RetryPolicy {
	if factor <= 1 {
		return p
	}
	q := RetryPolicy{Jitter: p.Jitter, Waits: make([]time.Duration, len(p.Waits))}
	for i, w := range p.Waits {
		q.Waits[i] = max(w/time.Duration(factor), time.Second)
	}
	return q
}

// RehearsalLength is about how long an outage rehearsal's schedule lasts
// (SPEC 17), jitter included.
const RehearsalLength = 10 * time.Minute

// RehearsalFactor is what an outage rehearsal divides the policy's waits
// by, so that its whole schedule, jitter included, lasts about
// RehearsalLength: no longer, but for the floor of a second Scaled puts
// under each wait, which may add about a second a wait (with the default
// schedule, 10 min 2 s at most); 1 when it fits already.
func (p RetryPolicy) RehearsalFactor() int {
	return max(1, int((p.Length()+RehearsalLength-1)/RehearsalLength))
}

// Length is the longest a delivery's schedule lasts, every wait at its
// most: a delivery being retried at some moment was created at most this
// long before it.
func (p RetryPolicy) Length() time.Duration {
	var total time.Duration
	for _, w := range p.Waits {
		total += w
	}
	return time.Duration(float64(total) * (1 + p.Jitter))
}

// MaxAttempts is the number of automatic attempts a delivery gets.
func (p RetryPolicy) MaxAttempts() int { return len(p.Waits) + 1 }

// Wait returns how long to wait after attempt n (1-based) failed, and false
// when n was the last attempt. random is uniform in [0, 1): it picks the
// jitter.
func (p RetryPolicy) Wait(n int, random float64) (time.Duration, bool) {
	if n < 1 || n > len(p.Waits) {
		return 0, false
	}
	w := p.Waits[n-1]
	factor := 1 + p.Jitter*(2*random-1)
	return time.Duration(float64(w) * factor), true
}

// MaxRetryAfter caps how far a receiver's Retry-After moves an attempt.
const MaxRetryAfter = 24 * time.Hour

// ScaledRetryAfter returns how far a receiver's Retry-After, asking for
// asked, moves the next attempt of a delivery whose schedule is divided by
// factor (ScheduleFactor): asked capped at MaxRetryAfter, and for an
// outage rehearsal both divided by the factor (SPEC 17), so that a
// receiver asking for hours does not stretch a rehearsal past about ten
// minutes. A factor of 1 or less leaves it as asked, capped.
func ScaledRetryAfter(asked time.Duration, factor int) time.Duration {
	asked = min(asked, MaxRetryAfter)
	if factor > 1 {
		asked /= time.Duration(factor)
	}
	return asked
}

// NotBefore moves a scheduled retry to at, if at is later: what a
// receiver's Retry-After asks. The delivery keeps its attempt count, so
// the schedule's limit on attempts holds.
func (t Transition) NotBefore(at time.Time) Transition {
	if t.Status == DeliveryPending && at.After(t.NextAttemptAt) {
		t.NextAttemptAt = at
	}
	return t
}
