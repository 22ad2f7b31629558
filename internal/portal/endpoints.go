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

// handleEndpoints reads the account's companies and endpoints (see
// loadOwned) and, per endpoint, one bounded walk of its last 24 hours.
func (h *Handler) handleEndpoints(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	o, err := h.loadOwned(ctx, c.account.ID)
	if err != nil {
		return err
	}
	p := &EndpointsPage{Base: Base{Title: "Webhook endpoints", Nav: "endpoints"}}
	card := func(ep *webhooks.Endpoint, co *webhooks.Company) (EndpointCard, error) {
		st, err := h.endpointStats(ctx, ep.ID, c.now)
		return EndpointCard{EndpointView: endpointView(ep, co, c.now), Link: endpointPath(ep.ID), Stats: st}, err
	}
	acct := EndpointGroup{
		ID:      "g-account",
		Heading: "Account endpoints",
		Note:    "Receive the events of every company of " + c.account.Name + ", account events, and those of the accounts you manage.",
		NewLink: "/portal/endpoints/new?owner=account",
	}
	for _, ep := range o.account {
		cd, err := card(ep, nil)
		if err != nil {
			return err
		}
		acct.Endpoints = append(acct.Endpoints, cd)
	}
	p.Groups = append(p.Groups, acct)
	for _, co := range o.companies {
		g := EndpointGroup{
			ID:      "g-" + co.ID,
			Heading: co.Name,
			Note:    "Company endpoints of " + co.Name + " (NIF " + co.NIF + "): receive this company's events.",
			NewLink: "/portal/endpoints/new?owner=company:" + co.ID,
		}
		for _, ep := range o.byCompany[co.ID] {
			cd, err := card(ep, co)
			if err != nil {
				return err
			}
			g.Endpoints = append(g.Endpoints, cd)
		}
		p.Groups = append(p.Groups, g)
	}
	p.Empty = len(o.all()) == 0
	h.render(w, r, c, http.StatusOK, "endpoints", p)
	return nil
}
