package portal

import (
	"net/http"

	webhooks "github.com/factuarea/webhooks"
)

// EndpointsPage is /portal/: the account's endpoints, grouped by owner.
type EndpointsPage struct {
	Base
	Groups []EndpointGroup
	Empty  bool // no endpoint at all
}

// EndpointGroup is the endpoints of the account, or of one company.
type EndpointGroup struct {
	ID        string // the heading's id
	Heading   string
	Note      string
	NewLink   string
	Endpoints []EndpointCard
}

// EndpointCard is one endpoint with its last 24 hours.
type EndpointCard struct {
	EndpointView
	Link  string
	Stats Stats
}

// handleEndpoints reads the account's companies and endpoints, and the
// counts of their last 24 hours: three queries beside the session's
// account, however many there are.
func (h *Handler) handleEndpoints(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	hold, err := h.cfg.App.Holdings(ctx, c.caller, c.account)
	if err != nil {
		return err
	}
	stats, err := h.endpointStats(ctx, hold, c.now)
	if err != nil {
		return err
	}
	p := &EndpointsPage{Base: Base{Title: "Webhook endpoints", Nav: "endpoints"}}
	card := func(ep *webhooks.Endpoint, co *webhooks.Company) EndpointCard {
		return EndpointCard{EndpointView: h.endpointView(r.Context(), ep, co, c.now), Link: endpointPath(ep.ID), Stats: stats[ep.ID]}
	}
	acct := EndpointGroup{
		ID:      "g-account",
		Heading: "Account endpoints",
		Note:    "Receive the events of every company of " + c.account.Name + ", account events, and those of the accounts you manage.",
		NewLink: "/portal/endpoints/new?owner=account",
	}
	for _, ep := range hold.Account {
		acct.Endpoints = append(acct.Endpoints, card(ep, nil))
	}
	p.Groups = append(p.Groups, acct)
	for _, co := range hold.Companies {
		g := EndpointGroup{
			ID:      "g-" + co.ID,
			Heading: co.Name,
			Note:    "Company endpoints of " + co.Name + " (NIF " + co.NIF + "): receive this company's events.",
			NewLink: "/portal/endpoints/new?owner=company:" + co.ID,
		}
		for _, ep := range hold.ByCompany[co.ID] {
			g.Endpoints = append(g.Endpoints, card(ep, co))
		}
		p.Groups = append(p.Groups, g)
	}
	p.Empty = len(hold.All()) == 0
	h.render(w, r, c, http.StatusOK, "endpoints", p)
	return nil
}
