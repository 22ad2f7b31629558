package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
)

// InsertAccount implements driver.Tx.
func (t *txn) InsertAccount(ctx context.Context, a *webhooks.Account) error {
	_, err := t.Exec(ctx, `INSERT INTO accounts (id, name, provisioned_by, created) VALUES ($1, $2, $3, $4)`,
		a.ID, a.Name, nullString(a.ProvisionedBy), ts(a.Created))
	return err
}

// FindAccount implements driver.Tx.
func (t *txn) FindAccount(ctx context.Context, id string) (*webhooks.Account, error) {
	return findAccount(ctx, t, id)
}

// FindAccount implements driver.Store.
func (s *Store) FindAccount(ctx context.Context, id string) (*webhooks.Account, error) {
	return read(findAccount(ctx, s.pool, id))
}

func findAccount(ctx context.Context, q querier, id string) (*webhooks.Account, error) {
	if !webhooks.ValidID(id) {
		return nil, notFound("account")
	}
	a, err := scanAccount(q.QueryRow(ctx, `SELECT `+accountCols+` FROM accounts WHERE id = $1 AND deleted IS NULL`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("account")
	}
	return a, err
}

const accountCols = `id, name, provisioned_by, created`

func scanAccount(r scanner) (*webhooks.Account, error) {
	var a webhooks.Account
	var prov pgtype.Text
	var created pgtype.Timestamptz
	if err := r.Scan(&a.ID, &a.Name, &prov, &created); err != nil {
		return nil, err
	}
	a.ProvisionedBy, a.Created = prov.String, fromTS(created)
	return &a, nil
}

// ListAccounts implements driver.Store.
func (s *Store) ListAccounts(ctx context.Context, p webhooks.Page) (*webhooks.List[*webhooks.Account], error) {
	q := listQuery{table: "accounts", cols: accountCols}
	q.scoped()
	q.conds = append(q.conds, "deleted IS NULL")
	return read(list(ctx, s.pool, q, p, scanAccount))
}

// InsertAPIKey implements driver.Tx.
func (t *txn) InsertAPIKey(ctx context.Context, k *webhooks.APIKey) error {
	_, err := t.Exec(ctx, `INSERT INTO api_keys (id, account_id, hash, created) VALUES ($1, $2, $3, $4)`,
		k.ID, k.AccountID, k.Hash, ts(k.Created))
	return err
}

// DeleteAPIKey implements driver.Tx.
func (t *txn) DeleteAPIKey(ctx context.Context, accountID, keyID string) error {
	if !webhooks.ValidID(accountID) || !webhooks.ValidID(keyID) {
		return notFound("api key")
	}
	tag, err := t.Exec(ctx, `DELETE FROM api_keys WHERE id = $1 AND account_id = $2`, keyID, accountID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return notFound("api key")
	}
	return nil
}

// FindAPIKey implements driver.Store.
func (s *Store) FindAPIKey(ctx context.Context, hash []byte) (*webhooks.APIKey, error) {
	k, err := scanAPIKey(s.pool.QueryRow(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("api key")
	} else if err != nil {
		return read[*webhooks.APIKey](nil, err)
	}
	return k, nil
}

const apiKeyCols = `id, account_id, hash, created`

func scanAPIKey(r scanner) (*webhooks.APIKey, error) {
	var k webhooks.APIKey
	var created pgtype.Timestamptz
	if err := r.Scan(&k.ID, &k.AccountID, &k.Hash, &created); err != nil {
		return nil, err
	}
	k.Created = fromTS(created)
	return &k, nil
}

// ListAPIKeys implements driver.Store.
func (s *Store) ListAPIKeys(ctx context.Context, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.APIKey], error) {
	q := listQuery{table: "api_keys", cols: apiKeyCols}
	q.whereID("account_id", accountID)
	return read(list(ctx, s.pool, q, p, scanAPIKey))
}

// InsertCompany implements driver.Tx.
func (t *txn) InsertCompany(ctx context.Context, c *webhooks.Company) error {
	_, err := t.Exec(ctx, `INSERT INTO companies (id, account_id, nif, name, created) VALUES ($1, $2, $3, $4, $5)`,
		c.ID, c.AccountID, c.NIF, c.Name, ts(c.Created))
	if isUniqueViolation(err, "companies_nif_key") {
		return webhooks.NIFTaken(c.NIF)
	}
	return err
}

// FindCompany implements driver.Tx.
func (t *txn) FindCompany(ctx context.Context, id string) (*webhooks.Company, error) {
	return findCompany(ctx, t, id)
}

// FindCompany implements driver.Store.
func (s *Store) FindCompany(ctx context.Context, id string) (*webhooks.Company, error) {
	return read(findCompany(ctx, s.pool, id))
}

// ListCompanies implements driver.Store.
func (s *Store) ListCompanies(ctx context.Context, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.Company], error) {
	q := listQuery{table: "companies", cols: companyCols}
	q.whereID("account_id", accountID)
	q.scoped()
	q.conds = append(q.conds, "deleted IS NULL")
	return read(list(ctx, s.pool, q, p, scanCompany))
}

// ListAccountCompanies implements driver.Store.
func (s *Store) ListAccountCompanies(ctx context.Context, accountID string) ([]*webhooks.Company, error) {
	if !webhooks.ValidID(accountID) {
		return nil, nil
	}
	return read(queryAll(ctx, s.pool, scanCompany, `SELECT `+companyCols+` FROM companies WHERE account_id = $1 AND deleted IS NULL ORDER BY created, id`, accountID))
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
	c, err := scanCompany(q.QueryRow(ctx, `SELECT `+companyCols+` FROM companies WHERE id = $1 AND deleted IS NULL`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("company")
	}
	return c, err
}
