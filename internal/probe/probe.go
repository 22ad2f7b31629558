// Package probe tests a webhook receiver from outside, the way the sender
// reaches it: the same event delivered many times at once, an invalid
// signature, a stale timestamp, an unparseable body, and the time to answer.
// It is the logic of the `webhooks probe` command.
package probe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/signature"
)

// The probes, by the name each prints.
const (
	// Duplicate delivers one event Repeat times at once, each copy correctly
	// signed: every copy must get a 2xx, and the receiver's owner checks that
	// the effect happened once.
	Duplicate = "duplicate"
	// Signature delivers an event signed with a secret the receiver does not
	// know: it must not get a 2xx.
	Signature = "signature"
	// Stale delivers an event correctly signed an hour ago, a replay: it must
	// not get a 2xx.
	Stale = "stale"
	// Body delivers a correctly signed body that is not JSON: it must not get
	// a 2xx (400 expected).
	Body = "body"
	// Latency times the correctly signed deliveries: a warning past
	// Config.SlowAfter, a failure past Config.Timeout.
	Latency = "latency"
)

// Defaults of Config.
const (
	DefaultTimeout   = 10 * time.Second
	DefaultSlowAfter = 5 * time.Second
	DefaultRepeat    = 10
	DefaultUserAgent = "Factuarea-Webhooks-Probe"
)

// staleAge is how old the Stale probe's timestamp is: far past the 300 s
// tolerance, so that no clock skew excuses accepting it.
const staleAge = time.Hour

// ErrFailed is returned by Run when at least one probe failed.
var ErrFailed = errors.New("probe: receiver failed")

// Config says which receiver to probe and how.
type Config struct {
	// URL is the receiver's endpoint URL, http or https. Required.
	URL string
	// Secrets are the endpoint's signing secrets, new first during a
	// rotation; each delivery carries one v1 per secret. Required.
	Secrets []string
	// Timeout is the sender's attempt timeout: a delivery not answered in
	// time fails. Defaults to DefaultTimeout (10 s).
	Timeout time.Duration
	// SlowAfter is the answer time past which the Latency probe warns.
	// Defaults to DefaultSlowAfter (5 s).
	SlowAfter time.Duration
	// Repeat is how many copies of one event the Duplicate probe sends at
	// once. Defaults to DefaultRepeat (10).
	Repeat int
	// AccountID, when set, makes the probe send the account endpoint's
	// envelope, for that account, with account_relationship "own" and
	// company_id null; otherwise it sends the company endpoint's.
	AccountID string
	// APIVersion is the payload version to render, one of
	// webhooks.APIVersions(); the newest by default.
	APIVersion string
	// TestMode sends "livemode": false; by default events are live.
	TestMode bool
	// StandardWebhooks also sends the Standard Webhooks headers
	// (webhook-id, webhook-timestamp, webhook-signature), as the sender does
	// to an endpoint with standard_webhooks on; the Signature and Stale
	// probes then corrupt or age both schemes. Every secret must be
	// standard base64 after "whsec_".
	StandardWebhooks bool
	// UserAgent is sent in User-Agent. Defaults to DefaultUserAgent.
	UserAgent string
}

// Status is the verdict of a probe.
type Status int

// The verdicts.
const (
	Pass Status = iota
	Warn
	Fail
)

// String returns PASS, WARN or FAIL.
func (s Status) String() string {
	switch s {
	case Pass:
		return "PASS"
	case Warn:
		return "WARN"
	}
	return "FAIL"
}

// Result is what one probe saw.
type Result struct {
	// Probe is the probe's name: Duplicate, Signature, Stale, Body or
	// Latency.
	Probe  string
	Status Status
	// Saw says what the receiver did.
	Saw string
	// Expected says what it should do.
	Expected string
}

// String is the result's line in the report.
func (r Result) String() string {
	return fmt.Sprintf("%s  %-9s  %s (expected %s)", r.Status, r.Probe, r.Saw, r.Expected)
}

// Report is the outcome of Run.
type Report struct {
	// EventID is the id the Duplicate probe delivered Repeat times: the
	// receiver's owner checks that its effect happened once.
	EventID string
	// Results holds one result per probe, in the order they ran.
	Results []Result
}

// Failed returns the names of the probes that failed.
func (r Report) Failed() []string {
	var names []string
	for _, res := range r.Results {
		if res.Status == Fail {
			names = append(names, res.Probe)
		}
	}
	return names
}

// Result returns the result of the named probe.
func (r Report) Result(probe string) (Result, bool) {
	for _, res := range r.Results {
		if res.Probe == probe {
			return res, true
		}
	}
	return Result{}, false
}

// Run probes the receiver and writes one line per probe to out as it goes,
// then a reminder and a summary. It returns an error wrapping ErrFailed when
// a probe failed, and another error when cfg is invalid or ctx ends.
func Run(ctx context.Context, cfg Config, out io.Writer) (Report, error) {
	p, err := newProber(cfg)
	if err != nil {
		return Report{}, err
	}
	defer p.transport.CloseIdleConnections()

	envelope := "company"
	if p.cfg.AccountID != "" {
		envelope = "account (" + p.cfg.AccountID + ")"
	}
	headers := ""
	if p.cfg.StandardWebhooks {
		headers = ", Standard Webhooks headers too"
	}
	fmt.Fprintf(out, "Probing %s: %s envelope, api_version %s, %d secret(s)%s, attempt timeout %s\n",
		p.cfg.URL, envelope, p.cfg.APIVersion, len(p.cfg.Secrets), headers, p.cfg.Timeout)

	var rep Report
	for _, probe := range []func(context.Context, *Report) (Result, error){
		p.duplicate, p.badSignature, p.stale, p.badBody, p.latency,
	} {
		res, err := probe(ctx, &rep)
		if err != nil {
			return rep, err
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		rep.Results = append(rep.Results, res)
		fmt.Fprintln(out, res)
	}

	if dup, _ := rep.Result(Duplicate); dup.Status == Pass {
		fmt.Fprintf(out, "\nNow check in your system that event %s had its effect once: its %d copies were accepted, and only one may count.\n",
			rep.EventID, p.cfg.Repeat)
	} else {
		fmt.Fprintf(out, "\nEvent %s must be accepted every time and have its effect once: fix the duplicate probe, then check the effect.\n", rep.EventID)
	}
	if failed := rep.Failed(); len(failed) > 0 {
		fmt.Fprintf(out, "%d of %d probes failed: %s\n", len(failed), len(rep.Results), strings.Join(failed, ", "))
		return rep, fmt.Errorf("%w: %s", ErrFailed, strings.Join(failed, ", "))
	}
	warned := 0
	for _, res := range rep.Results {
		if res.Status == Warn {
			warned++
		}
	}
	if warned > 0 {
		fmt.Fprintf(out, "All %d probes passed, %d with a warning.\n", len(rep.Results), warned)
	} else {
		fmt.Fprintf(out, "All %d probes passed.\n", len(rep.Results))
	}
	return rep, nil
}

// prober holds a validated Config and the HTTP client of a run.
type prober struct {
	cfg       Config
	client    *http.Client
	transport *http.Transport
	// signedTimes collects the answer times of the correctly signed
	// deliveries, for the Latency probe.
	mu          sync.Mutex
	signedTimes []outcome
}

func newProber(cfg Config) (*prober, error) {
	if cfg.URL == "" {
		return nil, errors.New("probe: the receiver's URL is required")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("probe: URL %q is not an http or https URL", cfg.URL)
	}
	if len(cfg.Secrets) == 0 || slices.Contains(cfg.Secrets, "") {
		return nil, errors.New("probe: a signing secret is required")
	}
	if cfg.StandardWebhooks {
		for i, s := range cfg.Secrets {
			if !signature.StandardCompatible(s) {
				return nil, fmt.Errorf("probe: secret %d: %w: it was made before the secret format changed, so it cannot sign the Standard Webhooks headers, nor can the endpoint have them; rotate the endpoint's secret first",
					i+1, signature.ErrSecretNotStandard)
			}
		}
	}
	if cfg.Timeout < 0 || cfg.SlowAfter < 0 || cfg.Repeat < 0 {
		return nil, errors.New("probe: Timeout, SlowAfter and Repeat must not be negative")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.SlowAfter == 0 {
		cfg.SlowAfter = DefaultSlowAfter
	}
	// A warning threshold past the timeout could never be reached.
	cfg.SlowAfter = min(cfg.SlowAfter, cfg.Timeout)
	if cfg.Repeat == 0 {
		cfg.Repeat = DefaultRepeat
	}
	if cfg.APIVersion == "" {
		cfg.APIVersion = webhooks.LatestAPIVersion
	}
	if !webhooks.KnownAPIVersion(cfg.APIVersion) {
		return nil, fmt.Errorf("probe: unknown api version %q (want one of %s)", cfg.APIVersion, strings.Join(webhooks.APIVersions(), ", "))
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	cfg.Secrets = slices.Clone(cfg.Secrets)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Keep a connection per concurrent copy, as the sender's workers would
	// each have their own.
	tr.MaxIdleConnsPerHost = cfg.Repeat
	return &prober{
		cfg:       cfg,
		transport: tr,
		client: &http.Client{
			Transport: tr,
			Timeout:   cfg.Timeout,
			// The sender never follows a redirect: a 3xx is a failed attempt.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}, nil
}

// outcome is what one request got.
type outcome struct {
	status   int // 0 when err is set
	err      error
	elapsed  time.Duration
	location string // of a 3xx
	body     string // the answer's first line, shortened
}

// send makes one request and reads its answer, as the sender does: at most
// 64 KiB of body, within the attempt timeout.
func (p *prober) send(ctx context.Context, d request) outcome {
	req, err := p.newRequest(ctx, d)
	if err != nil {
		return outcome{err: err}
	}
	start := time.Now()
	resp, err := p.client.Do(req)
	if err != nil {
		return outcome{err: err, elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	o := outcome{status: resp.StatusCode, elapsed: time.Since(start), location: resp.Header.Get("Location"), body: firstLine(b)}
	if err != nil {
		o.err = err
		o.status = 0
	}
	return o
}

// sendSigned sends a correctly signed delivery and keeps its time for the
// Latency probe.
func (p *prober) sendSigned(ctx context.Context, d request) outcome {
	o := p.send(ctx, d)
	p.mu.Lock()
	p.signedTimes = append(p.signedTimes, o)
	p.mu.Unlock()
	return o
}

// firstLine returns the first line of b, at most 80 characters.
func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// describe says what an outcome was, for a line of the report.
func (p *prober) describe(o outcome) string {
	switch {
	case o.err != nil && isTimeout(o.err):
		return fmt.Sprintf("no answer within %s", p.cfg.Timeout)
	case o.err != nil:
		var ue *url.Error
		if errors.As(o.err, &ue) {
			return "no answer: " + ue.Err.Error()
		}
		return "no answer: " + o.err.Error()
	case o.status >= 300 && o.status < 400:
		return fmt.Sprintf("%d redirect to %q, not followed", o.status, o.location)
	}
	return fmt.Sprintf("%d", o.status)
}

// withBody adds the answer's first line to a description, when there is one.
func withBody(desc string, o outcome) string {
	if o.body == "" || o.err != nil {
		return desc
	}
	return fmt.Sprintf("%s %q", desc, o.body)
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func is2xx(o outcome) bool { return o.err == nil && o.status >= 200 && o.status < 300 }

// duplicate is probe (a).
func (p *prober) duplicate(ctx context.Context, rep *Report) (Result, error) {
	id := webhooks.NewID()
	rep.EventID = id
	body, err := p.eventBody(id, time.Now())
	if err != nil {
		return Result{}, err
	}
	outcomes := make([]outcome, p.cfg.Repeat)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range outcomes {
		wg.Go(func() {
			<-start
			// Each copy is signed on its own, as each attempt is.
			outcomes[i] = p.sendSigned(ctx, p.signed(id, body, time.Now()))
		})
	}
	close(start)
	wg.Wait()

	res := Result{
		Probe:    Duplicate,
		Expected: "2xx for every copy, and one effect: check it",
	}
	counts := map[string]int{}
	ok := 0
	var bad outcome
	for _, o := range outcomes {
		if is2xx(o) {
			ok++
		} else {
			bad = o
		}
		counts[p.describe(o)]++
	}
	what := fmt.Sprintf("%d concurrent copies of %s", p.cfg.Repeat, id)
	if ok == len(outcomes) {
		if len(counts) == 1 {
			res.Saw = fmt.Sprintf("%s: all %s", what, p.describe(outcomes[0]))
		} else {
			res.Saw = fmt.Sprintf("%s: all 2xx (%s)", what, tally(counts))
		}
		return res, nil
	}
	res.Status = Fail
	res.Saw = withBody(fmt.Sprintf("%s: %d not 2xx (%s)", what, len(outcomes)-ok, tally(counts)), bad)
	return res, nil
}

// tally writes counts as "8× 200, 2× 500", most frequent first.
func tally(counts map[string]int) string {
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d× %s", counts[k], k)
	}
	return strings.Join(parts, ", ")
}

// refused judges a delivery that must not be accepted: a 2xx fails, and so
// do a redirect and no answer, which prove nothing. A 4xx passes. A 5xx is
// refused too, but it makes the sender retry a delivery that cannot
// succeed, so it warns.
func (p *prober) refused(name, what string, o outcome, wantStatus int) Result {
	res := Result{
		Probe:    name,
		Saw:      what + ": " + p.describe(o),
		Expected: fmt.Sprintf("not 2xx; %d", wantStatus),
	}
	switch {
	case o.err != nil:
		res.Status = Fail
	case is2xx(o):
		res.Status = Fail
		res.Saw = withBody(res.Saw+": accepted", o)
	case o.status >= 300 && o.status < 400:
		res.Status = Fail
	case o.status >= 500:
		res.Status = Warn
		res.Saw = withBody(res.Saw, o) + "; a 5xx makes the sender retry it for days"
	}
	return res
}

// badSignature is probe (b).
func (p *prober) badSignature(ctx context.Context, _ *Report) (Result, error) {
	id := webhooks.NewID()
	body, err := p.eventBody(id, time.Now())
	if err != nil {
		return Result{}, err
	}
	// A fresh secret, which the receiver cannot hold, in the current
	// format so that it signs both schemes.
	other, err := signature.NewSecret()
	if err != nil {
		return Result{}, fmt.Errorf("probe: %w", err)
	}
	d, err := p.sign(id, body, time.Now(), []string{other})
	if err != nil {
		return Result{}, err
	}
	return p.refused(Signature, "signed with another secret", p.send(ctx, d), http.StatusUnauthorized), nil
}

// stale is probe (c).
func (p *prober) stale(ctx context.Context, _ *Report) (Result, error) {
	id := webhooks.NewID()
	then := time.Now().Add(-staleAge)
	body, err := p.eventBody(id, then)
	if err != nil {
		return Result{}, err
	}
	d := p.signed(id, body, then)
	return p.refused(Stale, "correct signature, timestamp 1h old", p.send(ctx, d), http.StatusUnauthorized), nil
}

// badBody is probe (d): the body is cut in the middle, so it is not JSON,
// and it is correctly signed, so that only the parsing can refuse it.
func (p *prober) badBody(ctx context.Context, _ *Report) (Result, error) {
	id := webhooks.NewID()
	body, err := p.eventBody(id, time.Now())
	if err != nil {
		return Result{}, err
	}
	body = body[:len(body)/2]
	d := p.signed(id, body, time.Now())
	return p.refused(Body, "correctly signed body that is not JSON", p.send(ctx, d), http.StatusBadRequest), nil
}

// latency is probe (e): one more delivery on its own, then the slowest of
// every correctly signed delivery, the concurrent copies included, since the
// sender's attempts to one receiver overlap too.
func (p *prober) latency(ctx context.Context, _ *Report) (Result, error) {
	id := webhooks.NewID()
	body, err := p.eventBody(id, time.Now())
	if err != nil {
		return Result{}, err
	}
	single := p.sendSigned(ctx, p.signed(id, body, time.Now()))

	p.mu.Lock()
	signed := slices.Clone(p.signedTimes)
	p.mu.Unlock()
	slowest := slices.MaxFunc(signed, func(a, b outcome) int { return cmp.Compare(a.elapsed, b.elapsed) })
	timedOut := 0
	for _, o := range signed {
		if o.err != nil && isTimeout(o.err) {
			timedOut++
		}
	}

	res := Result{
		Probe:    Latency,
		Expected: fmt.Sprintf("under %s; the sender gives up at %s", p.cfg.SlowAfter, p.cfg.Timeout),
	}
	if single.err == nil {
		res.Saw = fmt.Sprintf("a single delivery answered %d in %s", single.status, round(single.elapsed))
	} else {
		res.Saw = "a single delivery: " + p.describe(single)
	}
	switch {
	case single.err != nil && !isTimeout(single.err):
		res.Status = Fail
	case timedOut > 0:
		res.Status = Fail
		res.Saw += fmt.Sprintf("; %d of %d signed deliveries got no answer within %s", timedOut, len(signed), p.cfg.Timeout)
	case slowest.elapsed > p.cfg.SlowAfter:
		res.Status = Warn
		res.Saw += fmt.Sprintf("; slowest of %d signed deliveries %s", len(signed), round(slowest.elapsed))
	default:
		res.Saw += fmt.Sprintf("; slowest of %d signed deliveries %s", len(signed), round(slowest.elapsed))
	}
	return res, nil
}

// round shortens a duration for the report.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
