package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/build"
	"github.com/factuarea/webhooks/receiver"
	"github.com/factuarea/webhooks/signature"
)

// UserAgent identifies the sender, with the build's version (SPEC 4), the
// one `webhooks version` prints.
var UserAgent = "Factuarea-Webhooks/" + build.Version()

// NewClient returns the client attempts are made with: redirects are never
// followed (a 3xx is a retryable failure, and following one would let an
// endpoint point the service at an address the guard never saw), and the
// attempt's context bounds each request.
func NewClient(transport http.RoundTripper) *http.Client {
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// NewRequest builds the request of one attempt of d to ep, signed at now.
func NewRequest(ctx context.Context, d *webhooks.Delivery, ep *webhooks.Endpoint, now time.Time) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(d.Body))
	if err != nil {
		return nil, err
	}
	// One attempt is one request. With an Idempotency-Key header and a
	// body it can rewind, net/http's Transport would send the request
	// again by itself when a reused connection breaks before the answer:
	// a second arrival at the receiver that no attempt records. Without
	// GetBody it cannot; the attempt fails and the schedule retries it.
	req.GetBody = nil
	secrets := ep.SigningSecrets(now)
	SetHeaders(req.Header, d, signature.Sign(now.Unix(), d.Body, secrets...))
	if ep.StandardWebhooks {
		setStandardHeaders(req.Header, d, secrets, now)
	}
	return req, nil
}

// setStandardHeaders adds the Standard Webhooks headers (SPEC 15), signed
// by every live secret that is standard base64: a previous secret made
// before the format changed can still sign Factuarea-Signature during its
// overlap, but not these.
func setStandardHeaders(h http.Header, d *webhooks.Delivery, secrets []string, now time.Time) {
	compatible := secrets[:0:0]
	for _, s := range secrets {
		if signature.StandardCompatible(s) {
			compatible = append(compatible, s)
		}
	}
	if len(compatible) == 0 {
		return
	}
	sig, err := signature.SignStandard(d.EventID, now.Unix(), d.Body, compatible...)
	if err != nil {
		return
	}
	h[signature.StandardIDHeader] = []string{d.EventID}
	h[signature.StandardTimestampHeader] = []string{strconv.FormatInt(now.Unix(), 10)}
	h[signature.StandardSignatureHeader] = []string{sig}
}

// SetHeaders sets the headers of a request of d, whose signature header is
// sig: the names the receiver kit publishes (receiver.HeaderEventID…),
// the values of SPEC section 4.
func SetHeaders(h http.Header, d *webhooks.Delivery, sig string) {
	h["Content-Type"] = []string{"application/json"}
	h["User-Agent"] = []string{UserAgent}
	h[signature.HeaderName] = []string{sig}
	h[receiver.HeaderEventID] = []string{d.EventID}
	h[receiver.HeaderEventType] = []string{d.EventType}
	h[receiver.HeaderDeliveryID] = []string{d.ID}
	h[receiver.HeaderIdempotencyKey] = []string{d.EventID}
	if d.Relationship != "" {
		h[receiver.HeaderAccountRelationship] = []string{string(d.Relationship)}
	}
}

// attempt makes one attempt of a claimed delivery and returns its record,
// or nil if the engine aborted it (shutdown) before it ended.
//
// Its span stays out of the request's context, and the request carries no
// traceparent: the platform's trace ids are not the receiver's business.
func (e *Engine) attempt(ctx context.Context, c *webhooks.Claim) *webhooks.AttemptRecord {
	d := c.Delivery
	started := e.cfg.Now()
	span := e.cfg.Tracing.StartAttempt(c, started)
	a := &webhooks.Attempt{DeliveryID: d.ID, Number: d.AttemptCount + 1, StartedAt: started, Manual: d.Manual}

	actx, cancel := context.WithTimeout(ctx, e.cfg.AttemptTimeout)
	defer cancel()
	outcome := webhooks.OutcomeRetry
	var asked time.Duration // what a Retry-After asks; 0 when none
	req, err := NewRequest(actx, d, c.Endpoint, started)
	var local time.Duration // a relay's forward, timed on the listener's machine
	if err == nil {
		var resp *http.Response
		if c.Endpoint.Relay {
			resp, local, err = e.relay(req, d, c.Endpoint)
		} else {
			resp, err = e.cfg.Client.Do(req)
		}
		if err == nil {
			outcome = webhooks.ClassifyStatus(resp.StatusCode)
			a.ResponseStatus = resp.StatusCode
			asked = retryAfter(resp.StatusCode, resp.Header.Get("Retry-After"), started)
			body, rerr := io.ReadAll(io.LimitReader(resp.Body, webhooks.MaxResponseRead))
			resp.Body.Close()
			a.ResponseBody = string(body[:min(len(body), webhooks.MaxResponseKept)])
			switch {
			case resp.StatusCode >= 300 && resp.StatusCode < 400:
				a.Error = "redirect not followed"
			case rerr != nil:
				// No complete answer within the timeout: a 2xx whose body
				// broke off is retried too (the receiver drops repeats).
				a.Error = "incomplete answer: " + describe(rerr, actx)
				if outcome == webhooks.OutcomeDelivered {
					outcome = webhooks.OutcomeRetry
				}
			}
		}
	}
	if ctx.Err() != nil {
		span.Abort()
		return nil // aborted: hand the delivery back
	}
	if err != nil {
		a.Error = describe(err, actx)
		if e.cfg.IsRefused(err) {
			outcome = webhooks.OutcomeRefused
		}
	}
	end := e.cfg.Now()
	a.Duration = end.Sub(started)
	if local > 0 {
		a.Duration = local
	}
	e.cfg.Metrics.Attempted(outcome, a)
	t := e.cfg.Policy.Scaled(d.ScheduleFactor).After(a.Number, d.Manual, outcome, end, e.cfg.Random())
	if asked > 0 {
		t = t.NotBefore(end.Add(webhooks.ScaledRetryAfter(asked, d.ScheduleFactor)))
	}
	if outcome != webhooks.OutcomeDelivered {
		e.cfg.Logger.Info("delivery: attempt failed",
			"delivery_id", d.ID, "endpoint_id", d.EndpointID, "event_id", d.EventID,
			"attempt", a.Number, "status", a.ResponseStatus, "error", a.Error, "next_state", t.Status)
	}
	rec := &webhooks.AttemptRecord{Token: c.Token, EndpointID: c.Endpoint.ID, Attempt: a, Transition: t, Delivery: d, Endpoint: c.Endpoint}
	span.End(rec, outcome, end)
	return rec
}

// retryAfter reads the Retry-After header of a 429 or 503 answer (SPEC
// 14): delay-seconds or an HTTP date, capped at webhooks.MaxRetryAfter. It
// returns 0 for any other status, and for a value that is missing,
// malformed or not in the future.
func retryAfter(status int, value string, now time.Time) time.Duration {
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return 0
	}
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	max := webhooks.MaxRetryAfter
	if n, err := strconv.ParseInt(value, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		// Compared in seconds: a huge value would overflow a Duration.
		if n >= int64(max/time.Second) {
			return max
		}
		return time.Duration(n) * time.Second
	}
	t, err := http.ParseTime(value)
	if err != nil || !t.After(now) {
		return 0
	}
	return min(t.Sub(now), max)
}

// describe says why an attempt got no usable answer, without the URL: an
// endpoint's URL may carry a token of the customer's, and attempts are shown
// in the portal and written to logs.
func describe(err error, ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return "timeout: no complete answer within the attempt timeout"
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	var nerr *net.OpError
	if errors.As(err, &nerr) && nerr.Op == "dial" {
		return "connection failed: " + nerr.Err.Error()
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "dns: " + dnsErr.Err + " for " + strconv.Quote(dnsErr.Name)
	}
	return fmt.Sprint(err)
}
