package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultAttemptTimeout bounds each attempt of a call (the request and
// reading its answer) unless WithAttemptTimeout says otherwise.
const DefaultAttemptTimeout = 30 * time.Second

// userAgent is the product token the client always sends.
const userAgent = "factuarea-webhooks-go-client"

// maxAnswerBytes bounds the body of an answer the client reads: a page of
// 100 events of 256 KiB each is about 26 MiB.
const maxAnswerBytes = 64 << 20

// Client calls the webhook service's API with one key. It is safe for
// concurrent use; make one and share it.
type Client struct {
	base           *url.URL
	key            string
	http           *http.Client
	policy         RetryPolicy
	attemptTimeout time.Duration
	now            func() time.Time
	sleep          func(context.Context, time.Duration) error
	userAgent      string
}

// Option configures a Client in New.
type Option func(*Client) error

// WithHTTPClient makes the client send its requests with hc (its transport,
// proxy, TLS and timeouts). The default is an http.Client on
// http.DefaultTransport that does not follow redirects; hc is used as it
// is.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("client: WithHTTPClient(nil)")
		}
		c.http = hc
		return nil
	}
}

// WithRetryPolicy sets what the client does after a failed attempt (see
// RetryPolicy). Zero fields take the defaults.
func WithRetryPolicy(p RetryPolicy) Option {
	return func(c *Client) error {
		c.policy = p.withDefaults()
		return nil
	}
}

// WithAttemptTimeout bounds each attempt of a call: an attempt that has
// not read its whole answer within d is abandoned, and retried when the
// call is safe to retry. Zero takes DefaultAttemptTimeout; a negative d
// sets no bound of the client's own (the context's deadline and the
// http.Client's Timeout still apply).
func WithAttemptTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d == 0 {
			d = DefaultAttemptTimeout
		}
		c.attemptTimeout = d
		return nil
	}
}

// WithClock makes the client read the time from now, for its retry
// budget (RetryPolicy.MaxElapsed) and for a Retry-After given as a date.
// For tests; the default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *Client) error {
		if now == nil {
			return errors.New("client: WithClock(nil)")
		}
		c.now = now
		return nil
	}
}

// WithSleep makes the client wait between attempts with sleep, which must
// return ctx's error if ctx ends first. For tests, to observe the waits
// without waiting; the default waits on a timer.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) error {
		if sleep == nil {
			return errors.New("client: WithSleep(nil)")
		}
		c.sleep = sleep
		return nil
	}
}

// WithUserAgent puts product (e.g. "acme-invoicing/2.3") in front of the
// client's own token in the User-Agent header, so that the service's
// operators can tell producers apart.
func WithUserAgent(product string) Option {
	return func(c *Client) error {
		if strings.ContainsAny(product, "\r\n") {
			return errors.New("client: the user agent has a line break")
		}
		if product = strings.TrimSpace(product); product != "" {
			c.userAgent = product + " " + userAgent
		}
		return nil
	}
}

// New returns a client of the service at baseURL (e.g.
// "https://webhooks.example.com", or with a path prefix if a gateway puts
// the API under one) calling with apiKey: the platform's admin key, which
// registers events, or an account's key.
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("client: the base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("client: the base URL %q is not an http or https URL", baseURL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: the base URL %q has credentials, a query or a fragment", u.Redacted())
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	if apiKey == "" {
		return nil, errors.New("client: the API key is empty")
	}
	if strings.ContainsAny(apiKey, "\r\n ") {
		return nil, errors.New("client: the API key has white space")
	}
	c := &Client{
		base: u,
		key:  apiKey,
		http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		policy:         RetryPolicy{}.withDefaults(),
		attemptTimeout: DefaultAttemptTimeout,
		now:            time.Now,
		sleep:          sleepContext,
		userAgent:      userAgent,
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// sleepContext waits d, or until ctx ends.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// NewIdempotencyKey returns a random key in the form of a UUID (version
// 4), what CreateEvent and CreateEvents use for an event given none. Make
// one yourself and keep it with the event to send it again after a crash.
func NewIdempotencyKey() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// CallOption adjusts one call.
type CallOption func(*callOptions)

type callOptions struct {
	idempotencyKey string
}

// WithIdempotencyKey makes CreateEvent send key as its Idempotency-Key
// instead of the event's IdempotencyKey or a random one.
func WithIdempotencyKey(key string) CallOption {
	return func(o *callOptions) { o.idempotencyKey = key }
}

// Owner names a company or an account: the owner of an event log and of
// webhook endpoints. Make one with CompanyOwner or AccountOwner; the zero
// Owner names nothing, and calls refuse it.
type Owner struct {
	scope, id string
}

const (
	scopeCompany = "company"
	scopeAccount = "account"
)

// CompanyOwner names the company with id.
func CompanyOwner(id string) Owner { return Owner{scopeCompany, id} }

// AccountOwner names the account with id.
func AccountOwner(id string) Owner { return Owner{scopeAccount, id} }

// Scope returns "company" or "account", or "" for the zero Owner.
func (o Owner) Scope() string { return o.scope }

// ID returns the company's or the account's id.
func (o Owner) ID() string { return o.id }

// path returns /v1/companies/{id} or /v1/accounts/{id}.
func (o Owner) path() (string, error) {
	if o.id == "" {
		return "", errors.New("client: no owner: name one with CompanyOwner or AccountOwner")
	}
	switch o.scope {
	case scopeCompany:
		return "/v1/companies/" + url.PathEscape(o.id), nil
	case scopeAccount:
		return "/v1/accounts/" + url.PathEscape(o.id), nil
	}
	return "", errors.New("client: no owner: name one with CompanyOwner or AccountOwner")
}

// request is one API call, sent as many times as the retry policy lets it.
type request struct {
	method string
	path   string // escaped, from /v1/…
	query  url.Values
	body   []byte // nil: none
	key    string // the Idempotency-Key header; empty: none
	// idempotent: sending it again whatever happened to an earlier
	// attempt has no effect beyond the first's (a read, or a registration
	// whose every event carries an idempotency key).
	idempotent bool
}

// answer is what an attempt got: a status and a body read whole, or an
// error.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
	// sent: some of the request reached the connection, so the service
	// may have acted on it. When it did not, any call may be sent again.
	sent bool
}

// once makes one attempt of req.
func (c *Client) once(ctx context.Context, req *request) *answer {
	if c.attemptTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.attemptTimeout)
		defer cancel()
	}
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { wrote.Store(true) },
	})
	u := *c.base
	u.RawPath = c.base.EscapedPath() + req.path // req.path is escaped
	if p, err := url.PathUnescape(u.RawPath); err == nil {
		u.Path = p
	}
	if req.query != nil {
		u.RawQuery = req.query.Encode()
	}
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.method, u.String(), body)
	if err != nil {
		return &answer{err: err}
	}
	hreq.Header.Set("Authorization", "Bearer "+c.key)
	hreq.Header.Set("User-Agent", c.userAgent)
	hreq.Header.Set("Accept", "application/json")
	if req.body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if req.key != "" {
		hreq.Header.Set("Idempotency-Key", req.key)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return &answer{err: err, sent: wrote.Load()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		// The answer was lost on the way: the service may have acted.
		return &answer{status: resp.StatusCode, err: fmt.Errorf("reading the answer: %w", err), sent: true}
	}
	if len(b) > maxAnswerBytes {
		return &answer{status: resp.StatusCode, err: errAnswerTooLarge, sent: true}
	}
	return &answer{status: resp.StatusCode, header: resp.Header, body: b, sent: true}
}

var errAnswerTooLarge = fmt.Errorf("the answer is over %d MiB", maxAnswerBytes>>20)

// send makes req until an attempt gets a 2xx, the answer says not to try
// again, or rt's budget ends. It returns the 2xx answer, or the error of
// the last attempt: an *Error for an API answer.
func (c *Client) send(ctx context.Context, rt *retrier, req *request) (*answer, error) {
	for {
		a := c.once(ctx, req)
		if a.err == nil && a.status >= 200 && a.status < 300 {
			return a, nil
		}
		var err error
		if a.err != nil {
			err = fmt.Errorf("client: %s %s: %w", req.method, req.path, a.err)
		} else {
			err = apiError(a.status, a.header, a.body)
		}
		if ctx.Err() != nil {
			return nil, err // the transport's error wraps ctx's
		}
		wait, ok := c.policy.retryable(req, a, c.now())
		if !ok {
			return nil, err
		}
		if err := rt.wait(ctx, wait, err); err != nil {
			return nil, err
		}
	}
}

// call makes req with a budget of its own and decodes a 2xx answer into
// out (when not nil).
func (c *Client) call(ctx context.Context, req *request, out any) error {
	a, err := c.send(ctx, c.newRetrier(), req)
	if err != nil {
		return err
	}
	return decodeAnswer(req, a, out)
}

// decodeAnswer decodes a 2xx answer's body into out (when not nil).
func decodeAnswer(req *request, a *answer, out any) error {
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(a.body, out); err != nil {
		return fmt.Errorf("client: %s %s: decoding the %d answer: %w", req.method, req.path, a.status, err)
	}
	return nil
}

// get is a GET of path with query, decoded into out.
func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	return c.call(ctx, &request{method: http.MethodGet, path: path, query: query, idempotent: true}, out)
}

// post is a POST of in (encoded as JSON) to path without an idempotency
// key, decoded into out.
func (c *Client) post(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("client: POST %s: encoding the request: %w", path, err)
	}
	return c.call(ctx, &request{method: http.MethodPost, path: path, body: b}, out)
}

// id escapes an id for a path, refusing an empty one (which would name
// another route).
func id(kind, v string) (string, error) {
	if v == "" {
		return "", fmt.Errorf("client: the %s id is empty", kind)
	}
	return url.PathEscape(v), nil
}
