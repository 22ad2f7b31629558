package portal

import (
	"context"
	"net/http"
	"net/url"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Bounds of the events log.
const (
	eventsPageSize = 20
	// eventsWalkPages bounds each endpoint's walk over its deliveries
	// for one page of events; past it, the events not reached are looked
	// up one by one on that endpoint.
	eventsWalkPages    = 2
	eventsWalkPageSize = 100
)

// EventsPage is /portal/events: the account's events, newest first, with
// each event's deliveries to the account's endpoints.
type EventsPage struct {
	Base
	Type                  string
	Rows                  []EventRow
	OlderLink, NewestLink string
}

// EventRow is one event and its deliveries.
type EventRow struct {
	ID         string
	Type       string
	Created    TimeView
	Company    string // empty for an account event about no company
	NIF        string
	Deliveries []EventDelivery
}

// EventDelivery is one delivery of an event, to one of the account's
// endpoints.
type EventDelivery struct {
	Link     string
	Endpoint string
	State    StateView
	Replay   bool
}

// handleEvents reads one page of events, the account's endpoints (see
// loadOwned), and per endpoint one bounded walk over its deliveries back
// to the page's oldest event: a number of calls bounded by the number of
// endpoints, not of events or deliveries.
func (h *Handler) handleEvents(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	q := r.URL.Query()
	p := &EventsPage{Base: Base{Title: "Events log", Nav: "events"}, Type: q.Get("type")}
	f := webhooks.EventFilter{AccountID: c.account.ID}
	if p.Type != "" {
		if err := webhooks.ValidateEventType(p.Type); err != nil {
			p.Error = "That is not an event type: use a dotted name such as invoice.sent."
			h.render(w, r, c, http.StatusOK, "events", p)
			return nil
		}
		f.Type = p.Type
	}
	page := webhooks.Page{Limit: eventsPageSize}
	if after := q.Get("starting_after"); after != "" {
		if !webhooks.ValidID(after) {
			return notFound()
		}
		page.StartingAfter = after
	}
	events, err := h.cfg.Store.ListEvents(ctx, f, page)
	if webhooks.ErrorCode(err) == webhooks.EINVALID {
		return notFound()
	} else if err != nil {
		return err
	}
	o, err := h.loadOwned(ctx, c.account.ID)
	if err != nil {
		return err
	}
	byEvent, err := h.eventDeliveries(ctx, o, events.Data)
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, ep := range o.all() {
		names[ep.ID] = shortURL(ep.URL)
	}
	for _, ev := range events.Data {
		row := EventRow{ID: ev.ID, Type: ev.Type, Created: timeView(ev.Created, c.now)}
		if co := o.company[ev.CompanyID]; co != nil {
			row.Company, row.NIF = co.Name, co.NIF
		} else if ev.CompanyID != "" {
			row.Company = companyLabel(nil, ev.CompanyID)
		}
		for _, d := range byEvent[ev.ID] {
			row.Deliveries = append(row.Deliveries, EventDelivery{
				Link: deliveryPath(d.EndpointID, d.ID), Endpoint: names[d.EndpointID], State: stateView(d), Replay: d.ReplayOf != "",
			})
		}
		p.Rows = append(p.Rows, row)
	}
	v := url.Values{}
	if p.Type != "" {
		v.Set("type", p.Type)
	}
	if events.HasMore && len(events.Data) > 0 {
		older := url.Values{"starting_after": {events.Data[len(events.Data)-1].ID}}
		if p.Type != "" {
			older.Set("type", p.Type)
		}
		p.OlderLink = "/portal/events?" + older.Encode()
	}
	if page.StartingAfter != "" {
		p.NewestLink = "/portal/events"
		if len(v) > 0 {
			p.NewestLink += "?" + v.Encode()
		}
	}
	h.render(w, r, c, http.StatusOK, "events", p)
	return nil
}

// eventDeliveries finds the deliveries of events to the account's
// endpoints. An event can only reach its company's endpoints and the
// account endpoints, so only those are read: each with one walk, newest
// first, back to the oldest event that concerns it (deliveries are created
// with their event, replays later). A walk stops after eventsWalkPages;
// the events older than where it stopped are then looked up by event id
// on that endpoint.
func (h *Handler) eventDeliveries(ctx context.Context, o *owned, events []*webhooks.Event) (map[string][]*webhooks.Delivery, error) {
	out := map[string][]*webhooks.Delivery{}
	if len(events) == 0 {
		return out, nil
	}
	// The events each endpoint may have received.
	concerns := map[*webhooks.Endpoint][]*webhooks.Event{}
	for _, ev := range events {
		for _, ep := range o.account {
			concerns[ep] = append(concerns[ep], ev)
		}
		if ev.CompanyID != "" && !ev.IsAccountEvent() {
			for _, ep := range o.byCompany[ev.CompanyID] {
				concerns[ep] = append(concerns[ep], ev)
			}
		}
	}
	wanted, seen := map[string]bool{}, map[string]bool{}
	for _, ev := range events {
		wanted[ev.ID] = true
	}
	for _, ep := range o.all() {
		evs := concerns[ep]
		if len(evs) == 0 {
			continue
		}
		oldest := evs[len(evs)-1].Created // events are newest first
		reached, complete := time.Time{}, false
		p := webhooks.Page{Limit: eventsWalkPageSize}
	walk:
		for range eventsWalkPages {
			l, err := h.cfg.Store.ListDeliveries(ctx, webhooks.DeliveryFilter{EndpointID: ep.ID}, p)
			if err != nil {
				return nil, err
			}
			for _, d := range l.Data {
				if d.Created.Before(oldest) {
					complete = true
					break walk
				}
				reached = d.Created
				if wanted[d.EventID] && !seen[d.ID] {
					seen[d.ID] = true
					out[d.EventID] = append(out[d.EventID], d)
				}
			}
			if !l.HasMore || len(l.Data) == 0 {
				complete = true
				break
			}
			p.StartingAfter = l.Data[len(l.Data)-1].ID
		}
		if complete {
			continue
		}
		// The walk stopped early: look up the events it did not reach.
		for _, ev := range evs {
			if ev.Created.After(reached) {
				continue
			}
			l, err := h.cfg.Store.ListDeliveries(ctx, webhooks.DeliveryFilter{EndpointID: ep.ID, EventID: ev.ID}, webhooks.Page{Limit: 10})
			if err != nil {
				return nil, err
			}
			for _, d := range l.Data {
				if !seen[d.ID] {
					seen[d.ID] = true
					out[ev.ID] = append(out[ev.ID], d)
				}
			}
		}
	}
	return out, nil
}
