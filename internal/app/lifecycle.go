package app

import (
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// The data lifecycle (SPEC 19): renames, the erasure of an event, and the
// deletion of a company or an account, whose events a durable erasure
// job erases in chunks (EraseNext).

// UpdateAccount renames an account. Admin only.
func (a *App) UpdateAccount(ctx context.Context, c Caller, id string, name *string) (*webhooks.Account, error) {
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	acct, err := a.Account(ctx, c, id)
	if err != nil {
		return nil, err
	}
	refuse := func(err error) error {
		return a.refused(ctx, c, acct.ID, webhooks.AuditAccountUpdated, webhooks.TargetAccount, acct.ID, err)
	}
	if name == nil {
		return nil, refuse(webhooks.Errorf(webhooks.EINVALID, "name is required: it is the one field an account's PATCH changes."))
	}
	if err := acct.Rename(*name); err != nil {
		return nil, refuse(err)
	}
	now := a.cfg.Now()
	err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
		if err := tx.UpdateAccount(ctx, acct); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, c.audit(acct.ID, webhooks.AuditAccountUpdated, webhooks.TargetAccount, acct.ID, now))
	})
	if err != nil {
		return nil, err
	}
	return acct, nil
}

// UpdateCompany renames a company; its NIF never changes. Admin only.
func (a *App) UpdateCompany(ctx context.Context, c Caller, id string, name *string) (*webhooks.Company, error) {
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	co, err := a.Company(ctx, c, id)
	if err != nil {
		return nil, err
	}
	refuse := func(err error) error {
		return a.refused(ctx, c, co.AccountID, webhooks.AuditCompanyUpdated, webhooks.TargetCompany, co.ID, err)
	}
	if name == nil {
		return nil, refuse(webhooks.Errorf(webhooks.EINVALID, "name is required: it is the one field a company's PATCH changes (a NIF never changes: another NIF is another company)."))
	}
	if err := co.Rename(*name); err != nil {
		return nil, refuse(err)
	}
	now := a.cfg.Now()
	err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
		if err := tx.UpdateCompany(ctx, co); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, c.audit(co.AccountID, webhooks.AuditCompanyUpdated, webhooks.TargetCompany, co.ID, now))
	})
	if err != nil {
		return nil, err
	}
	return co, nil
}

// EraseEvent erases an event's payload (webhooks.Event.Erase) and returns
// the erased event. Erasing it again changes nothing. Admin only.
func (a *App) EraseEvent(ctx context.Context, c Caller, id string) (*webhooks.Event, error) {
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	if !webhooks.ValidID(id) {
		return nil, webhooks.NotFound("event")
	}
	now := a.cfg.Now()
	var ev *webhooks.Event
	err := a.cfg.Store.InTx(ctx, func(tx Tx) error {
		var err error
		if ev, err = tx.FindEvent(ctx, id); err != nil {
			return err
		}
		if err := tx.EraseEvents(ctx, []string{ev.ID}, now); err != nil {
			return err
		}
		ev.Erase(now)
		return insertAudit(ctx, tx, c.audit(ev.AccountID, webhooks.AuditEventErased, webhooks.TargetEvent, ev.ID, now))
	})
	if err != nil {
		return nil, err
	}
	a.cfg.Erased()
	return ev, nil
}

// DeleteCompany deletes a company: its endpoints are deleted (their
// pending deliveries end failed, endpoint_deleted), the pending
// deliveries of its events to the endpoints that stay (its account's, the
// provisioning account's) end failed (event_erased), its NIF is freed,
// and an erasure job is stored that erases its events, all in one
// transaction; the job runs in the background (EraseNext). Admin only.
func (a *App) DeleteCompany(ctx context.Context, c Caller, id string) error {
	if err := c.requireAdmin(); err != nil {
		return err
	}
	if !webhooks.ValidID(id) {
		return webhooks.NotFound("company")
	}
	now := a.cfg.Now()
	job := &webhooks.Erasure{ID: webhooks.NewID(), CompanyID: id, Created: now}
	err := a.cfg.Store.InTx(ctx, func(tx Tx) error {
		co, err := tx.FindCompany(ctx, id)
		if err != nil {
			return err
		}
		// Its account, locked: the account's deletion and this one take
		// turns (the second finds the company gone).
		if _, err := tx.LockAccount(ctx, co.AccountID); err != nil {
			return err
		}
		if co, err = tx.FindCompany(ctx, id); err != nil {
			return err
		}
		if err := a.deleteCompany(ctx, tx, c, co, job, now); err != nil {
			return err
		}
		if err := tx.InsertErasure(ctx, job); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, c.audit(co.AccountID, webhooks.AuditCompanyDeleted, webhooks.TargetCompany, co.ID, now))
	})
	if err != nil {
		return err
	}
	a.deleted()
	return nil
}

// deleteCompany deletes co in tx: its endpoints, the pending deliveries
// of job's events on the endpoints of its account and of the
// provisioning account, and the company itself. Its routes are locked
// first: a registration for it either committed before (and the job
// erases its event) or comes after, and finds no company.
func (a *App) deleteCompany(ctx context.Context, tx Tx, c Caller, co *webhooks.Company, job *webhooks.Erasure, now time.Time) error {
	if err := tx.LockRoutes(ctx, co.ID); err != nil {
		return err
	}
	owners, err := tx.ReadOwners(ctx, []webhooks.OwnersKey{{Company: co.ID}})
	if err != nil {
		return err
	}
	for _, ep := range owners[0].Endpoints {
		if ep.Scope == webhooks.ScopeCompany {
			if err := a.deleteEndpoint(ctx, tx, c, co.AccountID, ep.ID, now); err != nil {
				return err
			}
		} else if err := tx.EndPendingOf(ctx, ep.ID, job, now); err != nil {
			return err
		}
	}
	return tx.DeleteCompany(ctx, co.ID, now)
}

// deleteEndpoint deletes an endpoint of a company or an account being
// deleted, as DeleteEndpoint does, audited in the account's log.
func (a *App) deleteEndpoint(ctx context.Context, tx Tx, c Caller, accountID, id string, now time.Time) error {
	if _, err := tx.LockEndpoint(ctx, id); err != nil {
		return err
	}
	if err := tx.DeleteEndpoint(ctx, id, now); err != nil {
		return err
	}
	if err := tx.EndPending(ctx, id, webhooks.ReasonEndpointDeleted, now); err != nil {
		return err
	}
	return tx.InsertAudit(ctx, c.audit(accountID, webhooks.AuditEndpointDeleted, webhooks.TargetEndpoint, id, now))
}

// DeleteAccount deletes an account: each of its companies as
// DeleteCompany does, its account endpoints, its API keys (they stop
// working at once), and an erasure job for its events, in one
// transaction. An account that provisioned an account that still exists
// is refused (EHASMANAGEDACCOUNTS). The account's audit log is kept:
// the admin reads it still (ListAudit). Admin only.
func (a *App) DeleteAccount(ctx context.Context, c Caller, id string) error {
	if err := c.requireAdmin(); err != nil {
		return err
	}
	acct, err := a.Account(ctx, c, id)
	if err != nil {
		return err
	}
	now := a.cfg.Now()
	job := &webhooks.Erasure{ID: webhooks.NewID(), AccountID: acct.ID, Created: now}
	err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
		// Locked first: an account provisioned, or a company created, by a
		// transaction that commits meanwhile is seen below.
		if _, err := tx.LockAccount(ctx, acct.ID); err != nil {
			return err
		}
		if managed, err := tx.HasManagedAccounts(ctx, acct.ID); err != nil {
			return err
		} else if managed {
			return webhooks.HasManagedAccounts(acct.ID)
		}
		if err := tx.LockRoutes(ctx, acct.ID); err != nil {
			return err
		}
		companies, err := tx.AccountCompanies(ctx, acct.ID)
		if err != nil {
			return err
		}
		for _, co := range companies {
			if err := a.deleteCompany(ctx, tx, c, co, job, now); err != nil {
				return err
			}
			if err := tx.InsertAudit(ctx, c.audit(acct.ID, webhooks.AuditCompanyDeleted, webhooks.TargetCompany, co.ID, now)); err != nil {
				return err
			}
		}
		// Its own endpoints, and, if it is managed, the provisioning
		// account's, which receive its events.
		owners, err := tx.ReadOwners(ctx, []webhooks.OwnersKey{{Account: acct.ID, AccountEvent: true}})
		if err != nil {
			return err
		}
		for _, ep := range owners[0].Endpoints {
			if ep.AccountID == acct.ID {
				if err := a.deleteEndpoint(ctx, tx, c, acct.ID, ep.ID, now); err != nil {
					return err
				}
			} else if err := tx.EndPendingOf(ctx, ep.ID, job, now); err != nil {
				return err
			}
		}
		if err := tx.DeleteAccount(ctx, acct.ID, now); err != nil {
			return err
		}
		if err := tx.InsertErasure(ctx, job); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, c.audit(acct.ID, webhooks.AuditAccountDeleted, webhooks.TargetAccount, acct.ID, now))
	})
	if err != nil {
		return a.refused(ctx, c, acct.ID, webhooks.AuditAccountDeleted, webhooks.TargetAccount, acct.ID, err)
	}
	a.deleted()
	return nil
}

// deleted tells the background work that an erasure job waits.
func (a *App) deleted() {
	a.cfg.WakeErasure()
	a.cfg.Erased()
}

// EraseNext works on the oldest erasure job for one short transaction:
// it erases up to limit of its events, and deletes the job once none is
// left. It returns whether any job remains (call it again while it
// does). A crash between two calls loses nothing: the job and its cursor
// are in the database, and the next call goes on where the last commit
// left it.
func (a *App) EraseNext(ctx context.Context, limit int) (more bool, err error) {
	erased := 0
	// A chunk lost in a crash is erased again: its cursor rolls back with
	// it. So it need not wait for the disk.
	err = a.cfg.Store.InLazyTx(ctx, func(tx Tx) error {
		job, err := tx.NextErasure(ctx)
		if err != nil || job == nil {
			return err
		}
		more = true
		if erased, err = tx.EraseChunk(ctx, job, limit); err != nil {
			return err
		}
		if erased < limit {
			return tx.DeleteErasure(ctx, job.ID)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if erased > 0 {
		a.cfg.Erased()
	}
	return more, nil
}
