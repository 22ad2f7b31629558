package portal

import (
	"fmt"
	"net/url"
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

// IsZero reports whether the view shows no moment.
func (t TimeView) IsZero() bool { return t.ISO == "" }

func timeView(t, now time.Time) TimeView {
	if t.IsZero() {
		return TimeView{}
	}
	return TimeView{
		ISO:  t.UTC().Format(time.RFC3339),
		Text: t.UTC().Format("2 Jan 2006, 15:04:05 UTC"),
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

func stateView(d *webhooks.Delivery) StateView {
	s := StateView{Status: d.Status, Reason: reasonText(d.Reason)}
	switch d.Status {
	case webhooks.DeliveryPending:
		s.Label, s.Class = "Pending", "pending"
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
func reasonText(reason string) string {
	switch reason {
	case "":
		return ""
	case webhooks.ReasonNonRetryableStatus:
		return "Your endpoint answered with a 4xx status that is not retried (only 408, 425 and 429 are)."
	case webhooks.ReasonScheduleExhausted:
		return "All automatic attempts failed (8 over about 4½ days)."
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

// responseText shows the last status an endpoint answered, or a dash.
func responseText(status int) string {
	if status == 0 {
		return "—"
	}
	return fmt.Sprint(status)
}

// responseClass colours a status code: 2xx good, anything else bad.
func responseClass(status int) string {
	switch {
	case status == 0:
		return "code-none"
	case status >= 200 && status < 300:
		return "code-ok"
	default:
		return "code-bad"
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
}

func endpointView(ep *webhooks.Endpoint, company *webhooks.Company, now time.Time) EndpointView {
	v := EndpointView{
		ID: ep.ID, URL: ep.URL, ShortURL: shortURL(ep.URL), Description: ep.Description, Enabled: ep.Enabled(),
		Scope: string(ep.Scope), Events: ep.EnabledEvents, APIVersion: ep.APIVersion, Livemode: ep.Livemode,
		Created: timeView(ep.Created, now), ResendLabel: resendLabel(ep.Scope),
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
	State         StateView
	Attempts      int
	LastResponse  string
	ResponseClass string
	Next          string
	Created       TimeView
	ReplayOf      string
}

func deliveryRow(d *webhooks.Delivery, scope webhooks.Scope, now time.Time) DeliveryRow {
	return DeliveryRow{
		ID: d.ID, Link: deliveryPath(d.EndpointID, d.ID), EventID: d.EventID, EventType: d.EventType,
		Test: d.EventType == webhooks.PingEventType, State: stateView(d), Attempts: d.AttemptCount,
		LastResponse: responseText(d.LastResponseStatus), ResponseClass: responseClass(d.LastResponseStatus),
		Next: nextText(d, scope, now), Created: timeView(d.Created, now), ReplayOf: d.ReplayOf,
	}
}

// Paths of the portal's pages.
func endpointPath(id string) string { return "/portal/endpoints/" + id }
func deliveryPath(endpointID, id string) string {
	return "/portal/endpoints/" + endpointID + "/deliveries/" + id
}
