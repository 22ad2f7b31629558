package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// APIKeyPrefix starts every account key, so that a leaked key is
// recognizable (and secret scanners can match it).
const APIKeyPrefix = "fk_"

// CreateAccount creates an account, managed when provisionedBy names the
// account that provisions it. Admin only.
func (a *App) CreateAccount(ctx context.Context, c Caller, name, provisionedBy string) (*webhooks.Account, error) {
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	acct := &webhooks.Account{ID: webhooks.NewID(), Name: name, ProvisionedBy: provisionedBy, Created: a.cfg.Now()}
	if err := acct.Validate(); err != nil {
		return nil, err
	}
	err := a.cfg.Store.InTx(ctx, func(tx Tx) error {
		if acct.Managed() {
			// One level only: a managed account provisions no other.
			// Locked: its deletion, which refuses while it provisions an
			// account, takes turns with this.
			p, err := tx.LockAccount(ctx, acct.ProvisionedBy)
			if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
				return webhooks.Errorf(webhooks.EINVALIDPROVISIONING, "provisioned_by %s is not an account.", acct.ProvisionedBy)
			} else if err != nil {
				return err
			}
			if p.Managed() {
				return webhooks.Errorf(webhooks.EINVALIDPROVISIONING, "provisioned_by %s is itself a managed account: managed accounts cannot provision others.", acct.ProvisionedBy)
			}
		}
		return tx.InsertAccount(ctx, acct)
	})
	if err != nil {
		return nil, err
	}
	return acct, nil
}

// Account returns an account c may see; any other is "not found".
func (a *App) Account(ctx context.Context, c Caller, id string) (*webhooks.Account, error) {
	if !webhooks.ValidID(id) || !c.canSee(id) {
		return nil, webhooks.NotFound("account")
	}
	return a.cfg.Store.FindAccount(ctx, id)
}

// CreateAPIKey makes a key for the account and returns it with the key
// itself, which is shown this once: only its hash is stored. Admin only.
func (a *App) CreateAPIKey(ctx context.Context, c Caller, accountID string) (*webhooks.APIKey, string, error) {
	if err := c.requireAdmin(); err != nil {
		return nil, "", err
	}
	acct, err := a.Account(ctx, c, accountID)
	if err != nil {
		return nil, "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, "", err
	}
	key := APIKeyPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	h := hashKey(key)
	k := &webhooks.APIKey{ID: webhooks.NewID(), AccountID: acct.ID, Hash: h[:], Created: a.cfg.Now()}
	err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
		if err := tx.InsertAPIKey(ctx, k); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, c.audit(acct.ID, webhooks.AuditAPIKeyCreated, webhooks.TargetAPIKey, k.ID, k.Created))
	})
	if err != nil {
		return nil, "", err
	}
	return k, key, nil
}

// RevokeAPIKey deletes an account's key: it stops working at once. Admin
// only.
func (a *App) RevokeAPIKey(ctx context.Context, c Caller, accountID, keyID string) error {
	if err := c.requireAdmin(); err != nil {
		return err
	}
	acct, err := a.Account(ctx, c, accountID)
	if err != nil {
		return err
	}
	if !webhooks.ValidID(keyID) {
		return webhooks.NotFound("api key")
	}
	return a.cfg.Store.InTx(ctx, func(tx Tx) error {
		if err := tx.DeleteAPIKey(ctx, acct.ID, keyID); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, c.audit(acct.ID, webhooks.AuditAPIKeyRevoked, webhooks.TargetAPIKey, keyID, a.cfg.Now()))
	})
}

// PortalLink is a link that opens the portal for one account.
type PortalLink struct {
	URL     string
	Expires time.Time
}

// CreatePortalSession issues a portal link for the account. The link is
// signed, not stored: every process with the same admin key accepts it.
// Admin only.
func (a *App) CreatePortalSession(ctx context.Context, c Caller, accountID string) (*PortalLink, error) {
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	acct, err := a.Account(ctx, c, accountID)
	if err != nil {
		return nil, err
	}
	if a.cfg.Sessions == nil {
		return nil, webhooks.Errorf(webhooks.EUNAVAILABLE, "The portal is not configured on this server.")
	}
	token, expires := a.cfg.Sessions.Issue(acct.ID, a.cfg.Now())
	return &PortalLink{URL: strings.TrimRight(a.cfg.PublicURL, "/") + "/portal/sessions/" + token, Expires: expires}, nil
}

// ListAudit lists an account's audit log, newest first. The log of a
// deleted account is kept, and the admin reads it still (SPEC 19).
func (a *App) ListAudit(ctx context.Context, c Caller, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.AuditEntry], error) {
	acct, err := a.Account(ctx, c, accountID)
	if webhooks.ErrorCode(err) == webhooks.ENOTFOUND && c.IsAdmin() && webhooks.ValidID(accountID) {
		acct, err = a.cfg.Store.FindDeletedAccount(ctx, accountID)
	}
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return a.cfg.Store.ListAudit(ctx, acct.ID, p)
}

// ListPlatformAudit lists the platform's own audit log, newest first: the
// changes to platform endpoints (SPEC 8), which belong to no account.
// Admin only.
func (a *App) ListPlatformAudit(ctx context.Context, c Caller, p webhooks.Page) (*webhooks.List[*webhooks.AuditEntry], error) {
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return a.cfg.Store.ListAudit(ctx, "", p)
}

// CreateCompany creates a company of an account. Admin only.
func (a *App) CreateCompany(ctx context.Context, c Caller, accountID, nif, name string) (*webhooks.Company, error) {
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	co := &webhooks.Company{ID: webhooks.NewID(), AccountID: accountID, NIF: nif, Name: name, Created: a.cfg.Now()}
	if err := co.Validate(); err != nil {
		return nil, err
	}
	err := a.cfg.Store.InTx(ctx, func(tx Tx) error {
		// Locked: the account's deletion takes turns with this.
		if _, err := tx.LockAccount(ctx, co.AccountID); webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
			return webhooks.UnknownAccount(co.AccountID)
		} else if err != nil {
			return err
		}
		return tx.InsertCompany(ctx, co)
	})
	if err != nil {
		return nil, err
	}
	return co, nil
}

// Company returns a company c may see; another account's is "not found",
// exactly as a missing one.
func (a *App) Company(ctx context.Context, c Caller, id string) (*webhooks.Company, error) {
	if !webhooks.ValidID(id) {
		return nil, webhooks.NotFound("company")
	}
	co, err := a.cfg.Store.FindCompany(ctx, id)
	if err != nil {
		return nil, err
	}
	if !c.canSee(co.AccountID) {
		return nil, webhooks.NotFound("company")
	}
	return co, nil
}
