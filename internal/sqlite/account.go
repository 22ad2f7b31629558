package sqlite

import (
	"context"
	"database/sql"
	"errors"

	webhooks "github.com/factuarea/webhooks"
)

// InsertAccount implements driver.Tx.
func (t *txn) InsertAccount(ctx context.Context, a *webhooks.Account) error {
	_, err := t.ExecContext(ctx, `INSERT INTO accounts (id, name, provisioned_by, created) VALUES (?, ?, ?, ?)`,
		dbID(a.ID), a.Name, nullID(a.ProvisionedBy), ms(a.Created))
	return err
}

// FindAccount implements driver.Tx.
func (t *txn) FindAccount(ctx context.Context, id string) (*webhooks.Account, error) {
	return findAccount(ctx, t, id)
}

// FindAccount implements driver.Store.
func (s *Store) FindAccount(ctx context.Context, id string) (*webhooks.Account, error) {
	return read(findAccount(ctx, s.read, id))
}

func findAccount(ctx context.Context, q querier, id string) (*webhooks.Account, error) {
	a, err := scanAccount(q.QueryRowContext(ctx, `SELECT `+accountCols+` FROM accounts WHERE id = ? AND deleted IS NULL`, dbID(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("account")
	}
	return a, err
}

const accountCols = `id, name, provisioned_by, created`

func scanAccount(r scanner) (*webhooks.Account, error) {
	var a webhooks.Account
	var created sql.NullInt64
	if err := r.Scan((*dbID)(&a.ID), &a.Name, (*dbID)(&a.ProvisionedBy), &created); err != nil {
		return nil, err
	}
	a.Created = fromMS(created)
	return &a, nil
}

// ListAccounts implements driver.Store.
func (s *Store) ListAccounts(ctx context.Context, p webhooks.Page) (*webhooks.List[*webhooks.Account], error) {
	q := listQuery{table: "accounts", cols: accountCols, where: []string{"true"}}
	q.scoped()
	q.where = append(q.where, "deleted IS NULL")
	return read(list(ctx, s.read, q, p, scanAccount))
}

// InsertAPIKey implements driver.Tx.
func (t *txn) InsertAPIKey(ctx context.Context, k *webhooks.APIKey) error {
	_, err := t.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, hash, created) VALUES (?, ?, ?, ?)`,
		dbID(k.ID), dbID(k.AccountID), k.Hash, ms(k.Created))
	return err
}

// DeleteAPIKey implements driver.Tx.
func (t *txn) DeleteAPIKey(ctx context.Context, accountID, keyID string) error {
	res, err := t.ExecContext(ctx, `DELETE FROM api_keys WHERE id = ? AND account_id = ?`, dbID(keyID), dbID(accountID))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("api key")
	}
	return nil
}

// FindAPIKey implements driver.Store.
func (s *Store) FindAPIKey(ctx context.Context, hash []byte) (*webhooks.APIKey, error) {
	k, err := scanAPIKey(s.read.QueryRowContext(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("api key")
	} else if err != nil {
		return nil, dbError(err)
	}
	return k, nil
}

const apiKeyCols = `id, account_id, hash, created`

func scanAPIKey(r scanner) (*webhooks.APIKey, error) {
	var k webhooks.APIKey
	var created sql.NullInt64
	if err := r.Scan((*dbID)(&k.ID), (*dbID)(&k.AccountID), &k.Hash, &created); err != nil {
		return nil, err
	}
	k.Created = fromMS(created)
	return &k, nil
}

// ListAPIKeys implements driver.Store.
func (s *Store) ListAPIKeys(ctx context.Context, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.APIKey], error) {
	q := listQuery{table: "api_keys", cols: apiKeyCols, where: []string{"account_id = ?"}, args: []any{dbID(accountID)}}
	return read(list(ctx, s.read, q, p, scanAPIKey))
}

// InsertCompany implements driver.Tx.
func (t *txn) InsertCompany(ctx context.Context, c *webhooks.Company) error {
	_, err := t.ExecContext(ctx, `INSERT INTO companies (id, account_id, nif, name, created) VALUES (?, ?, ?, ?, ?)`,
		dbID(c.ID), dbID(c.AccountID), c.NIF, c.Name, ms(c.Created))
	if isUniqueViolation(err) {
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
	return read(findCompany(ctx, s.read, id))
}

func findCompany(ctx context.Context, q querier, id string) (*webhooks.Company, error) {
	c, err := scanCompany(q.QueryRowContext(ctx, `SELECT `+companyCols+` FROM companies WHERE id = ? AND deleted IS NULL`, dbID(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("company")
	}
	return c, err
}

const companyCols = `id, account_id, nif, name, created`

func scanCompany(r scanner) (*webhooks.Company, error) {
	var c webhooks.Company
	var created sql.NullInt64
	if err := r.Scan((*dbID)(&c.ID), (*dbID)(&c.AccountID), &c.NIF, &c.Name, &created); err != nil {
		return nil, err
	}
	c.Created = fromMS(created)
	return &c, nil
}

// ListCompanies implements driver.Store.
func (s *Store) ListCompanies(ctx context.Context, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.Company], error) {
	q := listQuery{table: "companies", cols: companyCols, where: []string{"account_id = ?"}, args: []any{dbID(accountID)}}
	q.scoped()
	q.where = append(q.where, "deleted IS NULL")
	return read(list(ctx, s.read, q, p, scanCompany))
}

// ListAccountCompanies implements driver.Store.
func (s *Store) ListAccountCompanies(ctx context.Context, accountID string) ([]*webhooks.Company, error) {
	return read(queryAll(ctx, s.read, scanCompany, `SELECT `+companyCols+` FROM companies WHERE account_id = ? AND deleted IS NULL ORDER BY created, id`, dbID(accountID)))
}
