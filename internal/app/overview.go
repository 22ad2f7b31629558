package app

import (
	"context"
	"slices"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
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
	return a.cfg.Store.CountDeliveries(ctx, endpointIDs(h.All()), since, bucket, driver.CountAll)
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

// CountRetrying counts the deliveries being retried of endpoints c has
// read (with Holdings or Endpoint), created since, by endpoint and bucket
// of time. (When each endpoint began to fail is its failing_since.)
func (a *App) CountRetrying(ctx context.Context, eps []*webhooks.Endpoint, since time.Time, bucket time.Duration) ([]webhooks.DeliveryCount, error) {
	return a.cfg.Store.CountDeliveries(ctx, endpointIDs(eps), since, bucket, driver.CountRetrying)
}

// LastAttempts returns the last attempt of each delivery of ds (read with
// ListDeliveries) that has one, by delivery id, without response bodies.
func (a *App) LastAttempts(ctx context.Context, ds []*webhooks.Delivery) (map[string]*webhooks.Attempt, error) {
	if len(ds) == 0 {
		return map[string]*webhooks.Attempt{}, nil
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	as, err := a.cfg.Store.LastAttempts(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*webhooks.Attempt, len(as))
	for _, at := range as {
		out[at.DeliveryID] = at
	}
	return out, nil
}

// EndpointEventDeliveries returns every delivery to ep (read with
// Endpoint) of the events of ds: each one's replays and the deliveries
// they replay, by event id, oldest first and without their bodies.
func (a *App) EndpointEventDeliveries(ctx context.Context, ep *webhooks.Endpoint, ds []*webhooks.Delivery) (map[string][]*webhooks.Delivery, error) {
	out := map[string][]*webhooks.Delivery{}
	if len(ds) == 0 {
		return out, nil
	}
	ids := make([]string, 0, len(ds))
	for _, d := range ds {
		if !slices.Contains(ids, d.EventID) {
			ids = append(ids, d.EventID)
		}
	}
	all, err := a.cfg.Store.ListEventDeliveries(ctx, ids, []string{ep.ID})
	if err != nil {
		return nil, err
	}
	for _, d := range all {
		out[d.EventID] = append(out[d.EventID], d)
	}
	return out, nil
}
