package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
)

// CreateAccount implements webhooks.Store.
func (s *Store) CreateAccount(ctx context.Context, a *webhooks.Account) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if a.ProvisionedBy != "" {
			p, err := findAccount(ctx, tx, a.ProvisionedBy)
			if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
				return webhooks.Errorf(webhooks.EINVALIDPROVISIONING, "provisioned_by %s is not an account.", a.ProvisionedBy)
			} else if err != nil {
				return err
			}
			if p.Managed() {
				return webhooks.Errorf(webhooks.EINVALIDPROVISIONING, "provisioned_by %s is itself a managed account: managed accounts cannot provision others.", a.ProvisionedBy)
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO accounts (id, name, provisioned_by, created) VALUES ($1, $2, $3, $4)`,
			a.ID, a.Name, nullString(a.ProvisionedBy), ts(a.Created))
		return err
	})
}

// FindAccount implements webhooks.Store.
func (s *Store) FindAccount(ctx context.Context, id string) (*webhooks.Account, error) {
	return read(findAccount(ctx, s.pool, id))
}

func findAccount(ctx context.Context, q querier, id string) (*webhooks.Account, error) {
	if !webhooks.ValidID(id) {
		return nil, notFound("account")
	}
	var a webhooks.Account
	var prov pgtype.Text
	var created pgtype.Timestamptz
	err := q.QueryRow(ctx, `SELECT id, name, provisioned_by, created FROM accounts WHERE id = $1`, id).
		Scan(&a.ID, &a.Name, &prov, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("account")
	} else if err != nil {
		return nil, err
	}
	a.ProvisionedBy, a.Created = prov.String, fromTS(created)
	return &a, nil
}

// CreateAPIKey implements webhooks.Store.
func (s *Store) CreateAPIKey(ctx context.Context, k *webhooks.APIKey, audit *webhooks.AuditEntry) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := findAccount(ctx, tx, k.AccountID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO api_keys (id, account_id, hash, created) VALUES ($1, $2, $3, $4)`,
			k.ID, k.AccountID, k.Hash, ts(k.Created)); err != nil {
			return err
		}
		return insertAudit(ctx, tx, audit, k.AccountID, webhooks.AuditAPIKeyCreated, webhooks.TargetAPIKey, k.ID, k.Created)
	})
}

// RevokeAPIKey implements webhooks.Store.
func (s *Store) RevokeAPIKey(ctx context.Context, accountID, keyID string, now time.Time, audit *webhooks.AuditEntry) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if !webhooks.ValidID(accountID) || !webhooks.ValidID(keyID) {
			return notFound("api key")
		}
		tag, err := tx.Exec(ctx, `DELETE FROM api_keys WHERE id = $1 AND account_id = $2`, keyID, accountID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound("api key")
		}
		return insertAudit(ctx, tx, audit, accountID, webhooks.AuditAPIKeyRevoked, webhooks.TargetAPIKey, keyID, now)
	})
}

// FindAPIKey implements webhooks.Store.
func (s *Store) FindAPIKey(ctx context.Context, hash []byte) (*webhooks.APIKey, error) {
	var k webhooks.APIKey
	var created pgtype.Timestamptz
	err := s.pool.QueryRow(ctx, `SELECT id, account_id, hash, created FROM api_keys WHERE hash = $1`, hash).
		Scan(&k.ID, &k.AccountID, &k.Hash, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("api key")
	} else if err != nil {
		return read[*webhooks.APIKey](nil, err)
	}
	k.Created = fromTS(created)
	return &k, nil
}

// CreateCompany implements webhooks.Store.
func (s *Store) CreateCompany(ctx context.Context, c *webhooks.Company) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := findAccount(ctx, tx, c.AccountID); webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
			return webhooks.Errorf(webhooks.EUNKNOWNACCOUNT, "account_id %s is not an account.", c.AccountID)
		} else if err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO companies (id, account_id, nif, name, created) VALUES ($1, $2, $3, $4, $5)`,
			c.ID, c.AccountID, c.NIF, c.Name, ts(c.Created))
		if isUniqueViolation(err, "companies_nif_key") {
			return webhooks.Errorf(webhooks.ENIFTAKEN, "NIF %s already belongs to a company.", c.NIF)
		}
		return err
	})
}

// FindCompany implements webhooks.Store.
func (s *Store) FindCompany(ctx context.Context, id string) (*webhooks.Company, error) {
	return read(findCompany(ctx, s.pool, id))
}

// ListCompanies implements webhooks.Store.
func (s *Store) ListCompanies(ctx context.Context, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.Company], error) {
	q := listQuery{table: "companies", cols: companyCols}
	q.whereID("account_id", accountID)
	return read(list(ctx, s.pool, q, p, scanCompany))
}

// ListAccountCompanies implements webhooks.Store.
func (s *Store) ListAccountCompanies(ctx context.Context, accountID string) ([]*webhooks.Company, error) {
	if !webhooks.ValidID(accountID) {
		return nil, nil
	}
	return read(queryAll(ctx, s.pool, scanCompany, `SELECT `+companyCols+` FROM companies WHERE account_id = $1 ORDER BY created, id`, accountID))
}

const companyCols = `id, account_id, nif, name, created`

func scanCompany(r scanner) (*webhooks.Company, error) {
	var c webhooks.Company
	var created pgtype.Timestamptz
	if err := r.Scan(&c.ID, &c.AccountID, &c.NIF, &c.Name, &created); err != nil {
		return nil, err
	}
	c.Created = fromTS(created)
	return &c, nil
}

func findCompany(ctx context.Context, q querier, id string) (*webhooks.Company, error) {
	if !webhooks.ValidID(id) {
		return nil, notFound("company")
	}
	c, err := scanCompany(q.QueryRow(ctx, `SELECT `+companyCols+` FROM companies WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("company")
	}
	return c, err
}
