package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
)

const eventCols = `id, type, api_version, livemode, test, correlation_id, account_id, company_id, object, created, ordering_key`

// eventReadCols are the columns scanEvent reads, of the events table as
// e: eventCols and the event's erased_at, which is its own or, while an
// erasure of its company or account is under way (the table holds a few
// rows at most), the erasure's (driver.Store.FindEvent).
const eventReadCols = `e.id, e.type, e.api_version, e.livemode, e.test, e.correlation_id, e.account_id, e.company_id, e.object, e.created, e.ordering_key,
	coalesce(e.erased, CASE WHEN NOT e.test AND NOT e.operational THEN
		(SELECT min(x.created) FROM erasures x WHERE x.company_id = e.company_id OR x.account_id = e.account_id) END)`

func scanEvent(r scanner) (*webhooks.Event, error) {
	var e webhooks.Event
	var corr, account, company, orderingKey pgtype.Text
	var object []byte
	var created, erased pgtype.Timestamptz
	if err := r.Scan(&e.ID, &e.Type, &e.APIVersion, &e.Livemode, &e.Test, &corr, &account, &company, &object, &created, &orderingKey, &erased); err != nil {
		return nil, err
	}
	e.OrderingKey = orderingKey.String
	e.CorrelationID, e.CompanyID, e.AccountID = corr.String, company.String, account.String
	e.Object, e.Created, e.ErasedAt = object, fromTS(created), fromTS(erased)
	if e.Erased() {
		e.Object = nil
	}
	return &e, nil
}

func findEvent(ctx context.Context, q querier, id string) (*webhooks.Event, error) {
	if !webhooks.ValidID(id) {
		return nil, notFound("event")
	}
	e, err := scanEvent(q.QueryRow(ctx, `SELECT `+eventReadCols+` FROM events e WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("event")
	}
	return e, err
}

// FindEvent implements driver.Store.
func (s *Store) FindEvent(ctx context.Context, id string) (*webhooks.Event, error) {
	return read(findEvent(ctx, s.pool, id))
}

// ListEvents implements driver.Store.
func (s *Store) ListEvents(ctx context.Context, f webhooks.EventFilter, p webhooks.Page) (*webhooks.List[*webhooks.Event], error) {
	q := listQuery{table: "events e", cols: eventReadCols, conds: []string{"NOT test"}}
	scope, id := "company_id", f.CompanyID
	if f.CompanyID == "" {
		// The account's log leaves out the operational events about its
		// endpoints: they are the platform's (the index says so too).
		scope, id = "account_id", f.AccountID
		q.conds = append(q.conds, "NOT operational")
	}
	q.whereID(scope, id)
	if !q.none {
		q.where(qIDKey(scope, "$%d"), id)
	}
	if f.Type != "" {
		q.where("type = $%d", f.Type)
		q.where(qTextKey("type", "$%d"), f.Type)
	}
	if !f.CreatedGTE.IsZero() {
		q.where("created >= $%d", ts(f.CreatedGTE))
	}
	if !f.CreatedLT.IsZero() {
		q.where("created < $%d", ts(f.CreatedLT))
	}
	return read(list(ctx, s.pool, q, p, scanEvent))
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
		orderingKeys                            []*string // nil: none has one
	)
	for i, ev := range evs {
		if ev.Traceparent != "" {
			if traceparents == nil {
				traceparents = make([]*string, n)
			}
			traceparents[i] = &ev.Traceparent
		}
		if ev.OrderingKey != "" {
			if orderingKeys == nil {
				orderingKeys = make([]*string, n)
			}
			orderingKeys[i] = &ev.OrderingKey
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
		SELECT id, type, api_version, livemode, test, correlation_id, account_id, company_id, object::json, created, ordering_key, operational, traceparent
		FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bool[], $5::bool[], $6::text[], $7::uuid[], $8::uuid[], $9::text[], $10::timestamptz[], $11::bool[], $12::text[], $13::text[])
			AS t(id, type, api_version, livemode, test, correlation_id, account_id, company_id, object, created, operational, traceparent, ordering_key)`,
		uuids(ids), types, versions, livemode, test, corrs, uuids(accounts), uuids(companies), objects, created, operational, traceparents, orderingKeys)
	if len(keyNames) > 0 {
		// An expired key is forgotten: the new event takes it over.
		b.Queue(`INSERT INTO idempotency_keys (key, request_hash, event_id, created)
			SELECT * FROM unnest($1::text[], $2::bytea[], $3::uuid[], $4::timestamptz[])
			ON CONFLICT (key) DO UPDATE SET request_hash = excluded.request_hash, event_id = excluded.event_id, created = excluded.created`,
			keyNames, hashes, uuids(keyEvents), keyCreated)
	}
}

// optionalID is id, or NULL when it is empty or not an id (which then
// matches nothing, as an unknown id does).
func optionalID(id string) any {
	if id == "" || !webhooks.ValidID(id) {
		return nil
	}
	return id
}

// InsertEvent implements driver.Tx.
func (t *txn) InsertEvent(ctx context.Context, ev *webhooks.Event) error {
	var b pgx.Batch
	queueEvents(&b, []*webhooks.Event{ev}, nil)
	return t.SendBatch(ctx, &b).Close()
}

// FindEvent implements driver.Tx.
func (t *txn) FindEvent(ctx context.Context, id string) (*webhooks.Event, error) {
	return findEvent(ctx, t, id)
}
