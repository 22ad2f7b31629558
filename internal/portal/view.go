package portal

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// The view models shared by several pages. Templates print them; every
// decision about wording is made here, in Go, where it is tested.

// TimeView is a moment as a page shows it: machine-readable for <time>,
// in words, and relative to the page's now.
type TimeView struct {
	ISO  string // RFC 3339, for <time datetime>
	Text string // "2 Jan 2026, 15:04:05 UTC"
	Rel  string // "4 min ago", "in 2 h"
}

// timeLayout is how the portal writes a moment.
const timeLayout = "2 Jan 2006, 15:04:05 UTC"

// IsZero reports whether the view shows no moment.
func (t TimeView) IsZero() bool { return t.ISO == "" }

func timeView(t, now time.Time) TimeView {
	if t.IsZero() {
		return TimeView{}
	}
	return TimeView{
		ISO:  t.UTC().Format(time.RFC3339),
		Text: t.UTC().Format(timeLayout),
		Rel:  relative(t, now),
	}
}

// relative says when t is, seen from now: "just now", "4 min ago",
// "in 2 h 5 min".
func relative(t, now time.Time) string {
	d := t.Sub(now)
	switch {
	case d > -5*time.Second && d < 5*time.Second:
		return "just now"
	case d > 0:
		return "in " + span(d)
	default:
		return span(-d) + " ago"
	}
}

// span writes a duration for people, to two units at most, rounded to its
// smallest unit (so that an hour less a second is "1 h").
func span(d time.Duration) string {
	switch {
	case d.Round(time.Second) < time.Minute:
		return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
	case d.Round(time.Minute) < 24*time.Hour:
		d = d.Round(time.Minute)
	default:
		d = d.Round(time.Hour)
	}
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 24*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%d h", h)
		}
		return fmt.Sprintf("%d h %d min", h, m)
	default:
		days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
		unit := "days"
		if days == 1 {
			unit = "day"
		}
		if h == 0 {
			return fmt.Sprintf("%d %s", days, unit)
		}
		return fmt.Sprintf("%d %s %d h", days, unit, h)
	}
}

// duration writes an attempt's duration.
func duration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// StateView is a delivery's state as a badge and a sentence.
type StateView struct {
	Status string // the API's value, for filters and tests
	Label  string // "Delivered to your endpoint"
	Class  string // the badge's CSS class
	Reason string // why it ended undelivered, in words
}

func stateView(d *webhooks.Delivery, w words) StateView {
	s := StateView{Status: d.Status, Reason: reasonText(d.Reason, w)}
	if d.Reason == webhooks.ReasonScheduleExhausted && d.Rehearsal {
		// Its schedule was compressed: the attempts took minutes, not days.
		s.Reason = "All automatic attempts failed, on an outage rehearsal's schedule compressed into about ten minutes."
	}
	switch d.Status {
	case webhooks.DeliveryPending:
		s.Label, s.Class = "Pending", "pending"
		if d.Retrying() {
			s.Label, s.Class = "Retrying", "retrying"
		}
	case webhooks.DeliveryDelivered:
		s.Label, s.Class = "Delivered to your endpoint", "delivered"
	case webhooks.DeliveryFailed:
		s.Label, s.Class = "Failed", "failed"
	case webhooks.DeliveryFailedPermanently:
		s.Label, s.Class = "Failed permanently", "failed"
	default:
		s.Label, s.Class = d.Status, "pending"
	}
	return s
}

// reasonText explains a delivery's reason code.
func reasonText(reason string, w words) string {
	switch reason {
	case "":
		return ""
	case webhooks.ReasonNonRetryableStatus:
		return "Your endpoint answered with a 4xx status that is not retried (only " + w.Retried + " are)."
	case webhooks.ReasonScheduleExhausted:
		return "All automatic attempts failed (" + w.Attempts + " over " + w.Span + ")."
	case webhooks.ReasonAddressNotAllowed:
		return "The URL resolved to an address the service does not call (a private or internal network)."
	case webhooks.ReasonEndpointDisabled:
		return "The endpoint was disabled, so this delivery was not sent."
	case webhooks.ReasonEndpointDeleted:
		return "The endpoint was deleted before this delivery was sent."
	case webhooks.ReasonManualAttemptFailed:
		return "The attempt sent by hand failed; a manual send makes one attempt only."
	}
	return reason
}

// nextText says what happens next to a delivery: when the next attempt is,
// or that nothing more is automatic.
func nextText(d *webhooks.Delivery, scope webhooks.Scope, now time.Time) string {
	switch d.Status {
	case webhooks.DeliveryPending:
		if d.Waiting() {
			return "Waits for the delivery before it with the same ordering key"
		}
		if d.NextAttemptAt.IsZero() || !d.NextAttemptAt.After(now.Add(time.Second)) {
			return "Next attempt: due now"
		}
		return "Next attempt " + relative(d.NextAttemptAt, now)
	case webhooks.DeliveryDelivered:
		return "Nothing more to send"
	default:
		return "No more automatic attempts: " + resendVerb(scope) + " or recover by hand"
	}
}

// resendVerb is the lower-case name of an endpoint's manual resend.
func resendVerb(scope webhooks.Scope) string {
	return webhooks.ResendAction(scope)
}

// resendLabel is the button's label for an endpoint's manual resend.
func resendLabel(scope webhooks.Scope) string {
	if scope == webhooks.ScopeAccount {
		return "Retry"
	}
	return "Replay"
}

// responseText shows what an endpoint answered an attempt a, whose
// status was status: the status, or why there was none ("connection
// refused", "timeout"), or a dash when nothing was attempted (a nil).
func responseText(status int, a *webhooks.Attempt) string {
	switch {
	case status != 0 && a != nil && a.Error != "" && status >= 200 && status < 300:
		return fmt.Sprintf("%d, %s", status, errorKind(a.Error))
	case status != 0:
		return fmt.Sprint(status)
	case a != nil && a.Error != "":
		return errorKind(a.Error)
	case a != nil:
		return "no answer"
	}
	return "—"
}

// responseClass colours an answer: a 2xx good, anything else bad,
// nothing attempted neutral; an error's words are not a code.
func responseClass(status int, a *webhooks.Attempt) string {
	failed := a != nil && a.Error != ""
	switch {
	case status >= 200 && status < 300 && !failed:
		return "code-ok"
	case status == 0 && a == nil:
		return "code-none"
	case status == 0:
		return "code-bad code-words"
	default:
		return "code-bad"
	}
}

// errorKind names, in a few words, why an attempt got no answer, from the
// error the engine recorded (internal/delivery's describe).
func errorKind(err string) string {
	lower := strings.ToLower(err)
	for _, k := range []struct{ has, kind string }{
		{"incomplete answer", "incomplete answer"},
		{"address not allowed", "address not allowed"},
		{"timeout", "timeout"},
		{"deadline exceeded", "timeout"},
		{"connection refused", "connection refused"},
		{"connection reset", "connection reset"},
		{"no such host", "host not found"},
		{"no route to host", "no route to host"},
		{"network is unreachable", "network unreachable"},
		{"certificate", "TLS certificate error"},
		{"x509", "TLS certificate error"},
		{"tls", "TLS error"},
		{"redirect", "redirect not followed"},
		{"dns", "DNS error"},
		{"eof", "connection closed"},
		{"connection failed", "connection failed"},
	} {
		if strings.Contains(lower, k.has) {
			return k.kind
		}
	}
	return "connection error"
}

// answerText says in a sentence what an endpoint answered an attempt:
// "the endpoint answered 503 Service Unavailable", "could not connect
// (connection refused)".
func answerText(a *webhooks.Attempt) string {
	if a == nil {
		return "no attempt was recorded"
	}
	if a.ResponseStatus != 0 {
		s := "the endpoint answered " + statusText(a.ResponseStatus)
		if a.Error != "" && a.ResponseStatus >= 200 && a.ResponseStatus < 300 {
			s += ", but its answer broke off"
		}
		return s
	}
	switch kind := errorKind(a.Error); kind {
	case "timeout":
		return "no complete answer within the attempt timeout"
	case "address not allowed":
		return "the URL resolves to an address the service does not call"
	case "host not found", "DNS error":
		return "the endpoint's host name could not be resolved (" + kind + ")"
	default:
		return "could not connect (" + kind + ")"
	}
}

// shortURL shortens an endpoint URL for a label: host and path, without
// the scheme or query (which may carry a customer's token).
func shortURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	s := u.Host + u.EscapedPath()
	if len(s) > 60 {
		s = s[:57] + "…"
	}
	return strings.TrimSuffix(s, "/")
}

// Option is an entry of a <select>.
type Option struct {
	Value, Label string
	Selected     bool
}

// EndpointView is an endpoint's settings as the pages show them.
type EndpointView struct {
	ID            string
	URL           string
	ShortURL      string
	Description   string
	Enabled       bool
	Scope         string // "company" or "account"
	Owner         string // "Account endpoint" or the company's name and NIF
	Events        []string
	Relationships []string
	APIVersion    string
	Livemode      bool
	Created       TimeView
	ResendLabel   string // "Retry" or "Replay"
	ResendHelp    string
	// PreviousExpires is when the previous secret stops signing, while a
	// rotation's overlap lasts.
	PreviousExpires TimeView
	// DisabledAt and DisabledWhy say when and why a disabled endpoint was
	// disabled (SPEC 14).
	DisabledAt  TimeView
	DisabledWhy string
	// Ordered and AutoRecover are the endpoint's options (SPEC 18, 14);
	// Recovery says what automatic recovery does for it now, on the pages
	// that set it (recoveryText).
	Ordered, AutoRecover bool
	Recovery             string
	// Relay is set on a relay endpoint (SPEC 20), which has no URL: the
	// pages show, where the URL would be, whether a webhooks listen is
	// connected to it now (URL and ShortURL say so; see
	// Handler.endpointView).
	Relay, RelayConnected bool
}

func endpointView(ep *webhooks.Endpoint, company *webhooks.Company, now time.Time) EndpointView {
	v := EndpointView{
		ID: ep.ID, URL: ep.URL, ShortURL: endpointLabel(ep), Description: ep.Description, Enabled: ep.Enabled(),
		Scope: string(ep.Scope), Events: ep.EnabledEvents, APIVersion: ep.APIVersion, Livemode: ep.Livemode,
		Created: timeView(ep.Created, now), ResendLabel: resendLabel(ep.Scope),
		DisabledAt: timeView(ep.DisabledAt, now), DisabledWhy: disabledWhy(ep),
		Ordered: ep.Ordered, AutoRecover: ep.AutoRecover,
	}
	if ep.Relay {
		v.Relay, v.URL = true, relayNotConnected
	}
	for _, r := range ep.Relationships {
		v.Relationships = append(v.Relationships, string(r))
	}
	if ep.Scope == webhooks.ScopeAccount {
		v.Owner = "Account endpoint"
		v.ResendHelp = "Retry sends the same delivery again, once, now (events up to 30 days old)."
	} else {
		v.Owner = companyLabel(company, ep.CompanyID)
		v.ResendHelp = "Replay creates a new delivery with the same event id and body, and sends it once, now (events up to 90 days old)."
	}
	if ep.PreviousSecret != "" && now.Before(ep.PreviousSecretExpires) {
		v.PreviousExpires = timeView(ep.PreviousSecretExpires, now)
	}
	return v
}

// companyLabel names a company: "Acme SL · B12345674".
func companyLabel(c *webhooks.Company, id string) string {
	if c == nil {
		return "Company " + id
	}
	return c.Name + " · " + c.NIF
}

// DeliveryRow is one delivery in a list.
type DeliveryRow struct {
	ID            string
	Link          string
	EventID       string
	EventType     string
	Test          bool
	Rehearsal     bool // an outage rehearsal's, on its compressed schedule
	State         StateView
	Attempts      int
	LastResponse  string
	ResponseClass string
	ResponseTitle string // the last attempt's error in full, when it had one
	Next          string
	Created       TimeView
	ReplayOf      string
	// OrderingKey is the delivery's key on an ordered endpoint (SPEC 18);
	// WaitingLink the page of the delivery it waits behind, if it does.
	OrderingKey             string
	WaitingFor, WaitingLink string
	// Replayed says what became of the delivery's replays, when it has
	// some (nil otherwise).
	Replayed *ReplayedView
}

// deliveryRow shows d, whose last attempt is last (nil when it has none
// or its answer's status says enough).
func deliveryRow(d *webhooks.Delivery, scope webhooks.Scope, last *webhooks.Attempt, now time.Time, w words) DeliveryRow {
	r := DeliveryRow{
		ID: d.ID, Link: deliveryPath(d.EndpointID, d.ID), EventID: d.EventID, EventType: d.EventType,
		Test: d.EventType == webhooks.PingEventType, Rehearsal: d.Rehearsal, State: stateView(d, w), Attempts: d.AttemptCount,
		Next: nextText(d, scope, now), Created: timeView(d.Created, now), ReplayOf: d.ReplayOf,
		OrderingKey: d.OrderingKey,
	}
	if d.Waiting() {
		r.WaitingFor, r.WaitingLink = d.WaitingFor, deliveryPath(d.EndpointID, d.WaitingFor)
	}
	if d.AttemptCount == 0 {
		last = nil
	}
	r.LastResponse, r.ResponseClass = responseText(d.LastResponseStatus, last), responseClass(d.LastResponseStatus, last)
	if last != nil {
		r.ResponseTitle = last.Error
	}
	return r
}

// needsLastAttempt reports whether a delivery's row needs its last
// attempt: when no status, or a 2xx that did not deliver it, says what
// happened.
func needsLastAttempt(d *webhooks.Delivery) bool {
	if d.AttemptCount == 0 {
		return false
	}
	s := d.LastResponseStatus
	return s == 0 || (s >= 200 && s < 300 && d.Status != webhooks.DeliveryDelivered)
}

// ReplayedView is what became of a delivery's replays: the one that was
// delivered, or else the newest.
type ReplayedView struct {
	Text  string // "Replayed: delivered to your endpoint"
	Link  string
	State StateView
	When  TimeView // when that replay was made
	Count int
	// Confirm says that sending the event again must be confirmed: a
	// replay was delivered, or is being sent. Question says which.
	Confirm  bool
	Question string
}

// replayedView shows the replays of d's event made after d (for an
// original, all of its replays) among sameEvent, the deliveries of its
// event to its endpoint; nil if there are none.
func replayedView(d *webhooks.Delivery, sameEvent []*webhooks.Delivery, now time.Time, w words) *ReplayedView {
	original := cmp.Or(d.ReplayOf, d.ID)
	var later []*webhooks.Delivery
	for _, x := range sameEvent {
		if x.ReplayOf == original && x.ID != d.ID && cmp.Or(x.Created.Compare(d.Created), strings.Compare(x.ID, d.ID)) > 0 {
			later = append(later, x)
		}
	}
	if len(later) == 0 {
		return nil
	}
	slices.SortFunc(later, func(a, b *webhooks.Delivery) int {
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
	})
	shown := later[len(later)-1]
	if i := slices.IndexFunc(later, func(x *webhooks.Delivery) bool { return x.Status == webhooks.DeliveryDelivered }); i >= 0 {
		shown = later[i]
	}
	v := &ReplayedView{Link: deliveryPath(shown.EndpointID, shown.ID), State: stateView(shown, w), When: timeView(shown.Created, now), Count: len(later)}
	switch shown.Status {
	case webhooks.DeliveryDelivered:
		v.Text, v.Confirm = "Replayed: delivered to your endpoint", true
		v.Question = "A replay already delivered this event to your endpoint."
	case webhooks.DeliveryPending:
		v.Text, v.Confirm = "Replayed: the replay is being sent", true
		v.Question = "A replay of this event is being sent to your endpoint now."
	case webhooks.DeliveryFailed:
		v.Text = "Replayed: the replay failed too"
	default:
		v.Text = "Replayed: the replay " + strings.ToLower(v.State.Label)
	}
	return v
}

// Paths of the portal's pages.
func endpointPath(id string) string { return "/portal/endpoints/" + id }
func deliveryPath(endpointID, id string) string {
	return "/portal/endpoints/" + endpointID + "/deliveries/" + id
}

// disabledWhy says why a disabled endpoint was disabled, in words.
func disabledWhy(ep *webhooks.Endpoint) string {
	if ep.Enabled() {
		return ""
	}
	switch ep.DisabledReason {
	case webhooks.DisabledFailing:
		if !ep.FailingSince.IsZero() {
			return "every attempt to it had failed since " + ep.FailingSince.UTC().Format(timeLayout) + ", so the service disabled it"
		}
		return "its attempts kept failing, so the service disabled it"
	case webhooks.DisabledGone:
		return "it answered 410 Gone, which asks senders to stop, so the service disabled it"
	}
	return "it was disabled by hand"
}

// recoveryText says what automatic recovery does for ep now (SPEC 14):
// what it will do if ep is enabled, where it stands if the service
// disabled it for failing, and why it does not apply otherwise; empty when
// ep does not ask for it.
func recoveryText(ep *webhooks.Endpoint, w words, probe, window time.Duration, now time.Time) string {
	if !ep.AutoRecover {
		return ""
	}
	switch {
	case ep.Enabled():
		return w.AutoRecover()
	case ep.DisabledReason != webhooks.DisabledFailing:
		return "Automatic recovery does not apply: it re-enables only an endpoint the service disabled for failing, never one disabled after a 410 Gone or by hand."
	}
	end := ep.DisabledAt.Add(window)
	if !now.Before(end) {
		return "Automatic recovery gave up: no ping got a 2xx in the " + span(window) + " after the disable. Enable it by hand once your receiver is back."
	}
	next := ep.DisabledAt.Add(probe)
	if !ep.ProbedAt.IsZero() {
		next = ep.ProbedAt.Add(probe)
	}
	s := "The service sends it a ping every " + span(probe) + " until " + end.UTC().Format(timeLayout) + "; at the first 2xx it enables it again and recovers what it missed."
	if !ep.ProbedAt.IsZero() {
		s += " Last ping " + relative(ep.ProbedAt, now) + "."
	}
	if next.Before(now) {
		next = now
	}
	return s + " Next ping " + relative(next, now) + "."
}

// BacklogView is an endpoint's due deliveries (SPEC 14), when some have
// waited long enough to say so: the service is behind on the endpoint.
type BacklogView struct {
	Shown    bool
	Sentence string
	Oldest   TimeView
	Alerted  TimeView // when the platform was alerted, if it was
}

// backlogShownAfter is how long the oldest due delivery must have waited
// for the endpoint page to show the backlog: less is the queue at work.
const backlogShownAfter = time.Minute

func backlogView(ep *webhooks.Endpoint, b webhooks.Backlog, now time.Time) BacklogView {
	v := BacklogView{Alerted: timeView(ep.BackloggedSince, now)}
	if b.Due == 0 || now.Sub(b.OldestDue) < backlogShownAfter {
		v.Shown = !ep.BackloggedSince.IsZero()
		if v.Shown {
			v.Sentence = "The backlog is clearing: nothing due has waited long any more."
		}
		return v
	}
	v.Shown, v.Oldest = true, timeView(b.OldestDue, now)
	what, are := fmt.Sprintf("%d deliveries", b.Due), "are"
	if b.Due == 1 {
		what, are = "1 delivery", "is"
	}
	why := "the service is behind on this endpoint"
	if ep.RateLimit > 0 {
		why += fmt.Sprintf(" (its rate limit is %d a second)", ep.RateLimit)
	}
	v.Sentence = fmt.Sprintf("%s %s due and waiting to be sent; the oldest has waited %s. Your endpoint is not failing: %s.", what, are, span(now.Sub(b.OldestDue)), why)
	return v
}
