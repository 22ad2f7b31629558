package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy says how often, and after how long, a call is sent again
// after an attempt that failed in a way worth retrying (see the package
// documentation for which). Zero fields take the defaults.
type RetryPolicy struct {
	// MaxAttempts is the most attempts of one call, the first included.
	// 1 makes every call once. Default 5.
	MaxAttempts int
	// MaxElapsed bounds the time from a call's first attempt to the start
	// of its last: the client does not wait for an attempt that would
	// start later. Default 1 minute; negative: no bound.
	MaxElapsed time.Duration
	// BaseDelay is the wait after the first failure; each further failure
	// doubles it, up to MaxDelay, and each wait is drawn at random between
	// half of it and all of it. Default 500 ms.
	BaseDelay time.Duration
	// MaxDelay caps the backoff's waits. Default 15 s.
	MaxDelay time.Duration
	// MaxRetryAfter caps the wait a Retry-After header asks for (on a 429,
	// a 503, or a 5xx of a call safe to retry), which the client otherwise
	// honours in place of the backoff. Default 30 s.
	MaxRetryAfter time.Duration
}

// The defaults of RetryPolicy.
const (
	DefaultMaxAttempts   = 5
	DefaultMaxElapsed    = time.Minute
	DefaultBaseDelay     = 500 * time.Millisecond
	DefaultMaxDelay      = 15 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
)

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.MaxElapsed == 0 {
		p.MaxElapsed = DefaultMaxElapsed
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	return p
}

// noRetryAfter is the wait of a failure that asked for none: the backoff
// decides.
const noRetryAfter = time.Duration(-1)

// retryable reports whether an attempt that got a (a failure) may be made
// again, and the wait its Retry-After asks for (noRetryAfter: none).
//
//   - A connection error or a timeout: when the request is idempotent, or
//     when none of it was written (the service cannot have acted on it).
//   - 429 and 503: always; the service refused the request without acting
//     on it.
//   - 408, 500, 502 and 504: when the request is idempotent.
//   - Anything else (every other 4xx): never.
func (p RetryPolicy) retryable(req *request, a *answer, now time.Time) (time.Duration, bool) {
	if a.err != nil {
		var cert *tls.CertificateVerificationError
		if errors.Is(a.err, errAnswerTooLarge) || errors.As(a.err, &cert) {
			return 0, false // the same again
		}
		return noRetryAfter, req.idempotent || !a.sent
	}
	switch a.status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return retryAfter(a.header, now), true
	case http.StatusRequestTimeout, http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		if req.idempotent {
			return retryAfter(a.header, now), true
		}
	}
	return 0, false
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
// It returns noRetryAfter when there is none, or it is not valid; a date
// in the past is no wait.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return noRetryAfter
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return noRetryAfter
		}
		if n > int64(24*time.Hour/time.Second) {
			n = int64(24 * time.Hour / time.Second) // capped later anyway; no overflow
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return noRetryAfter
}

// delay is the wait after the failures-th failure: the Retry-After asked
// (capped, with up to a tenth more so that many clients do not come back
// at the same instant) or the backoff's, with its jitter.
func (p RetryPolicy) delay(failures int, asked time.Duration) time.Duration {
	if asked >= 0 {
		d := min(asked, p.MaxRetryAfter)
		return d + jitter(d/10)
	}
	b := p.BaseDelay
	for i := 1; i < failures && b < p.MaxDelay; i++ {
		b *= 2
	}
	b = min(b, p.MaxDelay)
	return b - b/2 + jitter(b/2)
}

// jitter is a random duration in [0, d].
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(d) + 1))
}

// retrier holds one call's retry budget: the attempts made and when the
// first began.
type retrier struct {
	c     *Client
	start time.Time
	made  int // attempts made
}

func (c *Client) newRetrier() *retrier {
	return &retrier{c: c, start: c.now(), made: 1}
}

// wait waits before the next attempt after a failure whose error is last,
// asked being what its Retry-After asks for (noRetryAfter: none). It
// returns an error, wrapping last, when no attempt is left in the budget,
// when the next would begin after ctx's deadline, or when ctx ends while
// it waits.
func (rt *retrier) wait(ctx context.Context, asked time.Duration, last error) error {
	p := rt.c.policy
	if rt.made >= p.MaxAttempts {
		return rt.gaveUp(last)
	}
	d := p.delay(rt.made, asked)
	if p.MaxElapsed > 0 && rt.c.now().Add(d).Sub(rt.start) > p.MaxElapsed {
		return rt.gaveUp(last)
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		return fmt.Errorf("client: gave up after %s, the next would begin after the context's deadline: %w", attempts(rt.made), last)
	}
	if err := rt.c.sleep(ctx, d); err != nil {
		return fmt.Errorf("client: %w while waiting to try again after %s; the last: %w", err, attempts(rt.made), last)
	}
	rt.made++
	return nil
}

func (rt *retrier) gaveUp(last error) error {
	if rt.made == 1 {
		return last
	}
	return fmt.Errorf("client: gave up after %d attempts: %w", rt.made, last)
}

// attempts writes n attempts.
func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return strconv.Itoa(n) + " attempts"
}
