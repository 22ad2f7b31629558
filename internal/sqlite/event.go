package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

const eventCols = `id, type, api_version, livemode, test, correlation_id, account_id, company_id, object, created`

func scanEvent(r scanner) (*webhooks.Event, error) {
	var e webhooks.Event
	var livemode, test int
	var corr, account, company sql.NullString
	var object string
	var created sql.NullInt64
	if err := r.Scan(&e.ID, &e.Type, &e.APIVersion, &livemode, &test, &corr, &account, &company, &object, &created); err != nil {
		return nil, err
	}
	e.Livemode, e.Test, e.CorrelationID, e.CompanyID = livemode == 1, test == 1, corr.String, company.String
	e.AccountID = account.String
	e.Object, e.Created = []byte(object), fromMS(created)
	return &e, nil
}

func findEvent(ctx context.Context, q querier, id string) (*webhooks.Event, error) {
	e, err := scanEvent(q.QueryRowContext(ctx, `SELECT `+eventCols+` FROM events WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("event")
	}
	return e, err
}

// FindEvent implements app.Store.
func (s *Store) FindEvent(ctx context.Context, id string) (*webhooks.Event, error) {
	return read(findEvent(ctx, s.read, id))
}

// ListEvents implements app.Store.
func (s *Store) ListEvents(ctx context.Context, f webhooks.EventFilter, p webhooks.Page) (*webhooks.List[*webhooks.Event], error) {
	q := listQuery{table: "events", cols: eventCols, where: []string{"test = 0"}}
	if f.CompanyID != "" {
		q.where, q.args = append(q.where, "company_id = ?"), append(q.args, f.CompanyID)
	} else {
		// The account's log leaves out the operational events about its
		// endpoints: they are the platform's (the index says so too).
		q.where, q.args = append(q.where, "account_id = ?", "operational = 0"), append(q.args, f.AccountID)
	}
	if f.Type != "" {
		q.where, q.args = append(q.where, "type = ?"), append(q.args, f.Type)
	}
	if !f.CreatedGTE.IsZero() {
		q.where, q.args = append(q.where, "created >= ?"), append(q.args, ms(f.CreatedGTE))
	}
	if !f.CreatedLT.IsZero() {
		q.where, q.args = append(q.where, "created < ?"), append(q.args, ms(f.CreatedLT))
	}
	return read(list(ctx, s.read, q, p, scanEvent))
}

// RegisterEvent implements app.Store. Registrations are committed in
// groups: each durable commit waits for the disk, so concurrent
// registrations share one commit (group commit).
func (s *Store) RegisterEvent(ctx context.Context, ev *webhooks.Event, key *webhooks.IdempotencyKey) (*webhooks.Event, []*webhooks.Delivery, bool, error) {
	r := &registration{ctx: ctx, ev: ev, key: key}
	r.catalog, r.checked = app.CatalogVersion(ctx)
	if err := s.registrations.Do(ctx, r); err != nil {
		return nil, nil, false, err
	}
	if r.err != nil {
		return nil, nil, false, r.err
	}
	if r.first != nil {
		return r.first, nil, false, nil
	}
	return ev, r.deliveries, true, nil
}

// registration is one RegisterEvent waiting for its group's commit.
type registration struct {
	ctx context.Context // the caller's: if it ends before the group begins, the registration is left out
	ev  *webhooks.Event
	key *webhooks.IdempotencyKey
	// catalog is the version of the catalog ev was checked against, if
	// checked: the group's transaction refuses it if the catalog has
	// another (app.ErrCatalogChanged).
	catalog int64
	checked bool

	first      *webhooks.Event // the earlier event of a repeated key
	deliveries []*webhooks.Delivery
	err        error
}

// maxGroup bounds a group commit, so one transaction stays short.
const maxGroup = 128

// maxPacing bounds how long a group waits for the engine (see
// commitGroup): an engine held up by slow endpoints paces registration no
// slower than a group per maxPacing.
const maxPacing = 20 * time.Millisecond

// errRefused rolls back a group that one registration of it failed, to
// redo it with savepoints (see commitGroup).
var errRefused = errors.New("sqlite: a registration of the group was refused")

// commitGroup registers group in one transaction.
//
// A refused registration (an unknown company, a reused key) must not undo
// the others, but a savepoint per registration cost a third of the
// registration's time (SQLite's sub-journal writes each page a savepoint
// changes), for refusals that are rare. So the group first runs without
// them; if one registration is refused, the transaction is rolled back and
// the group runs again with a savepoint each, which keeps the others.
//
// The group's statements run with a context of the group's, not the
// callers': a caller that gives up while its registration is being written
// would interrupt SQLite, which then rolls back the whole transaction and
// fails every other registration of the group. (Its registration may then
// commit without its caller being told, as Committer.Do says.)
func (s *Store) commitGroup(group []*registration) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if s.engine != nil {
		// The one write connection serves the registrations and the
		// engine's records: a group makes way for records waiting to be
		// stored (they free the slots its deliveries need), and when the
		// last group found the engine full, waits for it to make progress,
		// so that registration cannot outrun delivery into a backlog. The
		// producers see it as slower answers.
		s.engine.Pace(ctx, s.behind, maxPacing)
	}
	err := s.registerGroup(ctx, group, false)
	if errors.Is(err, errRefused) {
		err = s.registerGroup(ctx, group, true)
	}
	for _, r := range group {
		if err != nil && r.err == nil {
			r.err = err
		}
	}
}

// registerGroup registers group in one transaction; with savepoints, each
// registration in its own. Without them it returns errRefused as soon as
// one is refused.
func (s *Store) registerGroup(ctx context.Context, group []*registration, savepoints bool) error {
	err := s.inTx(ctx, func(tx *txn) error {
		// One read of the catalog's version per group, with routing's,
		// in its transaction: a change of the catalog commits before it
		// or after the whole group.
		catalog, err := s.routes.sync(ctx, tx)
		if err != nil {
			return err
		}
		for _, r := range group {
			r.first, r.deliveries = nil, nil
			if r.err = r.ctx.Err(); r.err != nil {
				continue
			}
			if r.checked && r.catalog != catalog {
				// Refused before it writes anything: no savepoint needed.
				r.err = app.ErrCatalogChanged
				continue
			}
			if !savepoints {
				if r.first, r.deliveries, r.err = s.registerEvent(ctx, tx, r.ev, r.key); r.err != nil {
					return errRefused
				}
				continue
			}
			if _, err := tx.ExecContext(ctx, `SAVEPOINT registration`); err != nil {
				return err
			}
			leased := len(s.group.claims)
			r.first, r.deliveries, r.err = s.registerEvent(ctx, tx, r.ev, r.key)
			if r.err != nil {
				if _, err := tx.ExecContext(ctx, `ROLLBACK TO registration`); err != nil {
					return err
				}
				s.group.unlease(s.engine, leased)
			}
			if _, err := tx.ExecContext(ctx, `RELEASE registration`); err != nil {
				return err
			}
		}
		return nil
	})
	s.settle(err == nil)
	return err
}

// registerEvent registers one event in tx (see RegisterEvent). It returns
// the first event when key repeats a recent request.
func (s *Store) registerEvent(ctx context.Context, tx *txn, ev *webhooks.Event, key *webhooks.IdempotencyKey) (*webhooks.Event, []*webhooks.Delivery, error) {
	if key != nil {
		stored := &webhooks.IdempotencyKey{Key: key.Key}
		var eventID string
		var created int64
		err := tx.QueryRowContext(ctx, `SELECT request_hash, event_id, created FROM idempotency_keys WHERE key = ?`, key.Key).
			Scan(&stored.RequestHash, &eventID, &created)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, nil, err
		default:
			stored.Created = time.UnixMilli(created)
			repeat, err := key.Repeats(stored)
			if err != nil {
				return nil, nil, err
			}
			if repeat {
				first, err := findEvent(ctx, tx, eventID)
				return first, nil, err
			}
			// Expired: the new event takes the key over.
			if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE key = ?`, key.Key); err != nil {
				return nil, nil, err
			}
		}
	}
	c, err := s.routes.candidates(ctx, tx, ev)
	if err != nil {
		return nil, nil, err
	}
	deliveries, err := webhooks.Route(ev, c, ev.Created)
	if err != nil {
		return nil, nil, err
	}
	if err := insertEvent(ctx, tx, ev); err != nil {
		return nil, nil, err
	}
	leased := len(s.group.claims)
	if deliveries, err = s.insertDeliveries(ctx, tx, deliveries, endpointsOf(c)); err != nil {
		return nil, nil, err
	}
	if ev.Traceparent != "" {
		for _, c := range s.group.claims[leased:] {
			c.Traceparent = ev.Traceparent
		}
	}
	if key != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (key, request_hash, event_id, created) VALUES (?, ?, ?, ?)`,
			key.Key, key.RequestHash, ev.ID, ms(key.Created)); err != nil {
			return nil, nil, err
		}
	}
	return nil, deliveries, nil
}

// selectLiveEndpoints selects endpoints not deleted; a condition follows.
const selectLiveEndpoints = `SELECT ` + endpointCols + ` FROM endpoints WHERE deleted IS NULL AND `

func queryEndpoints(ctx context.Context, q querier, where string, args ...any) ([]*webhooks.Endpoint, error) {
	return queryAll(ctx, q, scanEndpoint, selectLiveEndpoints+where, args...)
}

func insertEvent(ctx context.Context, tx *txn, ev *webhooks.Event) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO events (`+eventCols+`, operational, traceparent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ev.ID, ev.Type, ev.APIVersion, boolInt(ev.Livemode), boolInt(ev.Test), nullString(ev.CorrelationID),
		nullString(ev.AccountID), nullString(ev.CompanyID), string(ev.Object), ms(ev.Created), boolInt(ev.IsOperational()),
		nullString(ev.Traceparent))
	return err
}

// InsertEvent implements app.Tx.
func (t *txn) InsertEvent(ctx context.Context, ev *webhooks.Event) error {
	return insertEvent(ctx, t, ev)
}

// FindEvent implements app.Tx.
func (t *txn) FindEvent(ctx context.Context, id string) (*webhooks.Event, error) {
	return findEvent(ctx, t, id)
}
