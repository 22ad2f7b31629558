package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/bodycodec"
	"github.com/factuarea/webhooks/internal/driver"
)

var deliveryCols = deliveryColsOf("deliveries")

// deliveryColsOf are a delivery's columns of the table as alias, its body
// read from the event's bodies (see queueDeliveries); an erased one's is
// empty.
func deliveryColsOf(alias string) string {
	return prefixed(alias, `id, endpoint_id, event_id, event_type, relationship, replay_of, status, reason, attempt_count,
	next_attempt_at, last_response_status, manual`) +
		`, coalesce((SELECT b.body FROM bodies b WHERE b.event_id = ` + alias + `.event_id AND b.n = ` + alias + `.body_n), ''::bytea), ` +
		prefixed(alias, `created, schedule_factor, rehearsal, ordering_key, waiting_for`)
}

// bodiesCTE stores the distinct bodies of a batch of deliveries ($22
// their events, $23 their stored bytes (bodycodec), $24 a replay's bytes
// as they are, which a body stored before bodycodec equals; the k-th is
// the deliveries' body_k) and
// numbers them in "numbered": an event's body with the same bytes keeps
// its number (a replay's, or a batch's second endpoint of one rendering),
// another gets the event's next. A body row is never changed: every
// attempt of a delivery sends the bytes it was created with (SPEC 4).
const bodiesCTE = `given AS (
			SELECT g.event_id, g.body, g.k,
				(SELECT min(b.n) FROM bodies b WHERE b.event_id = g.event_id AND (b.body = g.body OR b.body = g.raw)) AS n,
				(SELECT coalesce(max(b.n), 0) FROM bodies b WHERE b.event_id = g.event_id) AS top
			FROM unnest($21::uuid[], $22::bytea[], $23::bytea[]) WITH ORDINALITY AS g(event_id, body, raw, k)
		), numbered AS (
			SELECT k, event_id, body, n IS NULL AS new,
				coalesce(n, top + row_number() OVER (PARTITION BY event_id, n IS NULL ORDER BY k))::smallint AS n
			FROM given
		), stored AS (
			INSERT INTO bodies (event_id, n, body) SELECT event_id, n, body FROM numbered WHERE new
		)`

// deliveryInsertCols are the columns a delivery is stored with.
const deliveryInsertCols = `id, endpoint_id, event_id, event_type, relationship, replay_of, status, reason, attempt_count,
	next_attempt_at, last_response_status, manual, body_n, created, schedule_factor, rehearsal, ordering_key, waiting_for`

// qPendingDeliveries are the pending deliveries, as a table with the
// deliveries' columns (a query on it names them as on deliveries): read
// through the queue, which holds a row for each (and for a delivery that
// ended during an attempt whose claim still records, which the status
// leaves out). Its created and id are the queue row's, which are the
// delivery's, so that its index queue_endpoint serves "endpoint_id = $1
// ORDER BY created DESC, id DESC". No index of deliveries holds the
// status (migration 0018): a record that changes it is a HOT update.
const qPendingDeliveries = `(SELECT q.delivery_id AS id, q.endpoint_id, d.event_id, d.event_type, d.relationship, d.replay_of,
	d.status, d.reason, d.attempt_count, d.next_attempt_at, d.last_response_status, d.manual, d.body_n, q.created,
	d.schedule_factor, d.rehearsal, d.ordering_key, d.waiting_for
	FROM queue q JOIN deliveries d ON d.id = q.delivery_id WHERE d.status = 'pending') deliveries`

// failedOnly reports whether every status of statuses is a failed one,
// which the failed_status column holds (and the index deliveries_failed).
func failedOnly(statuses []string) bool {
	for _, st := range statuses {
		if st != webhooks.DeliveryFailed && st != webhooks.DeliveryFailedPermanently {
			return false
		}
	}
	return true
}

// deliveryColsNoBody are deliveryCols with an empty body, for lists that
// show deliveries' states, not what they send.
const deliveryColsNoBody = `id, endpoint_id, event_id, event_type, relationship, replay_of, status, reason, attempt_count,
	next_attempt_at, last_response_status, manual, NULL::bytea, created, schedule_factor, rehearsal, ordering_key, waiting_for`

// deliveryScan holds a delivery's columns as scanned, for rows that carry
// other columns too.
type deliveryScan struct {
	d                     webhooks.Delivery
	rel, replayOf, reason pgtype.Text
	orderingKey, waiting  pgtype.Text
	next, created         pgtype.Timestamptz
	lastStatus            pgtype.Int4
}

func (s *deliveryScan) dest() []any {
	d := &s.d
	return []any{&d.ID, &d.EndpointID, &d.EventID, &d.EventType, &s.rel, &s.replayOf, &d.Status, &s.reason, &d.AttemptCount,
		&s.next, &s.lastStatus, &d.Manual, (*bodycodec.Column)(&d.Body), &s.created, &d.ScheduleFactor, &d.Rehearsal, &s.orderingKey, &s.waiting}
}

func (s *deliveryScan) delivery() *webhooks.Delivery {
	d := s.d
	d.Relationship, d.ReplayOf, d.Reason = webhooks.Relationship(s.rel.String), s.replayOf.String, s.reason.String
	d.NextAttemptAt, d.LastResponseStatus = fromTS(s.next), int(s.lastStatus.Int32)
	d.Created = fromTS(s.created)
	d.OrderingKey, d.WaitingFor = s.orderingKey.String, s.waiting.String
	return &d
}

func scanDelivery(r scanner) (*webhooks.Delivery, error) {
	var s deliveryScan
	if err := r.Scan(s.dest()...); err != nil {
		return nil, err
	}
	return s.delivery(), nil
}

// insertDeliveries inserts ds in one statement and returns those inserted:
// an original delivery that already exists for its endpoint and event is
// skipped, by the unique index, not by a check in memory.
func insertDeliveries(ctx context.Context, tx pgx.Tx, ds []*webhooks.Delivery) ([]*webhooks.Delivery, error) {
	var b pgx.Batch
	inserted := queueDeliveries(&b, ds, nil)
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return nil, err
	}
	ins := inserted()
	return slices.DeleteFunc(slices.Clone(ds), func(d *webhooks.Delivery) bool { return !ins[d.ID] }), nil
}

// queueDeliveries queues insertDeliveries' statement in b; the function it
// returns, called once b has run, returns the ids of the deliveries
// inserted. The pending ones leases holds are inserted claimed with their
// lease.
//
// A pending delivery enters the work queue with its row, with its created
// and ordering key (see qPendingDeliveries and queueTails). It does not join
// its endpoint's queue of parked deliveries at once: probing the queue's
// partial index, full of dead entries under the queue's churn until a
// vacuum, cost more than the claim that parks it later.
func queueDeliveries(b *pgx.Batch, ds []*webhooks.Delivery, leases map[string]driver.Lease) func() map[string]bool {
	inserted := map[string]bool{}
	if len(ds) == 0 {
		return func() map[string]bool { return inserted }
	}
	n := len(ds)
	var (
		ids, endpoints, events, types, statuses = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		rels, reasons, tokens, orderingKeys     = make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
		waiting                                 = make([]string, n)
		replayOf                                = make([]string, n)
		counts, lastStatus                      = make([]int32, n), make([]*int32, n)
		next, created, until                    = make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
		manual, rehearsal                       = make([]bool, n), make([]bool, n)
		bodyOf                                  = make([]*int32, n)
		factors                                 = make([]int32, n)
	)
	// The batch's distinct bodies, per event: deliveries that send the
	// same bytes share one (see bodiesCTE).
	type bodyKey struct{ event, body string }
	distinct := map[bodyKey]int32{}
	var bodyEvents []string
	var bodies, raws [][]byte
	for i, d := range ds {
		ids[i], endpoints[i], events[i], types[i], statuses[i] = d.ID, d.EndpointID, d.EventID, d.EventType, d.Status
		rels[i], replayOf[i], reasons[i] = textPtr(string(d.Relationship)), d.ReplayOf, textPtr(d.Reason)
		counts[i], lastStatus[i] = int32(d.AttemptCount), int4Ptr(d.LastResponseStatus)
		next[i], created[i] = timePtr(d.NextAttemptAt), timePtr(d.Created)
		manual[i], factors[i], rehearsal[i] = d.Manual, int32(max(d.ScheduleFactor, 1)), d.Rehearsal
		orderingKeys[i], waiting[i] = textPtr(d.OrderingKey), d.WaitingFor
		if l, ok := leases[d.ID]; ok {
			tokens[i], until[i] = &l.Token, timePtr(l.Until)
		}
		if len(d.Body) > 0 {
			k := bodyKey{d.EventID, string(d.Body)}
			j, ok := distinct[k]
			if !ok {
				bodyEvents, bodies = append(bodyEvents, d.EventID), append(bodies, bodycodec.Encode(d.Body))
				// A replay may be of a body stored before bodycodec, as
				// its bytes: it reuses that row too.
				var raw []byte
				if d.ReplayOf != "" {
					raw = d.Body
				}
				raws = append(raws, raw)
				j = int32(len(bodies))
				distinct[k] = j
			}
			bodyOf[i] = &j
		}
	}
	b.Queue(`WITH `+bodiesCTE+`, ins AS (
			INSERT INTO deliveries (`+deliveryInsertCols+`)
			SELECT u.id, u.endpoint_id, u.event_id, u.event_type, u.relationship, u.replay_of, u.status, u.reason, u.attempt_count,
				u.next_attempt_at, u.last_response_status, u.manual, (SELECT nb.n FROM numbered nb WHERE nb.k = u.body_k),
				u.created, u.schedule_factor, u.rehearsal, u.ordering_key, u.waiting_for
			FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::uuid[], $7::text[]::delivery_status[], $8::text[],
				$9::int[], $10::timestamptz[], $11::int[], $12::bool[], $13::int[], $14::timestamptz[], $15::int[],
				$18::bool[], $19::text[], $20::uuid[]) AS u(id, endpoint_id, event_id, event_type, relationship, replay_of, status, reason,
				attempt_count, next_attempt_at, last_response_status, manual, body_k, created, schedule_factor, rehearsal,
				ordering_key, waiting_for)
			ON CONFLICT (event_id, endpoint_id, (CASE WHEN replay_of IS NULL THEN true END)) DO NOTHING
			RETURNING id, endpoint_id, status, next_attempt_at, waiting_for, created, ordering_key
		), queued AS (
			INSERT INTO queue (delivery_id, endpoint_id, due, since, lease_token, lease_expires, waiting, created, ordering_key)
			SELECT i.id, i.endpoint_id, i.next_attempt_at, i.next_attempt_at, l.token, l.until, i.waiting_for IS NOT NULL, i.created, i.ordering_key FROM ins i
			JOIN unnest($1::uuid[], $16::text[], $17::timestamptz[]) AS l(id, token, until) ON l.id = i.id
			WHERE i.status = 'pending'
		)
		SELECT id FROM ins`,
		uuids(ids), uuids(endpoints), uuids(events), types, rels, uuids(replayOf), statuses, reasons, counts, next, lastStatus, manual, bodyOf, created,
		factors, tokens, until, rehearsal, orderingKeys, uuids(waiting), uuids(bodyEvents), bodies, raws).
		Query(func(rows pgx.Rows) error {
			var id string
			_, err := pgx.ForEachRow(rows, []any{&id}, func() error {
				inserted[id] = true
				return nil
			})
			return err
		})
	return func() map[string]bool { return inserted }
}

func textPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func int4Ptr(n int) *int32 {
	if n == 0 {
		return nil
	}
	v := int32(n)
	return &v
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.Truncate(time.Millisecond)
	return &t
}

func findDelivery(ctx context.Context, q querier, id, lock string) (*webhooks.Delivery, error) {
	if !webhooks.ValidID(id) {
		return nil, notFound("webhook delivery")
	}
	d, err := scanDelivery(q.QueryRow(ctx, `SELECT `+deliveryCols+` FROM deliveries WHERE id = $1`+lock, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("webhook delivery")
	}
	return d, err
}

// FindDelivery implements driver.Store.
func (s *Store) FindDelivery(ctx context.Context, id string) (*webhooks.Delivery, error) {
	return read(s.findDelivery(ctx, id))
}

func (s *Store) findDelivery(ctx context.Context, id string) (*webhooks.Delivery, error) {
	if !webhooks.ValidID(id) {
		return nil, notFound("webhook delivery")
	}
	// One snapshot for the delivery and its attempts, so that they agree
	// (attempt_count and the attempts listed), in one round trip.
	var d *webhooks.Delivery
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`SELECT `+deliveryCols+` FROM deliveries WHERE id = $1`, id)
		b.Queue(`SELECT number, started_at, duration_ms, response_status, response_body, error, manual
			FROM attempts WHERE delivery_id = $1 ORDER BY number`, id)
		br := tx.SendBatch(ctx, b)
		defer br.Close()
		var err error
		d, err = scanDelivery(br.QueryRow())
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("webhook delivery")
		} else if err != nil {
			return err
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		d.Attempts, err = pgx.AppendRows([]*webhooks.Attempt{}, rows, func(r pgx.CollectableRow) (*webhooks.Attempt, error) {
			a := webhooks.Attempt{DeliveryID: id}
			var started pgtype.Timestamptz
			var durMS int64
			var status pgtype.Int4
			var body []byte
			var errText pgtype.Text
			if err := r.Scan(&a.Number, &started, &durMS, &status, &body, &errText, &a.Manual); err != nil {
				return nil, err
			}
			a.StartedAt, a.Duration, a.ResponseStatus = fromTS(started), time.Duration(durMS)*time.Millisecond, int(status.Int32)
			a.ResponseBody, a.Error = string(body), errText.String
			return &a, nil
		})
		if err != nil {
			return err
		}
		return br.Close()
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// ListDeliveries implements driver.Store.
func (s *Store) ListDeliveries(ctx context.Context, f webhooks.DeliveryFilter, p webhooks.Page) (*webhooks.List[*webhooks.Delivery], error) {
	q := listQuery{table: "deliveries", cols: deliveryColsNoBody}
	q.whereID("endpoint_id", f.EndpointID)
	if f.Status != webhooks.DeliveryPending && !q.none {
		q.where(qIDKey("endpoint_id", "$%d"), f.EndpointID)
	}
	q.scoped()
	switch f.Status {
	case "":
	case webhooks.DeliveryPending:
		// The cursor's delivery may have ended since: it is looked up in
		// deliveries.
		q.cursorTable, q.table = q.table, qPendingDeliveries
	case webhooks.DeliveryDelivered:
		// Nearly every delivery: the endpoint's history, filtered.
		q.where("status = $%d::text::delivery_status", f.Status)
	case webhooks.DeliveryFailed, webhooks.DeliveryFailedPermanently:
		// The failed states by their index.
		q.where("failed_status = $%d::text::delivery_status", f.Status)
	default:
		// A state no delivery has.
		q.none = true
	}
	if f.EventID != "" {
		q.whereID("event_id", f.EventID)
	}
	return read(list(ctx, s.pool, q, p, scanDelivery))
}

// CountDeliveries implements driver.Store. Every state is counted through
// the endpoint's index, each row's state read from the row (no index holds
// it: see qPendingDeliveries); the retrying ones, pending, through the
// queue.
func (s *Store) CountDeliveries(ctx context.Context, endpointIDs []string, since time.Time, bucket time.Duration, f driver.CountFilter) ([]webhooks.DeliveryCount, error) {
	if f == driver.CountRetrying {
		return s.countDeliveries(ctx, qPendingDeliveries, endpointIDs, since, bucket, qRetrying)
	}
	return s.countDeliveries(ctx, "deliveries", endpointIDs, since, bucket,
		qIDKeys("endpoint_id", "$1")+` AND status = ANY ($4::text[]::delivery_status[])`, webhooks.DeliveryStatuses)
}

// qRetrying is webhooks.Delivery.Retrying's rule for a pending delivery.
const qRetrying = `attempt_count > 0 AND NOT manual`

// countDeliveries counts the endpoints' deliveries of table (deliveries,
// or qPendingDeliveries) created at or after since that meet cond, whose
// args are $4 on, by endpoint, bucket of time (bucket 0 starts at since)
// and state.
func (s *Store) countDeliveries(ctx context.Context, table string, endpointIDs []string, since time.Time, bucket time.Duration, cond string, condArgs ...any) ([]webhooks.DeliveryCount, error) {
	if len(endpointIDs) == 0 {
		return nil, nil
	}
	return read(queryAll(ctx, s.pool, func(r scanner) (webhooks.DeliveryCount, error) {
		var c webhooks.DeliveryCount
		err := r.Scan(&c.EndpointID, &c.Bucket, &c.Status, &c.N)
		return c, err
	}, `SELECT endpoint_id::text, floor(extract(epoch FROM created - $2) * 1000 / $3)::int, status, count(*)::int FROM `+table+`
		WHERE endpoint_id = ANY ($1::uuid[]) AND `+cond+` AND created >= $2
		GROUP BY 1, 2, 3`, append([]any{uuids(endpointIDs), ts(since), bucket.Milliseconds()}, condArgs...)...))
}

// ListEventDeliveries implements driver.Store.
func (s *Store) ListEventDeliveries(ctx context.Context, eventIDs, endpointIDs []string) ([]*webhooks.Delivery, error) {
	if len(eventIDs) == 0 || len(endpointIDs) == 0 {
		return nil, nil
	}
	return read(queryAll(ctx, s.pool, scanDelivery, `SELECT `+deliveryColsNoBody+` FROM deliveries
		WHERE event_id = ANY ($1::uuid[]) AND endpoint_id = ANY ($2::uuid[])
		ORDER BY created, id`, uuids(eventIDs), uuids(endpointIDs)))
}

// InsertDeliveries implements driver.Tx.
func (t *txn) InsertDeliveries(ctx context.Context, ds []*webhooks.Delivery) ([]*webhooks.Delivery, error) {
	return insertDeliveries(ctx, t, ds)
}

// LockDelivery implements driver.Tx: FOR UPDATE.
func (t *txn) LockDelivery(ctx context.Context, id string) (*webhooks.Delivery, error) {
	return findDelivery(ctx, t, id, forUpdate)
}

// Rearm implements driver.Tx. The deliveries are locked by the caller (see
// RecoverCandidates and LockDelivery).
func (t *txn) Rearm(ctx context.Context, ds []*webhooks.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	n := len(ds)
	ids, statuses, reasons, keys := make([]string, n), make([]string, n), make([]*string, n), make([]*string, n)
	next, manual, waiting := make([]*time.Time, n), make([]bool, n), make([]string, n)
	for i, d := range ds {
		ids[i], statuses[i], reasons[i], keys[i] = d.ID, d.Status, textPtr(d.Reason), textPtr(d.OrderingKey)
		next[i], manual[i], waiting[i] = timePtr(d.NextAttemptAt), d.Manual, d.WaitingFor
	}
	_, err := t.Exec(ctx, `WITH r AS (
			SELECT * FROM unnest($1::uuid[], $2::text[]::delivery_status[], $3::text[], $4::timestamptz[], $5::bool[], $6::text[], $7::uuid[])
				AS r(id, status, reason, next_attempt_at, manual, ordering_key, waiting_for)
		), u AS (
			UPDATE deliveries d SET status = r.status, reason = r.reason, next_attempt_at = r.next_attempt_at, manual = r.manual,
				ordering_key = r.ordering_key, waiting_for = r.waiting_for
			FROM r WHERE d.id = r.id RETURNING d.id, d.endpoint_id, d.next_attempt_at, d.waiting_for, d.created, d.ordering_key
		)
		INSERT INTO queue (delivery_id, endpoint_id, due, since, waiting, created, ordering_key)
		SELECT id, endpoint_id, next_attempt_at, next_attempt_at, waiting_for IS NOT NULL, created, ordering_key FROM u
		ON CONFLICT (delivery_id) DO UPDATE SET due = excluded.due, since = excluded.since, waiting = excluded.waiting,
			ordering_key = excluded.ordering_key, parked = false, lease_token = NULL, lease_expires = NULL`,
		uuids(ids), statuses, reasons, next, manual, keys, uuids(waiting))
	return err
}

// RecoverCandidates implements driver.Tx. The deliveries are locked in id
// order, like every multi-row change of deliveries; an attempt recorded
// meanwhile (a success ends a delivery the disable had failed) takes one
// out of the set. The failed ones (what a recovery sends again) are read
// through their index, not through the endpoint's whole window.
func (t *txn) RecoverCandidates(ctx context.Context, f webhooks.RecoverFilter) ([]webhooks.RecoverCandidate, error) {
	if !webhooks.ValidID(f.EndpointID) || len(f.Statuses) == 0 {
		return nil, nil
	}
	status := "status"
	if failedOnly(f.Statuses) {
		status = "failed_status"
	}
	return queryAll(ctx, t, func(r scanner) (webhooks.RecoverCandidate, error) {
		var s deliveryScan
		var c webhooks.RecoverCandidate
		var created pgtype.Timestamptz
		err := r.Scan(append(s.dest(), &created, &c.EventTest, &c.EventErased)...)
		c.Delivery, c.EventCreated = s.delivery(), fromTS(created)
		return c, err
	}, `SELECT `+deliveryColsOf("d")+`, e.created, e.test, e.erased IS NOT NULL OR EXISTS (
			SELECT 1 FROM erasures x WHERE x.company_id = e.company_id OR x.account_id = e.account_id)
		FROM deliveries d JOIN events e ON e.id = d.event_id
		WHERE d.endpoint_id = $1 AND `+qIDKey("d.endpoint_id", "$1")+` AND d.created >= $2 AND d.created < $3 AND d.`+status+` = ANY ($4::text[]::delivery_status[])
		AND NOT EXISTS (SELECT 1 FROM deliveries n WHERE n.event_id = d.event_id AND n.endpoint_id = d.endpoint_id
			AND (n.created, n.id) > (d.created, d.id))
		ORDER BY d.id
		FOR UPDATE OF d`,
		f.EndpointID, ts(f.CreatedGTE), ts(f.CreatedLT), f.Statuses)
}

// prefixed qualifies a column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// LastAttempts implements driver.Store: a delivery's last attempt is the one
// its attempt_count numbers.
func (s *Store) LastAttempts(ctx context.Context, deliveryIDs []string) ([]*webhooks.Attempt, error) {
	if len(deliveryIDs) == 0 {
		return nil, nil
	}
	return read(queryAll(ctx, s.pool, func(r scanner) (*webhooks.Attempt, error) {
		var a webhooks.Attempt
		var started pgtype.Timestamptz
		var durMS int64
		var status pgtype.Int4
		var errText pgtype.Text
		if err := r.Scan(&a.DeliveryID, &a.Number, &started, &durMS, &status, &errText, &a.Manual); err != nil {
			return nil, err
		}
		a.StartedAt, a.Duration, a.ResponseStatus = fromTS(started), time.Duration(durMS)*time.Millisecond, int(status.Int32)
		a.Error = errText.String
		return &a, nil
	}, `SELECT a.delivery_id::text, a.number, a.started_at, a.duration_ms, a.response_status, a.error, a.manual
		FROM deliveries d JOIN attempts a ON a.delivery_id = d.id AND a.number = d.attempt_count
		WHERE d.id = ANY ($1::uuid[])`, uuids(deliveryIDs)))
}
