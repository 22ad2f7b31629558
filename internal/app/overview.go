package app

import (
	"context"
	"slices"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Holdings is everything an account has endpoints under: its companies and
// every endpoint, read in two queries however many there are.
type Holdings struct {
	AccountID string
	Companies []*webhooks.Company             // by name
	Account   []*webhooks.Endpoint            // the account's own, oldest first
	ByCompany map[string][]*webhooks.Endpoint // each company's, oldest first
	company   map[string]*webhooks.Company
}

// Company returns the account's company with id, or nil.
func (h *Holdings) Company(id string) *webhooks.Company { return h.company[id] }

// All returns every endpoint: the account's first, then each company's in
// the order of Companies.
func (h *Holdings) All() []*webhooks.Endpoint {
	out := slices.Clone(h.Account)
	for _, c := range h.Companies {
		out = append(out, h.ByCompany[c.ID]...)
	}
	return out
}

// Holdings returns the companies and endpoints of an account that c has
// read with Account (the portal has, for every page): it is not read again.
func (a *App) Holdings(ctx context.Context, c Caller, acct *webhooks.Account) (*Holdings, error) {
	if !c.canSee(acct.ID) {
		return nil, webhooks.NotFound("account")
	}
	companies, err := a.cfg.Store.ListAccountCompanies(ctx, acct.ID)
	if err != nil {
		return nil, err
	}
	endpoints, err := a.cfg.Store.ListAccountEndpoints(ctx, acct.ID)
	if err != nil {
		return nil, err
	}
	h := &Holdings{AccountID: acct.ID, Companies: companies, ByCompany: map[string][]*webhooks.Endpoint{}, company: map[string]*webhooks.Company{}}
	slices.SortFunc(h.Companies, func(a, b *webhooks.Company) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for _, co := range h.Companies {
		h.company[co.ID] = co
	}
	for _, ep := range endpoints {
		if ep.Scope == webhooks.ScopeAccount {
			h.Account = append(h.Account, ep)
		} else if h.company[ep.CompanyID] != nil {
			h.ByCompany[ep.CompanyID] = append(h.ByCompany[ep.CompanyID], ep)
		}
	}
	return h, nil
}

// CountDeliveries counts the deliveries of h's endpoints created since, by
// endpoint, state and bucket of time.
func (a *App) CountDeliveries(ctx context.Context, h *Holdings, since time.Time, bucket time.Duration) ([]webhooks.DeliveryCount, error) {
	return a.cfg.Store.CountDeliveries(ctx, endpointIDs(h.All()), since, bucket)
}

// EventDeliveries returns the deliveries of events to h's endpoints, by
// event id, oldest first and without their bodies.
func (a *App) EventDeliveries(ctx context.Context, h *Holdings, events []*webhooks.Event) (map[string][]*webhooks.Delivery, error) {
	ids := make([]string, len(events))
	for i, ev := range events {
		ids[i] = ev.ID
	}
	ds, err := a.cfg.Store.ListEventDeliveries(ctx, ids, endpointIDs(h.All()))
	if err != nil {
		return nil, err
	}
	out := map[string][]*webhooks.Delivery{}
	for _, d := range ds {
		out[d.EventID] = append(out[d.EventID], d)
	}
	return out, nil
}

func endpointIDs(eps []*webhooks.Endpoint) []string {
	ids := make([]string, len(eps))
	for i, ep := range eps {
		ids[i] = ep.ID
	}
	return ids
}
