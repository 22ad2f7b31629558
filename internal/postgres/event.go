package postgres

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

const eventCols = `id, type, api_version, livemode, test, correlation_id, account_id, company_id, object, created`

func scanEvent(r scanner) (*webhooks.Event, error) {
	var e webhooks.Event
	var corr, account, company pgtype.Text
	var object []byte
	var created pgtype.Timestamptz
	if err := r.Scan(&e.ID, &e.Type, &e.APIVersion, &e.Livemode, &e.Test, &corr, &account, &company, &object, &created); err != nil {
		return nil, err
	}
	e.CorrelationID, e.CompanyID, e.AccountID = corr.String, company.String, account.String
	e.Object, e.Created = object, fromTS(created)
	return &e, nil
}

func findEvent(ctx context.Context, q querier, id string) (*webhooks.Event, error) {
	if !webhooks.ValidID(id) {
		return nil, notFound("event")
	}
	e, err := scanEvent(q.QueryRow(ctx, `SELECT `+eventCols+` FROM events WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("event")
	}
	return e, err
}

// FindEvent implements app.Store.
func (s *Store) FindEvent(ctx context.Context, id string) (*webhooks.Event, error) {
	return read(findEvent(ctx, s.pool, id))
}

// ListEvents implements app.Store.
func (s *Store) ListEvents(ctx context.Context, f webhooks.EventFilter, p webhooks.Page) (*webhooks.List[*webhooks.Event], error) {
	q := listQuery{table: "events", cols: eventCols, conds: []string{"NOT test"}}
	if f.CompanyID != "" {
		q.whereID("company_id", f.CompanyID)
	} else {
		// The account's log leaves out the operational events about its
		// endpoints: they are the platform's (the index says so too).
		q.whereID("account_id", f.AccountID)
		q.conds = append(q.conds, "NOT operational")
	}
	if f.Type != "" {
		q.where("type = $%d", f.Type)
	}
	if !f.CreatedGTE.IsZero() {
		q.where("created >= $%d", ts(f.CreatedGTE))
	}
	if !f.CreatedLT.IsZero() {
		q.where("created < $%d", ts(f.CreatedLT))
	}
	return read(list(ctx, s.pool, q, p, scanEvent))
}

// registerGroup registers the events of group in one transaction of two
// round trips, whatever their number: one pipelined batch opens the
// transaction and reads, for each event, its Idempotency-Key, its company
// and account, the locks and the candidate endpoints; the other writes
// every event, key and delivery, one statement each, and commits.
//
// A registration the domain refuses (an unknown company, a reused key) gets
// its error in r.err and writes nothing; the others go on. An error of the
// database fails the whole group and is returned: the caller then
// registers each alone, so that one bad registration cannot fail others.
func (s *Store) registerGroup(ctx context.Context, group []*registration) error {
	return s.pipelined(ctx, func(conn *pgx.Conn) error { return s.registerGroupOn(ctx, conn, group, true) })
}

// registerGroupOn is registerGroup on conn, with the routes the cache
// holds if cache.
func (s *Store) registerGroupOn(ctx context.Context, conn *pgx.Conn, group []*registration, cache bool) error {
	// The routes the cache holds are trusted once their owners are locked
	// and routing_version, read after the locks, is still the one they
	// were read at; the others are read after the version, so that what
	// they read is at least as new as the version they are cached at.
	var b pgx.Batch
	b.Queue(`BEGIN`)
	b.Queue(qRegistrationStart, lockCatalog)
	repeated := make([]func() (bool, error), len(group))
	repeats := make([]string, len(group)) // the first event's id, for a repeated key
	for i, r := range group {
		repeated[i] = queueKey(&b, r.key, &repeats[i])
	}
	routes := make([]*route, len(group))
	var cachedAt int64
	if cache {
		cachedAt = s.routes.get(group, routes)
	}
	var owners []string
	for i, r := range group {
		if routes[i] != nil {
			owners = append(owners, routes[i].owners(r.ev)...)
		}
	}
	cached := slices.ContainsFunc(routes, func(rt *route) bool { return rt != nil })
	if cached {
		queueOwnerLocks(&b, owners)
	}
	var version, catalog int64
	b.Queue(qVersions).QueryRow(func(row pgx.Row) error { return row.Scan(&version, &catalog) })
	// Registrations of one key share what one of them reads (a route is
	// never changed once read): a cold group of one company's events
	// would otherwise read its route once per event.
	read := map[routeKey]*route{}
	for i, r := range group {
		if routes[i] != nil {
			continue
		}
		k := routeKeyOf(r.ev)
		if routes[i] = read[k]; routes[i] == nil {
			routes[i] = &route{}
			queueRoute(&b, r.ev, routes[i])
			read[k] = routes[i]
		}
	}
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return err
	}
	if cached && version != cachedAt {
		// Routing changed since: read every route again.
		if _, err := conn.Exec(ctx, `ROLLBACK`); err != nil {
			return err
		}
		s.routes.reset()
		return s.registerGroupOn(ctx, conn, group, false)
	}
	s.routes.put(version, read)
	var registered []*registration
	var deliveries []*webhooks.Delivery
	var firsts []string
	endpoints := map[string]*webhooks.Endpoint{}
	for i, r := range group {
		if r.checked && r.catalog != catalog {
			// Checked against a catalog that has changed since: it
			// writes nothing, and the use case checks it again.
			r.err = app.ErrCatalogChanged
			continue
		}
		repeat, err := repeated[i]()
		var c webhooks.Candidates
		if err == nil && !repeat {
			c, err = routes[i].candidates(r.ev)
		}
		switch {
		case err != nil:
			r.err = err
		case repeat:
			firsts = append(firsts, repeats[i])
		default:
			if r.deliveries, r.err = webhooks.Route(r.ev, c, r.ev.Created); r.err == nil {
				registered = append(registered, r)
				deliveries = append(deliveries, r.deliveries...)
				for _, e := range c.All() {
					endpoints[e.ID] = e
				}
			}
		}
	}
	o := s.offer(deliveries, func(id string) *webhooks.Endpoint { return endpoints[id] })
	for _, r := range registered {
		if r.ev.Traceparent == "" {
			continue
		}
		for _, d := range r.deliveries {
			if c := o.claims[d.ID]; c != nil {
				c.Traceparent = r.ev.Traceparent
			}
		}
	}
	// Queued statements run in order: the events first, since the keys
	// and the deliveries refer to them.
	b = pgx.Batch{}
	first := map[string]*webhooks.Event{}
	if len(firsts) > 0 {
		b.Queue(`SELECT `+eventCols+` FROM events WHERE id = ANY ($1::uuid[])`, uuids(firsts)).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				e, err := scanEvent(rows)
				if err != nil {
					return err
				}
				first[e.ID] = e
			}
			return rows.Err()
		})
	}
	evs, keys := make([]*webhooks.Event, len(registered)), make([]*webhooks.IdempotencyKey, len(registered))
	for i, r := range registered {
		evs[i], keys[i] = r.ev, r.key
	}
	queueEvents(&b, evs, keys)
	inserted := queueDeliveries(&b, deliveries, o)
	b.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		o.settle(nil)
		return err
	}
	ins, leased := inserted()
	o.settle(leased)
	kept := map[string]bool{}
	for _, d := range ins {
		kept[d.ID] = true
	}
	pending := false
	for i, r := range group {
		if repeats[i] != "" && r.err == nil {
			if r.first = first[repeats[i]]; r.first == nil {
				r.err = notFound("event")
			}
			continue
		}
		r.deliveries = slices.DeleteFunc(r.deliveries, func(d *webhooks.Delivery) bool { return !kept[d.ID] })
		pending = pending || slices.ContainsFunc(r.deliveries, func(d *webhooks.Delivery) bool {
			return d.Status == webhooks.DeliveryPending && !leased[d.ID]
		})
	}
	if pending {
		if s.engine != nil {
			s.engine.Wake()
		}
		s.notifyCommitted()
	}
	return nil
}

// queueEvents queues in b the statements that insert evs and their
// Idempotency-Keys (keys[i] is evs[i]'s, or nil; keys may be nil).
func queueEvents(b *pgx.Batch, evs []*webhooks.Event, keys []*webhooks.IdempotencyKey) {
	if len(evs) == 0 {
		return
	}
	n := len(evs)
	var (
		ids, types, versions, accounts, objects = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		corrs, companies                        = make([]*string, n), make([]string, n)
		livemode, test, operational             = make([]bool, n), make([]bool, n), make([]bool, n)
		created                                 = make([]*time.Time, n)
		keyNames, keyEvents                     []string
		hashes                                  [][]byte
		keyCreated                              []*time.Time
		traceparents                            []*string // nil: none has one (NULL, padded by unnest)
	)
	for i, ev := range evs {
		if ev.Traceparent != "" {
			if traceparents == nil {
				traceparents = make([]*string, n)
			}
			traceparents[i] = &ev.Traceparent
		}
		ids[i], types[i], versions[i], accounts[i], objects[i] = ev.ID, ev.Type, ev.APIVersion, ev.AccountID, string(ev.Object)
		corrs[i], companies[i] = textPtr(ev.CorrelationID), ev.CompanyID
		livemode[i], test[i], created[i] = ev.Livemode, ev.Test, timePtr(ev.Created)
		operational[i] = ev.IsOperational()
		if i < len(keys) && keys[i] != nil {
			k := keys[i]
			keyNames, hashes = append(keyNames, k.Key), append(hashes, k.RequestHash)
			keyEvents, keyCreated = append(keyEvents, ev.ID), append(keyCreated, timePtr(k.Created))
		}
	}
	b.Queue(`INSERT INTO events (`+eventCols+`, operational, traceparent)
		SELECT id, type, api_version, livemode, test, correlation_id, account_id, company_id, object::json, created, operational, traceparent
		FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bool[], $5::bool[], $6::text[], $7::uuid[], $8::uuid[], $9::text[], $10::timestamptz[], $11::bool[], $12::text[])
			AS t(id, type, api_version, livemode, test, correlation_id, account_id, company_id, object, created, operational, traceparent)`,
		uuids(ids), types, versions, livemode, test, corrs, uuids(accounts), uuids(companies), objects, created, operational, traceparents)
	if len(keyNames) > 0 {
		// An expired key is forgotten: the new event takes it over.
		b.Queue(`INSERT INTO idempotency_keys (key, request_hash, event_id, created)
			SELECT * FROM unnest($1::text[], $2::bytea[], $3::uuid[], $4::timestamptz[])
			ON CONFLICT (key) DO UPDATE SET request_hash = excluded.request_hash, event_id = excluded.event_id, created = excluded.created`,
			keyNames, hashes, uuids(keyEvents), keyCreated)
	}
}

// queueKey queues in b the reads of ev's Idempotency-Key, if it has one.
// Once b is sent, the returned function tells whether the key repeats a
// recent request, and sets *firstID to the first event's id if it does.
func queueKey(b *pgx.Batch, key *webhooks.IdempotencyKey, firstID *string) func() (bool, error) {
	if key == nil {
		return func() (bool, error) { return false, nil }
	}
	var hash []byte
	var keyEvent string
	var keyCreated pgtype.Timestamptz
	keyFound := false
	// Producers retry: two requests with one new key may arrive at once.
	// The lock makes the second wait for the first to commit and then find
	// its key, instead of registering a second event.
	b.Queue(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockIdempotency, key.Key)
	b.Queue(`SELECT request_hash, event_id, created FROM idempotency_keys WHERE key = $1`, key.Key).
		QueryRow(func(row pgx.Row) error {
			err := row.Scan(&hash, &keyEvent, &keyCreated)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			keyFound = err == nil
			return err
		})
	return func() (bool, error) {
		if !keyFound {
			return false, nil
		}
		repeat, err := key.Repeats(&webhooks.IdempotencyKey{Key: key.Key, RequestHash: hash, Created: fromTS(keyCreated)})
		if repeat {
			*firstID = keyEvent
		}
		return repeat, err
	}
}

// qPlatformEndpoints reads the endpoints an operational event may reach.
const qPlatformEndpoints = `SELECT ` + endpointCols + ` FROM endpoints
	WHERE scope = 'platform' AND deleted IS NULL ORDER BY created, id`

// routesOf is the routes key, besides its accounts', that registering ev
// locks shared (see txn.LockRoutes): its company's, or the platform's for
// an operational event.
func routesOf(ev *webhooks.Event) any {
	if ev.IsOperational() {
		return webhooks.PlatformRoutes
	}
	return companyEndpointsOf(ev)
}

// companyEndpointsOf is the company whose endpoints ev may reach: its
// company, unless it is an account.* event (NULL then).
func companyEndpointsOf(ev *webhooks.Event) any {
	if ev.CompanyID == "" || ev.IsAccountEvent() {
		return nil
	}
	return ev.CompanyID
}

// optionalID is id, or NULL when it is empty or not an id (which then
// matches nothing, as an unknown id does).
func optionalID(id string) any {
	if id == "" || !webhooks.ValidID(id) {
		return nil
	}
	return id
}

// InsertEvent implements app.Tx.
func (t *txn) InsertEvent(ctx context.Context, ev *webhooks.Event) error {
	var b pgx.Batch
	queueEvents(&b, []*webhooks.Event{ev}, nil)
	return t.SendBatch(ctx, &b).Close()
}

// FindEvent implements app.Tx.
func (t *txn) FindEvent(ctx context.Context, id string) (*webhooks.Event, error) {
	return findEvent(ctx, t, id)
}
