package app

import (
	"context"

	webhooks "github.com/factuarea/webhooks"
)

// ListAccounts lists every account of the platform, newest first. Admin
// only.
func (a *App) ListAccounts(ctx context.Context, c Caller, p webhooks.Page) (*webhooks.List[*webhooks.Account], error) {
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return a.cfg.Store.ListAccounts(ctx, p)
}

// ListCompanies lists an account's companies, newest first. Admin only.
func (a *App) ListCompanies(ctx context.Context, c Caller, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.Company], error) {
	acct, err := a.adminAccount(ctx, c, accountID, p)
	if err != nil {
		return nil, err
	}
	return a.cfg.Store.ListCompanies(ctx, acct.ID, p)
}

// ListAPIKeys lists an account's API keys, newest first: their ids and
// creation times, never the keys (only their hashes are stored). Admin
// only.
func (a *App) ListAPIKeys(ctx context.Context, c Caller, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.APIKey], error) {
	acct, err := a.adminAccount(ctx, c, accountID, p)
	if err != nil {
		return nil, err
	}
	return a.cfg.Store.ListAPIKeys(ctx, acct.ID, p)
}

// adminAccount returns the account an admin list is of, once the caller is
// the admin and the page is valid.
func (a *App) adminAccount(ctx context.Context, c Caller, accountID string, p webhooks.Page) (*webhooks.Account, error) {
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return a.Account(ctx, c, accountID)
}
