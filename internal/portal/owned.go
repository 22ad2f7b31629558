package portal

import (
	"context"
	"slices"
	"strings"

	webhooks "github.com/factuarea/webhooks"
)

// Bounds on the reads that find an account's companies and endpoints.
const (
	ownedPageLimit  = 100
	maxCompanyPages = 5 // ListCompanies pages
)

// owned is what an account owns, as a page needs it: its companies and
// every endpoint (account endpoints and its companies').
type owned struct {
	companies []*webhooks.Company // by name
	company   map[string]*webhooks.Company
	account   []*webhooks.Endpoint
	byCompany map[string][]*webhooks.Endpoint
}

// all returns every endpoint: account endpoints first, then each
// company's in the order of companies.
func (o *owned) all() []*webhooks.Endpoint {
	out := append([]*webhooks.Endpoint(nil), o.account...)
	for _, c := range o.companies {
		out = append(out, o.byCompany[c.ID]...)
	}
	return out
}

// loadOwned reads an account's companies and endpoints: its companies a
// page at a time (at most maxCompanyPages), then one ListEndpoints per
// company and one for the account.
func (h *Handler) loadOwned(ctx context.Context, accountID string) (*owned, error) {
	st := h.cfg.Store
	o := &owned{company: map[string]*webhooks.Company{}, byCompany: map[string][]*webhooks.Endpoint{}}
	var err error
	if o.account, err = h.listEndpoints(ctx, webhooks.EndpointFilter{AccountID: accountID}); err != nil {
		return nil, err
	}
	p := webhooks.Page{Limit: ownedPageLimit}
	for range maxCompanyPages {
		l, err := st.ListCompanies(ctx, accountID, p)
		if err != nil {
			return nil, err
		}
		for _, c := range l.Data {
			eps, err := h.listEndpoints(ctx, webhooks.EndpointFilter{CompanyID: c.ID})
			if err != nil {
				return nil, err
			}
			o.company[c.ID], o.byCompany[c.ID] = c, eps
			o.companies = append(o.companies, c)
		}
		if !l.HasMore || len(l.Data) == 0 {
			break
		}
		p.StartingAfter = l.Data[len(l.Data)-1].ID
	}
	o.sort()
	return o, nil
}

// listEndpoints reads one owner's endpoints (at most 100: one page).
func (h *Handler) listEndpoints(ctx context.Context, f webhooks.EndpointFilter) ([]*webhooks.Endpoint, error) {
	l, err := h.cfg.Store.ListEndpoints(ctx, f, webhooks.Page{Limit: ownedPageLimit})
	if err != nil {
		return nil, err
	}
	// Oldest first: a list that does not move when one is added.
	slices.Reverse(l.Data)
	return l.Data, nil
}

func (o *owned) sort() {
	slices.SortFunc(o.companies, func(a, b *webhooks.Company) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// endpoint returns the path's endpoint if it belongs to the session's
// account (its own, or one of its companies'), and its company. Any other
// endpoint is "not found", exactly as a missing one.
func (h *Handler) endpoint(ctx context.Context, c *reqCtx, id string) (*webhooks.Endpoint, *webhooks.Company, error) {
	if !webhooks.ValidID(id) {
		return nil, nil, notFound()
	}
	ep, err := h.cfg.Store.FindEndpoint(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if ep.Scope == webhooks.ScopeAccount {
		if ep.AccountID != c.account.ID {
			return nil, nil, notFound()
		}
		return ep, nil, nil
	}
	co, err := h.cfg.Store.FindCompany(ctx, ep.CompanyID)
	if err != nil {
		return nil, nil, err
	}
	if co.AccountID != c.account.ID {
		return nil, nil, notFound()
	}
	return ep, co, nil
}
