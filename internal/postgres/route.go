package postgres

import (
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
)

// routes caches what registering an event reads to route it: its company's
// account, the account and the one that provisioned it, and the endpoints
// of each. Those reads were two of a registration's statements, the
// endpoints' all of their columns. They change only when an account, a
// company or an endpoint does, which routing_version counts (its triggers
// bump it, in the changing transaction), so every process's cache follows
// every process's changes: a registration group reads the version after it
// has taken its owners' locks (see registerGroupOn) and, if routing changed
// since its cached reads, starts again without them.
type routes struct {
	mu      sync.Mutex
	version int64 // routing_version when the entries were read
	byKey   map[routeKey]*route
}

// routeKey is what an event's route depends on.
type routeKey struct {
	company, account string // as the event names them
	accountEvent     bool   // an account.* event reaches no company endpoint
	operational      bool   // the service's own events reach the platform's endpoints alone
}

func routeKeyOf(ev *webhooks.Event) routeKey {
	return routeKey{company: ev.CompanyID, account: ev.AccountID, accountEvent: ev.IsAccountEvent(), operational: ev.IsOperational()}
}

// route is what one routeKey reads. It is shared, and never changed once
// cached: routing reads its endpoints and must not change them.
type route struct {
	companyAccount string // the company's account; "" when there is no such company
	account        string // the event's account; "" when there is no such account
	manager        string // the account that provisioned it, if any
	endpoints      []*webhooks.Endpoint
}

// maxRoutes bounds what the cache holds: past it, it starts again.
const maxRoutes = 20000

// get sets routes[i] to the cached route of group[i]'s event, if any, and
// returns the version they were read at.
func (r *routes) get(group []*registration, routes []*route) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, g := range group {
		routes[i] = r.byKey[routeKeyOf(g.ev)]
	}
	return r.version
}

// put caches what was read at version v. Reads of an older version than
// the cache's are dropped; a newer version empties the cache first.
func (r *routes) put(v int64, read map[routeKey]*route) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey == nil || v > r.version || len(r.byKey)+len(read) > maxRoutes {
		r.byKey, r.version = map[routeKey]*route{}, v
	}
	if v != r.version {
		return
	}
	for k, rt := range read {
		r.byKey[k] = rt
	}
}

// reset empties the cache.
func (r *routes) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byKey = nil
}

// owners are the routes keys that registering an event locks shared before
// it reads or trusts its route (see txn.LockRoutes): its account's, its
// company's (or the platform's, for an operational event), and the
// provisioning account's.
func (rt *route) owners(ev *webhooks.Event) []string {
	keys := []string{rt.account, rt.manager}
	if k, ok := routesOf(ev).(string); ok {
		keys = append(keys, k)
	}
	return slices.DeleteFunc(keys, func(k string) bool { return k == "" })
}

// candidates checks ev against its route, fills in its account, and sorts
// the endpoints by how ev may reach them.
func (rt *route) candidates(ev *webhooks.Event) (webhooks.Candidates, error) {
	var c webhooks.Candidates
	if err := ev.Attribute(rt.companyAccount); err != nil {
		return c, err
	}
	if rt.account == "" {
		return c, webhooks.UnknownAccount(ev.AccountID)
	}
	ev.AccountID = rt.account
	for _, e := range rt.endpoints {
		switch {
		case e.Scope == webhooks.ScopePlatform:
			c.Platform = append(c.Platform, e)
		case e.Scope == webhooks.ScopeCompany:
			c.Company = append(c.Company, e)
		case e.AccountID == ev.AccountID:
			c.Own = append(c.Own, e)
		default:
			c.Manager = append(c.Manager, e)
		}
	}
	return c, nil
}

// queueRoute queues in b the statements that read ev's route into rt.
//
// The owners of every endpoint the event may reach are locked shared
// before the endpoints are read (by the next statement, which sees what
// committed before it): a change to one of those endpoints, which takes
// its owner's lock exclusive, either commits first and is seen, or waits
// for this event's deliveries, and then ends those a disable must end.
// Advisory locks live in memory: the hot path writes nothing for them,
// unlike FOR SHARE on the endpoint rows.
func queueRoute(b *pgx.Batch, ev *webhooks.Event, rt *route) {
	companyID, accountID := optionalID(ev.CompanyID), optionalID(ev.AccountID)
	b.Queue(`WITH q AS (
			SELECT c.account_id AS company_account, a.id AS account_id, a.provisioned_by
			FROM (SELECT 1) one
			LEFT JOIN companies c ON c.id = $1::uuid
			LEFT JOIN accounts a ON a.id = coalesce(c.account_id, $2::uuid))
		SELECT company_account, account_id, provisioned_by,
			(SELECT count(pg_advisory_xact_lock_shared($3, hashtext(o))) FROM unnest(ARRAY[account_id::text, $4::text, provisioned_by::text]) AS o WHERE o IS NOT NULL)
		FROM q`,
		companyID, accountID, lockOwner, routesOf(ev)).
		QueryRow(func(row pgx.Row) error {
			var companyAccount, account, manager pgtype.Text
			var locks int64
			err := row.Scan(&companyAccount, &account, &manager, &locks)
			rt.companyAccount, rt.account, rt.manager = companyAccount.String, account.String, manager.String
			return err
		})
	collect := func(rows pgx.Rows) error {
		var err error
		rt.endpoints, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*webhooks.Endpoint, error) { return scanEndpoint(r) })
		return err
	}
	if ev.IsOperational() {
		b.Queue(qPlatformEndpoints).Query(collect)
		return
	}
	b.Queue(`SELECT `+endpointCols+` FROM endpoints
		WHERE deleted IS NULL AND (company_id = $1::uuid OR account_id = (
			SELECT a.id FROM accounts a LEFT JOIN companies c ON c.id = $2::uuid WHERE a.id = coalesce(c.account_id, $3::uuid))
			OR account_id = (
			SELECT a.provisioned_by FROM accounts a LEFT JOIN companies c ON c.id = $2::uuid WHERE a.id = coalesce(c.account_id, $3::uuid)))
		ORDER BY created, id`,
		companyEndpointsOf(ev), companyID, accountID).Query(collect)
}

// queueOwnerLocks queues in b the statement that takes the owners' locks
// of the registrations whose routes are cached, in one order.
func queueOwnerLocks(b *pgx.Batch, owners []string) {
	slices.Sort(owners)
	owners = slices.Compact(owners)
	b.Queue(`SELECT count(pg_advisory_xact_lock_shared($1, hashtext(o))) FROM unnest($2::text[]) AS o`, lockOwner, owners)
}

// qVersions reads the versions of routing and of the catalog.
const qVersions = `SELECT (SELECT version FROM routing_version WHERE id = 1), (SELECT version FROM catalog_version WHERE id = 1)`
