package portal

import (
	"net/http"
	"net/url"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// deliveriesPageSize is how many deliveries the endpoint page lists.
const deliveriesPageSize = 25

// DeliveriesPage is /portal/endpoints/{id}: an endpoint, its deliveries
// newest first, and its actions.
type DeliveriesPage struct {
	Base
	// Words says the retry policy.
	Words    words
	Endpoint EndpointView
	Health   Health
	Backlog  BacklogView
	Status   string // the filter
	Filters  []Option
	Rows     []DeliveryRow
	// OlderLink continues the list; NewestLink returns to its start.
	OlderLink, NewestLink string
	// RecoverSince is the default start of Recover (24 hours ago), in the
	// form a datetime-local input takes, in UTC.
	RecoverSince string
	Overlaps     []Option
}

var deliveryFilters = []Option{
	{Value: "", Label: "All states"},
	{Value: webhooks.DeliveryPending, Label: "Pending"},
	{Value: webhooks.DeliveryDelivered, Label: "Delivered to endpoint"},
	{Value: webhooks.DeliveryFailed, Label: "Failed"},
	{Value: webhooks.DeliveryFailedPermanently, Label: "Failed permanently"},
}

// overlapOptions are the choices of how long an old secret keeps signing
// after a rotation.
var overlapOptions = []struct {
	value string
	d     time.Duration
	label string
}{
	{"0", 0, "Stop the old secret now"},
	{"3600", time.Hour, "1 hour"},
	{"86400", 24 * time.Hour, "24 hours (recommended)"},
	{"259200", 72 * time.Hour, "3 days"},
	{"604800", 7 * 24 * time.Hour, "7 days (the longest)"},
}

// handleDeliveries reads the endpoint (and its company), its health, one
// page of its deliveries, the last attempts of those whose status does not
// say what happened, and the replays of those that failed: as many
// queries however many rows (TestPages_Queries counts them).
func (h *Handler) handleDeliveries(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	oe, err := h.cfg.App.Endpoint(r.Context(), c.caller, endpointRef(r))
	if err != nil {
		return err
	}
	ep, co := oe.Endpoint, oe.Company
	q := r.URL.Query()
	status := q.Get("status")
	valid := false
	for _, f := range deliveryFilters {
		valid = valid || f.Value == status
	}
	if !valid {
		status = ""
	}
	page := webhooks.Page{Limit: deliveriesPageSize}
	if after := q.Get("starting_after"); after != "" {
		if !webhooks.ValidID(after) {
			return notFound()
		}
		page.StartingAfter = after
	}
	l, err := h.cfg.App.ListDeliveries(r.Context(), c.caller, endpointRef(r), app.DeliveryQuery{Status: status}, page)
	if webhooks.ErrorCode(err) == webhooks.EINVALID {
		return notFound() // a cursor that is not an item of this list
	} else if err != nil {
		return err
	}
	p := &DeliveriesPage{
		Base:         Base{Title: endpointLabel(ep), Nav: "endpoints"},
		Words:        c.words,
		Endpoint:     h.endpointView(r.Context(), ep, co, c.now),
		Status:       status,
		RecoverSince: c.now.Add(-24 * time.Hour).UTC().Format("2006-01-02T15:04"),
	}
	for _, f := range deliveryFilters {
		f.Selected = f.Value == status
		p.Filters = append(p.Filters, f)
	}
	for _, o := range overlapOptions {
		p.Overlaps = append(p.Overlaps, Option{Value: o.value, Label: o.label, Selected: o.d == webhooks.DefaultSecretOverlap})
	}
	if p.Health, err = h.endpointHealth(r.Context(), ep, c.now); err != nil {
		return err
	}
	p.Endpoint.Recovery = recoveryText(ep, c.words, h.cfg.RecoveryProbe, h.cfg.RecoveryFor, c.now)
	backlog, err := h.cfg.App.EndpointBacklog(r.Context(), ep)
	if err != nil {
		return err
	}
	p.Backlog = backlogView(ep, backlog, c.now)
	var unclear, failed []*webhooks.Delivery
	for _, d := range l.Data {
		if needsLastAttempt(d) {
			unclear = append(unclear, d)
		}
		if d.Resendable() && ep.Scope == webhooks.ScopeCompany {
			failed = append(failed, d)
		}
	}
	last, err := h.cfg.App.LastAttempts(r.Context(), unclear)
	if err != nil {
		return err
	}
	sameEvent, err := h.cfg.App.EndpointEventDeliveries(r.Context(), ep, failed)
	if err != nil {
		return err
	}
	for _, d := range l.Data {
		row := deliveryRow(d, ep.Scope, last[d.ID], c.now, c.words)
		if d.Resendable() {
			row.Replayed = replayedView(d, sameEvent[d.EventID], c.now, c.words)
		}
		p.Rows = append(p.Rows, row)
	}
	base := endpointPath(ep.ID)
	if l.HasMore && len(l.Data) > 0 {
		v := url.Values{"starting_after": {l.Data[len(l.Data)-1].ID}}
		if status != "" {
			v.Set("status", status)
		}
		p.OlderLink = base + "?" + v.Encode()
	}
	if page.StartingAfter != "" {
		p.NewestLink = base
		if status != "" {
			p.NewestLink += "?" + url.Values{"status": {status}}.Encode()
		}
	}
	h.render(w, r, c, http.StatusOK, "deliveries", p)
	return nil
}
