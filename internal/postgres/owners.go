package postgres

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
)

// qPlatformEndpoints reads the endpoints an operational event may reach.
const qPlatformEndpoints = `SELECT ` + endpointCols + ` FROM endpoints
	WHERE scope = 'platform' AND deleted IS NULL ORDER BY created, id`

// queueOwners queues in b the statements that read the owners of keys;
// the slice returned holds them once b is sent.
//
// The owners' routes are locked shared before the endpoints are read (by
// the next statement, which sees what committed before it): a change to
// one of those endpoints, which takes its owner's lock exclusive, either
// commits first and is seen, or waits for this transaction. Advisory locks
// live in memory: the hot path writes nothing for them, unlike FOR SHARE
// on the endpoint rows.
func queueOwners(b *pgx.Batch, keys []webhooks.OwnersKey) []*webhooks.Owners {
	out := make([]*webhooks.Owners, len(keys))
	for i, k := range keys {
		o := &webhooks.Owners{}
		out[i] = o
		company, account, routes := optionalID(k.Company), optionalID(k.Account), optionalText(k.RoutesOwner())
		b.Queue(`WITH q AS (
				SELECT c.account_id AS company_account, a.id AS account_id, a.provisioned_by
				FROM (SELECT 1) one
				LEFT JOIN companies c ON c.id = $1::uuid AND c.deleted IS NULL
				LEFT JOIN accounts a ON a.id = coalesce(c.account_id, $2::uuid) AND a.deleted IS NULL)
			SELECT company_account, account_id, provisioned_by,
				(SELECT count(pg_advisory_xact_lock_shared($3, hashtext(o))) FROM unnest(ARRAY[account_id::text, $4::text, provisioned_by::text]) AS o WHERE o IS NOT NULL)
			FROM q`,
			company, account, lockOwner, routes).
			QueryRow(func(row pgx.Row) error {
				var companyAccount, account, manager pgtype.Text
				var locks int64
				err := row.Scan(&companyAccount, &account, &manager, &locks)
				o.CompanyAccount, o.Account, o.Manager = companyAccount.String, account.String, manager.String
				return err
			})
		collect := func(rows pgx.Rows) error {
			var err error
			o.Endpoints, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*webhooks.Endpoint, error) { return scanEndpoint(r) })
			return err
		}
		if k.Operational {
			b.Queue(qPlatformEndpoints).Query(collect)
			continue
		}
		b.Queue(`SELECT `+endpointCols+` FROM endpoints
			WHERE deleted IS NULL AND (company_id = $1::uuid OR account_id = (
				SELECT a.id FROM accounts a LEFT JOIN companies c ON c.id = $2::uuid AND c.deleted IS NULL
					WHERE a.id = coalesce(c.account_id, $3::uuid) AND a.deleted IS NULL)
				OR account_id = (
				SELECT a.provisioned_by FROM accounts a LEFT JOIN companies c ON c.id = $2::uuid AND c.deleted IS NULL
					WHERE a.id = coalesce(c.account_id, $3::uuid) AND a.deleted IS NULL))
			ORDER BY created, id`,
			routes, company, account).Query(collect)
	}
	return out
}

// optionalText is s, or NULL when it is empty.
func optionalText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// queueTails queues in b the statements that lock each chain (sorted, so
// that two transactions take them in one order) and read its last pending
// delivery into tails: from the chain's queue rows (queue_chain), which
// are its pending deliveries (see qPendingDeliveries), not from its whole
// history, which a chain at rest would have to read through.
func queueTails(b *pgx.Batch, chains []webhooks.OrderKey, tails map[webhooks.OrderKey]string) {
	for _, k := range queueChainLocks(b, chains) {
		b.Queue(`SELECT d.id FROM queue q JOIN deliveries d ON d.id = q.delivery_id
			WHERE q.endpoint_id = $1 AND q.ordering_key = $2 AND d.status = 'pending'
			AND NOT EXISTS (SELECT 1 FROM deliveries n WHERE n.waiting_for = d.id AND n.status = 'pending')
			ORDER BY q.created DESC, q.delivery_id DESC LIMIT 1`, k.EndpointID, k.Key).QueryRow(func(row pgx.Row) error {
			var id string
			err := row.Scan(&id)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			tails[k] = id
			return err
		})
	}
}

// queueChainLocks queues in b the statement that locks the chains, in one
// order (so that two transactions cannot deadlock), and returns them in
// that order.
func queueChainLocks(b *pgx.Batch, chains []webhooks.OrderKey) []webhooks.OrderKey {
	chains = slices.Clone(chains)
	slices.SortFunc(chains, func(a, b webhooks.OrderKey) int {
		return cmp.Or(strings.Compare(a.EndpointID, b.EndpointID), strings.Compare(a.Key, b.Key))
	})
	keys := make([]string, len(chains))
	for i, k := range chains {
		keys[i] = k.EndpointID + "/" + k.Key
	}
	b.Queue(`SELECT count(pg_advisory_xact_lock($1, hashtext(k))) FROM unnest($2::text[]) WITH ORDINALITY AS k(k, n)`, lockChain, keys)
	return chains
}

// Tails implements driver.Chains.
func (t *registerTx) Tails(ctx context.Context, chains []webhooks.OrderKey) (map[webhooks.OrderKey]string, error) {
	tails := map[webhooks.OrderKey]string{}
	var b pgx.Batch
	queueTails(&b, chains, tails)
	return tails, t.conn.SendBatch(ctx, &b).Close()
}

// Tails implements driver.Chains.
func (t *txn) Tails(ctx context.Context, chains []webhooks.OrderKey) (map[webhooks.OrderKey]string, error) {
	tails := map[webhooks.OrderKey]string{}
	var b pgx.Batch
	queueTails(&b, chains, tails)
	return tails, t.SendBatch(ctx, &b).Close()
}
