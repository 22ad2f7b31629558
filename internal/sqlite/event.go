package sqlite

import (
	"context"
	"database/sql"
	"errors"

	webhooks "github.com/factuarea/webhooks"
)

const eventCols = `id, type, api_version, livemode, test, correlation_id, account_id, company_id, object, created, ordering_key`

// eventReadCols are the columns scanEvent reads, of the events table as
// e: eventCols and the event's erased_at, which is its own or, while an
// erasure of its company or account is under way (the table holds a few
// rows at most), the erasure's (driver.Store.FindEvent).
const eventReadCols = `e.id, e.type, e.api_version, e.livemode, e.test, e.correlation_id, e.account_id, e.company_id, e.object, e.created, e.ordering_key,
	coalesce(e.erased, CASE WHEN e.test = 0 AND e.operational = 0 THEN
		(SELECT min(x.created) FROM erasures x WHERE x.company_id = e.company_id OR x.account_id = e.account_id) END)`

func scanEvent(r scanner) (*webhooks.Event, error) {
	var e webhooks.Event
	var livemode, test int
	var corr, orderingKey sql.NullString
	var object string
	var created, erased sql.NullInt64
	if err := r.Scan((*dbID)(&e.ID), &e.Type, &e.APIVersion, &livemode, &test, &corr, (*dbID)(&e.AccountID), (*dbID)(&e.CompanyID),
		&object, &created, &orderingKey, &erased); err != nil {
		return nil, err
	}
	e.OrderingKey = orderingKey.String
	e.Livemode, e.Test, e.CorrelationID = livemode == 1, test == 1, corr.String
	e.Object, e.Created, e.ErasedAt = []byte(object), fromMS(created), fromMS(erased)
	if e.Erased() {
		e.Object = nil
	}
	return &e, nil
}

func findEvent(ctx context.Context, q querier, id string) (*webhooks.Event, error) {
	e, err := scanEvent(q.QueryRowContext(ctx, `SELECT `+eventReadCols+` FROM events e WHERE id = ?`, dbID(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("event")
	}
	return e, err
}

// FindEvent implements driver.Store.
func (s *Store) FindEvent(ctx context.Context, id string) (*webhooks.Event, error) {
	return read(findEvent(ctx, s.read, id))
}

// ListEvents implements driver.Store.
func (s *Store) ListEvents(ctx context.Context, f webhooks.EventFilter, p webhooks.Page) (*webhooks.List[*webhooks.Event], error) {
	return read(list(ctx, s.read, eventList(f), p, scanEvent))
}

// eventList is the list of events that f selects.
func eventList(f webhooks.EventFilter) listQuery {
	q := listQuery{table: "events e", cols: eventReadCols, where: []string{"test = 0"}, byRowid: true}
	if f.CompanyID != "" {
		q.where, q.args = append(q.where, "company_id = ?"), append(q.args, dbID(f.CompanyID))
	} else {
		// The account's log leaves out the operational events about its
		// endpoints: they are the platform's (the index says so too).
		q.where, q.args = append(q.where, "account_id = ?", "operational = 0"), append(q.args, dbID(f.AccountID))
	}
	if f.Type != "" {
		q.where, q.args = append(q.where, "type = ?"), append(q.args, f.Type)
		// Given a window of created as well (and a cursor), the planner
		// takes the index without the type, and reads every type's events
		// in the window.
		if f.CompanyID != "" {
			q.table = "events e INDEXED BY events_company_type"
		} else {
			q.table = "events e INDEXED BY events_account_type"
		}
	}
	if !f.CreatedGTE.IsZero() {
		q.where, q.args = append(q.where, "created >= ?"), append(q.args, ms(f.CreatedGTE))
	}
	if !f.CreatedLT.IsZero() {
		q.where, q.args = append(q.where, "created < ?"), append(q.args, ms(f.CreatedLT))
	}
	return q
}

// selectLiveEndpoints selects endpoints not deleted; a condition follows.
const selectLiveEndpoints = `SELECT ` + endpointCols + ` FROM endpoints WHERE deleted IS NULL AND `

func queryEndpoints(ctx context.Context, q querier, where string, args ...any) ([]*webhooks.Endpoint, error) {
	return queryAll(ctx, q, scanEndpoint, selectLiveEndpoints+where, args...)
}

func insertEvent(ctx context.Context, tx *txn, ev *webhooks.Event) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO events (`+eventInsertCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, eventArgs(ev)...); err != nil {
		return err
	}
	// A new event has no bodies: its deliveries' need not look for one.
	if tx.bodies == nil {
		tx.bodies = map[string][]storedBody{}
	}
	tx.bodies[ev.ID] = []storedBody{}
	return nil
}

// eventInsertCols are the columns an event is stored with, eventArgs
// their values.
const eventInsertCols = eventCols + `, operational, traceparent`

func eventArgs(ev *webhooks.Event) []any {
	return []any{dbID(ev.ID), ev.Type, ev.APIVersion, boolInt(ev.Livemode), boolInt(ev.Test), nullString(ev.CorrelationID),
		nullID(ev.AccountID), nullID(ev.CompanyID), string(ev.Object), ms(ev.Created), nullString(ev.OrderingKey),
		boolInt(ev.IsOperational()), nullString(ev.Traceparent)}
}

// InsertEvent implements driver.Tx.
func (t *txn) InsertEvent(ctx context.Context, ev *webhooks.Event) error {
	return insertEvent(ctx, t, ev)
}

// FindEvent implements driver.Tx.
func (t *txn) FindEvent(ctx context.Context, id string) (*webhooks.Event, error) {
	return findEvent(ctx, t, id)
}
