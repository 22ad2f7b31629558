package sqlite

import (
	"context"

	webhooks "github.com/factuarea/webhooks"
)

// routes caches what registering an event looks up to route it: its
// company's account, the account, and the endpoints of each owner. Those
// lookups were a quarter of a registration's time on the one write
// connection, and they change only when an account, a company or an
// endpoint does, which the routing_version row counts (its triggers bump
// it). Only the registrar uses it, inside its write transaction, so the
// version it reads is the one the group's registrations see.
type routes struct {
	version   int64
	companies map[string]string            // company id → its account's id; "" when there is no such company
	accounts  map[string]*webhooks.Account // nil when there is no such account
	endpoints map[string][]*webhooks.Endpoint
}

// maxRoutes bounds what the cache holds: past it, it starts again.
const maxRoutes = 20000

// qVersions reads the versions of routing and of the catalog, which a
// registration group reads together (see registerGroup).
const qVersions = `SELECT (SELECT version FROM routing_version), (SELECT version FROM catalog_version)`

// sync drops the cache if routing changed since it was filled, and returns
// the catalog's version, read in the same statement.
func (r *routes) sync(ctx context.Context, tx *txn) (catalog int64, err error) {
	var v int64
	if err := tx.QueryRowContext(ctx, qVersions).Scan(&v, &catalog); err != nil {
		return 0, err
	}
	if r.companies == nil || v != r.version || len(r.companies)+len(r.accounts)+len(r.endpoints) > maxRoutes {
		*r = routes{version: v, companies: map[string]string{}, accounts: map[string]*webhooks.Account{}, endpoints: map[string][]*webhooks.Endpoint{}}
	}
	return catalog, nil
}

// companyAccount returns the account of company id, or "" if there is no
// such company.
func (r *routes) companyAccount(ctx context.Context, tx *txn, id string) (string, error) {
	if a, ok := r.companies[id]; ok {
		return a, nil
	}
	c, err := findCompany(ctx, tx, id)
	if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
		r.companies[id] = ""
		return "", nil
	} else if err != nil {
		return "", err
	}
	r.companies[id] = c.AccountID
	return c.AccountID, nil
}

// account returns account id, or nil if there is no such account.
func (r *routes) account(ctx context.Context, tx *txn, id string) (*webhooks.Account, error) {
	if a, ok := r.accounts[id]; ok {
		return a, nil
	}
	a, err := findAccount(ctx, tx, id)
	if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
		a, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.accounts[id] = a
	return a, nil
}

// Owners' endpoints, by the column that names the owner.
const (
	qCompanyEndpoints  = selectLiveEndpoints + `company_id = ?`
	qAccountEndpoints  = selectLiveEndpoints + `account_id = ?`
	qPlatformEndpoints = selectLiveEndpoints + `scope = 'platform'`
)

// companyEndpoints and accountEndpoints return an owner's endpoints. The
// slices are shared: routing reads them and must not change them.
func (r *routes) companyEndpoints(ctx context.Context, tx *txn, id string) ([]*webhooks.Endpoint, error) {
	return r.ownerEndpoints(ctx, tx, "company:"+id, qCompanyEndpoints, id)
}

func (r *routes) accountEndpoints(ctx context.Context, tx *txn, id string) ([]*webhooks.Endpoint, error) {
	return r.ownerEndpoints(ctx, tx, "account:"+id, qAccountEndpoints, id)
}

func (r *routes) ownerEndpoints(ctx context.Context, tx *txn, key, query string, args ...any) ([]*webhooks.Endpoint, error) {
	if es, ok := r.endpoints[key]; ok {
		return es, nil
	}
	es, err := queryAll(ctx, tx, scanEndpoint, query, args...)
	if err != nil {
		return nil, err
	}
	r.endpoints[key] = es
	return es, nil
}

// candidates resolves ev's account from its company and returns the
// endpoints it may reach.
func (r *routes) candidates(ctx context.Context, tx *txn, ev *webhooks.Event) (webhooks.Candidates, error) {
	var c webhooks.Candidates
	companyAccount := ""
	if ev.CompanyID != "" {
		var err error
		if companyAccount, err = r.companyAccount(ctx, tx, ev.CompanyID); err != nil {
			return c, err
		}
	}
	if err := ev.Attribute(companyAccount); err != nil {
		return c, err
	}
	account, err := r.account(ctx, tx, ev.AccountID)
	if err != nil {
		return c, err
	}
	if account == nil {
		return c, webhooks.UnknownAccount(ev.AccountID)
	}
	if ev.IsOperational() {
		// The service's own events reach the platform's endpoints alone.
		c.Platform, err = r.ownerEndpoints(ctx, tx, webhooks.PlatformRoutes, qPlatformEndpoints)
		return c, err
	}
	if ev.CompanyID != "" && !ev.IsAccountEvent() {
		if c.Company, err = r.companyEndpoints(ctx, tx, ev.CompanyID); err != nil {
			return c, err
		}
	}
	if c.Own, err = r.accountEndpoints(ctx, tx, ev.AccountID); err != nil {
		return c, err
	}
	if account.Managed() {
		if c.Manager, err = r.accountEndpoints(ctx, tx, account.ProvisionedBy); err != nil {
			return c, err
		}
	}
	return c, nil
}
