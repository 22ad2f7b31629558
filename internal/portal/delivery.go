package portal

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/delivery"
)

// DeliveryPage is /portal/endpoints/{id}/deliveries/{delivery}: one
// delivery with every attempt and what can be done next.
type DeliveryPage struct {
	Base
	Endpoint     EndpointView
	Delivery     DeliveryRow
	Relationship string
	EventCreated TimeView
	Resend       ResendView
	Attempts     []AttemptView // newest first
	Body         string        // the exact bytes every attempt sends
	// Erased is set when the event's payload was erased (SPEC 19): the
	// body and the answers' bodies are gone, and nothing can be sent
	// again.
	Erased       bool
	ErasedAt     TimeView
	ReplayOfLink string
	// Replayed says what became of this delivery's replays (nil: none).
	Replayed *ReplayedView
}

// ResendView is the Retry or Replay button, or why there is none.
type ResendView struct {
	Label   string // "Retry" or "Replay"
	Allowed bool
	Reason  string // why not, when not allowed
	Help    string
	// ConfirmLink, when set, is the page that asks before sending the
	// event again (a replay was delivered or is being sent): the button
	// leads there.
	ConfirmLink string
}

// AttemptView is one attempt: when, how long, what came back, and the
// request that was sent.
type AttemptView struct {
	Number        int
	Started       TimeView
	Duration      string
	Status        string
	StatusText    string // "422 Unprocessable Entity", or "No response: timeout"
	StatusClass   string
	Manual        bool
	Error         string
	Response      string
	ResponseEmpty bool
	Truncated     bool // the response was longer than the part kept
	Open          bool // the newest attempt shows its response
	Headers       []Header
}

// Header is one request header.
type Header struct{ Name, Value string }

// handleDelivery reads the endpoint, its company, the delivery with its
// attempts, its event, and (for a failed one of a company endpoint) the
// other deliveries of its event to the endpoint, which are its replays.
func (h *Handler) handleDelivery(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	oe, d, err := h.cfg.App.Delivery(ctx, c.caller, endpointRef(r), r.PathValue("delivery"))
	if err != nil {
		return err
	}
	ep, co := oe.Endpoint, oe.Company
	ev, err := h.cfg.App.Event(ctx, c.caller, d.EventID)
	if err != nil {
		return err
	}
	replayed, err := h.replayed(ctx, ep, d, c)
	if err != nil {
		return err
	}
	var last *webhooks.Attempt
	if len(d.Attempts) > 0 {
		last = d.Attempts[len(d.Attempts)-1]
	}
	p := &DeliveryPage{
		Base:         Base{Title: d.EventType + " delivery", Nav: "endpoints"},
		Endpoint:     h.endpointView(r.Context(), ep, co, c.now),
		Delivery:     deliveryRow(d, ep.Scope, last, c.now, c.words),
		Relationship: string(d.Relationship),
		EventCreated: timeView(ev.Created, c.now),
		Body:         string(d.Body),
		Resend:       resendView(ep, d, ev, c),
		Replayed:     replayed,
		Erased:       ev.Erased(),
	}
	if p.Erased {
		p.ErasedAt = timeView(ev.ErasedAt, c.now)
	}
	if replayed != nil && replayed.Confirm && p.Resend.Allowed {
		p.Resend.ConfirmLink = deliveryPath(ep.ID, d.ID) + "/resend"
	}
	if d.ReplayOf != "" {
		p.ReplayOfLink = deliveryPath(ep.ID, d.ReplayOf)
	}
	p.sendOutcome(r.URL.Query().Get("notice"), d, last, c.now, c.words)
	for _, a := range slices.Backward(d.Attempts) {
		p.Attempts = append(p.Attempts, attemptView(ctx, a, d, ep, c))
	}
	if len(p.Attempts) > 0 {
		p.Attempts[0].Open = true
	}
	h.render(w, r, c, http.StatusOK, "delivery", p)
	return nil
}

// resendView decides the button with the rule the store applies
// (webhooks.CheckResend), and says why not in words.
func resendView(ep *webhooks.Endpoint, d *webhooks.Delivery, ev *webhooks.Event, c *reqCtx) ResendView {
	v := ResendView{Label: resendLabel(ep.Scope), Help: endpointView(ep, nil, c.now).ResendHelp}
	if ev.Erased() {
		v.Reason = "The event was erased: its payload is gone, so there is nothing to send again."
		return v
	}
	err := webhooks.CheckResend(webhooks.ResendAction(ep.Scope), ep, d, ev.Created, c.now)
	if err == nil {
		v.Allowed = true
		return v
	}
	switch webhooks.ErrorCode(err) {
	case webhooks.ENOTRESENDABLE:
		switch d.Status {
		case webhooks.DeliveryDelivered:
			v.Reason = "Only failed deliveries can be sent again: this one was delivered to your endpoint."
		default:
			v.Reason = "Only failed deliveries can be sent again: this one is still pending, and the schedule will try again."
		}
	case webhooks.EOUTSIDEWINDOW:
		if ep.Scope == webhooks.ScopeAccount {
			v.Reason = "The event is outside the 30-day window for retries."
		} else {
			v.Reason = "The event is outside the 90-day window for replays."
		}
	case webhooks.EENDPOINTDISABLED:
		v.Reason = "The endpoint is disabled: enable it to send deliveries again."
	default:
		v.Reason = webhooks.ErrorMessage(err)
	}
	return v
}

// attemptView shows an attempt and the request it sent: delivery.NewRequest
// builds the headers exactly as the attempt did, signed at its start.
func attemptView(ctx context.Context, a *webhooks.Attempt, d *webhooks.Delivery, ep *webhooks.Endpoint, c *reqCtx) AttemptView {
	v := AttemptView{
		Number: a.Number, Started: timeView(a.StartedAt, c.now), Duration: duration(a.Duration),
		Status: responseText(a.ResponseStatus, a), StatusText: statusText(a.ResponseStatus), StatusClass: responseClass(a.ResponseStatus, a),
		Manual: a.Manual, Error: a.Error, Response: a.ResponseBody, ResponseEmpty: a.ResponseBody == "",
		Truncated: len(a.ResponseBody) >= webhooks.MaxResponseKept,
	}
	if a.ResponseStatus == 0 && a.Error != "" {
		v.StatusText += ": " + errorKind(a.Error)
	}
	if !utf8.ValidString(v.Response) {
		v.Response = strings.ToValidUTF8(v.Response, "\uFFFD")
	}
	req, err := delivery.NewRequest(ctx, d, ep, a.StartedAt)
	if err != nil {
		return v
	}
	u, _ := url.Parse(ep.URL)
	host := ep.URL
	if u != nil {
		host = u.Host
	}
	v.Headers = append(v.Headers, Header{"Host", host})
	names := make([]string, 0, len(req.Header))
	for name := range req.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v.Headers = append(v.Headers, Header{name, strings.Join(req.Header[name], ", ")})
	}
	v.Headers = append(v.Headers, Header{"Content-Length", strconv.Itoa(len(d.Body))})
	return v
}

// statusText names a response status: "422 Unprocessable Entity".
func statusText(status int) string {
	if status == 0 {
		return "No response"
	}
	if t := http.StatusText(status); t != "" {
		return strconv.Itoa(status) + " " + t
	}
	return strconv.Itoa(status)
}
