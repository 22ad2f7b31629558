package portal

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// eventsPageSize is how many events the events log shows at a time.
const eventsPageSize = 20

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
	ID      string
	Type    string
	Created TimeView
	Company string // empty for an account event about no company
	NIF     string
	// Erased: the event's payload was erased (SPEC 19); its deliveries
	// stay, without their bodies.
	Erased     bool
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

// handleEvents reads one page of events (after the log's owner check),
// the account's companies and endpoints, and the deliveries of those
// events to those endpoints: five queries beside the session's account,
// however many there are.
func (h *Handler) handleEvents(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	q := r.URL.Query()
	p := &EventsPage{Base: Base{Title: "Events log", Nav: "events"}, Type: q.Get("type")}
	if p.Type != "" && webhooks.ValidateEventType(p.Type) != nil {
		p.Error = "That is not an event type: use a dotted name such as invoice.sent."
		h.render(w, r, c, http.StatusOK, "events", p)
		return nil
	}
	page := webhooks.Page{Limit: eventsPageSize}
	if after := q.Get("starting_after"); after != "" {
		if !webhooks.ValidID(after) {
			return notFound()
		}
		page.StartingAfter = after
	}
	events, err := h.cfg.App.ListEvents(ctx, c.caller, app.EventQuery{Owner: app.AccountOwner(c.account.ID), Type: p.Type}, page)
	if webhooks.ErrorCode(err) == webhooks.EINVALID {
		return notFound() // a cursor that is not an item of this list
	} else if err != nil {
		return err
	}
	hold, err := h.cfg.App.Holdings(ctx, c.caller, c.account)
	if err != nil {
		return err
	}
	byEvent, err := h.cfg.App.EventDeliveries(ctx, hold, events.Data)
	if err != nil {
		return err
	}
	names, order := map[string]string{}, map[string]int{}
	for i, ep := range hold.All() {
		names[ep.ID], order[ep.ID] = endpointLabel(ep), i
	}
	for _, ev := range events.Data {
		row := EventRow{ID: ev.ID, Type: ev.Type, Created: timeView(ev.Created, c.now), Erased: ev.Erased()}
		if co := hold.Company(ev.CompanyID); co != nil {
			row.Company, row.NIF = co.Name, co.NIF
		} else if ev.CompanyID != "" {
			row.Company = companyLabel(nil, ev.CompanyID)
		}
		// The endpoints in the order of the endpoints page; each one's
		// original delivery before its replays.
		ds := byEvent[ev.ID]
		slices.SortStableFunc(ds, func(a, b *webhooks.Delivery) int { return cmp.Compare(order[a.EndpointID], order[b.EndpointID]) })
		for _, d := range ds {
			row.Deliveries = append(row.Deliveries, EventDelivery{
				Link: deliveryPath(d.EndpointID, d.ID), Endpoint: names[d.EndpointID], State: stateView(d, c.words), Replay: d.ReplayOf != "",
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
