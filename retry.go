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
