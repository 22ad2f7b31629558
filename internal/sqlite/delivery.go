package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/bodycodec"
	"github.com/factuarea/webhooks/internal/driver"
)

const deliveryCols = `id, endpoint_id, event_id, event_type, relationship, replay_of, status, reason, attempt_count,
	next_attempt_at, last_response_status, manual, ` + deliveryBody + `, created, schedule_factor, rehearsal, ordering_key, waiting_for`

// qEventIndex names the index of an event's deliveries for the queries
// that also say the endpoint and want an order: deliveries_event holds no
// order past (event_id, endpoint_id), and without statistics SQLite
// would rather walk the endpoint's index in order, its whole history.
const qEventIndex = `INDEXED BY deliveries_event`

// deliveryColsD are deliveryCols of the table as d.
const deliveryColsD = `d.id, d.endpoint_id, d.event_id, d.event_type, d.relationship, d.replay_of, d.status, d.reason, d.attempt_count,
	d.next_attempt_at, d.last_response_status, d.manual,
	coalesce((SELECT b.body FROM bodies b WHERE b.event_id = d.event_id AND b.n = d.body_n), X''),
	d.created, d.schedule_factor, d.rehearsal, d.ordering_key, d.waiting_for`

// deliveryBody reads a delivery's body from the event's bodies (see
// insertBody); an erased one's is empty.
const deliveryBody = `coalesce((SELECT b.body FROM bodies b WHERE b.event_id = deliveries.event_id AND b.n = deliveries.body_n), X'')`

// deliveryColsNoBody are deliveryCols with an empty body, for lists that
// show deliveries' states, not what they send.
const deliveryColsNoBody = `id, endpoint_id, event_id, event_type, relationship, replay_of, status, reason, attempt_count,
	next_attempt_at, last_response_status, manual, NULL, created, schedule_factor, rehearsal, ordering_key, waiting_for`

// deliveryScan holds a delivery's columns as scanned, for rows that carry
// other columns too.
type deliveryScan struct {
	d                 webhooks.Delivery
	rel, reason       sql.NullString
	orderingKey       sql.NullString
	next, created     sql.NullInt64
	lastStatus        sql.NullInt64
	manual, rehearsal int
}

func (s *deliveryScan) dest() []any {
	d := &s.d
	return []any{(*dbID)(&d.ID), (*dbID)(&d.EndpointID), (*dbID)(&d.EventID), &d.EventType, &s.rel, (*dbID)(&d.ReplayOf), (*dbStatus)(&d.Status), &s.reason,
		&d.AttemptCount, &s.next, &s.lastStatus, &s.manual, (*bodycodec.Column)(&d.Body), &s.created, &d.ScheduleFactor, &s.rehearsal, &s.orderingKey,
		(*dbID)(&d.WaitingFor)}
}

func (s *deliveryScan) delivery() *webhooks.Delivery {
	d := s.d
	d.Relationship, d.Reason = webhooks.Relationship(s.rel.String), s.reason.String
	d.NextAttemptAt, d.LastResponseStatus, d.Manual, d.Rehearsal = fromMS(s.next), int(s.lastStatus.Int64), s.manual == 1, s.rehearsal == 1
	d.Created = fromMS(s.created)
	d.OrderingKey = s.orderingKey.String
	return &d
}

func scanDelivery(r scanner) (*webhooks.Delivery, error) {
	var s deliveryScan
	if err := r.Scan(s.dest()...); err != nil {
		return nil, err
	}
	return s.delivery(), nil
}

// Inserting a delivery: a plain row of VALUES, without RETURNING, which
// would make SQLite write a statement journal, as much work as the insert.
// insertDeliveries inserts ds and returns those inserted: an original
// delivery that already exists for its endpoint and event is skipped, by
// the unique index, not by a check in memory.
func insertDeliveries(ctx context.Context, tx *txn, ds []*webhooks.Delivery) ([]*webhooks.Delivery, error) {
	inserted, err := insertDeliveryRows(ctx, tx, ds, nil)
	if err != nil {
		return nil, err
	}
	out := ds[:0:0]
	for _, d := range ds {
		if inserted[d.ID] {
			out = append(out, d)
		}
	}
	return out, nil
}

// insertDeliveryRows inserts ds, in order, those whose ids leases holds
// claimed with the lease, and returns the ids of those inserted. The rows
// go in statements of up to 32 (a statement per row cost as much again
// as the row's own work); the chunks' sizes are powers of two, so that a
// few prepared statements serve every group.
func insertDeliveryRows(ctx context.Context, tx *txn, ds []*webhooks.Delivery, leases map[string]driver.Lease) (map[string]bool, error) {
	inserted := make(map[string]bool, len(ds))
	args := make([]any, 0, min(len(ds), maxDeliveryRows)*deliveryRowArgs)
	for len(ds) > 0 {
		n := maxDeliveryRows
		for n > len(ds) {
			n /= 2
		}
		args = args[:0]
		for _, d := range ds[:n] {
			bodyN, err := tx.insertBody(ctx, d.EventID, d.Body)
			if err != nil {
				return nil, err
			}
			l := leases[d.ID]
			args = append(append(args, deliveryArgs(d, bodyN)...), leaseToken(l.Token), ms(l.Until))
		}
		rows, err := tx.QueryContext(ctx, qInsertDeliveries(n), args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan((*dbID)(&id)); err != nil {
				rows.Close()
				return nil, err
			}
			inserted[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		ds = ds[n:]
	}
	return inserted, nil
}

// maxDeliveryRows is the most rows an insert of deliveries holds (a power
// of two), deliveryRowArgs the arguments of one: its columns and the lease.
const maxDeliveryRows = 32

var deliveryRowArgs = strings.Count(deliveryInsertCols, ",") + 1 + 2

// qInsertDeliveries inserts n deliveries, returning the ids of those
// inserted.
func qInsertDeliveries(n int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", deliveryRowArgs), ", ") + ")"
	return `INSERT INTO deliveries (` + deliveryInsertCols + `, lease_token, lease_expires) VALUES ` +
		strings.TrimSuffix(strings.Repeat(row+", ", n), ", ") + `
		ON CONFLICT (event_id, endpoint_id, (CASE WHEN replay_of IS NULL THEN 1 END)) DO NOTHING RETURNING id`
}

// deliveryInsertCols are the columns a delivery is stored with,
// deliveryArgs their values.
const deliveryInsertCols = `id, endpoint_id, event_id, event_type, relationship, replay_of, status, reason, attempt_count,
	next_attempt_at, last_response_status, manual, body_n, created, schedule_factor, rehearsal, ordering_key, waiting_for, due_since`

func deliveryArgs(d *webhooks.Delivery, bodyN sql.NullInt64) []any {
	return []any{dbID(d.ID), dbID(d.EndpointID), dbID(d.EventID), d.EventType, nullString(string(d.Relationship)),
		nullID(d.ReplayOf), dbStatus(d.Status), nullString(d.Reason), d.AttemptCount, ms(d.NextAttemptAt),
		nullInt(d.LastResponseStatus), boolInt(d.Manual), bodyN, ms(d.Created), max(d.ScheduleFactor, 1),
		boolInt(d.Rehearsal), nullString(d.OrderingKey), nullID(d.WaitingFor), ms(dueSince(d))}
}

// dueSince is the moment a delivery as written came due (SPEC 14's
// backlog): its next attempt's, while it is pending and waits behind no
// other of its chain.
func dueSince(d *webhooks.Delivery) time.Time {
	if d.Status != webhooks.DeliveryPending || d.Waiting() {
		return time.Time{}
	}
	return d.NextAttemptAt
}

func findDelivery(ctx context.Context, q querier, id string) (*webhooks.Delivery, error) {
	d, err := scanDelivery(q.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM deliveries WHERE id = ?`, dbID(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("webhook delivery")
	}
	return d, err
}

// FindDelivery implements driver.Store. The delivery and its attempts are read
// in one transaction, so in one snapshot of the database: attempt_count
// and the attempts listed agree while attempts are recorded.
func (s *Store) FindDelivery(ctx context.Context, id string) (*webhooks.Delivery, error) {
	return read(s.findDelivery(ctx, id))
}

func (s *Store) findDelivery(ctx context.Context, id string) (*webhooks.Delivery, error) {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	d, err := findDelivery(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	d.Attempts, err = queryAll(ctx, tx, func(r scanner) (*webhooks.Attempt, error) {
		a := webhooks.Attempt{DeliveryID: id}
		var started, status sql.NullInt64
		var durMS int64
		var body []byte
		var errText sql.NullString
		var manual int
		if err := r.Scan(&a.Number, &started, &durMS, &status, &body, &errText, &manual); err != nil {
			return nil, err
		}
		a.StartedAt, a.Duration, a.ResponseStatus = fromMS(started), time.Duration(durMS)*time.Millisecond, int(status.Int64)
		a.ResponseBody, a.Error, a.Manual = string(body), errText.String, manual == 1
		return &a, nil
	}, `SELECT number, started_at, duration_ms, response_status, response_body, error, manual
		FROM attempts WHERE delivery_id = ? ORDER BY number`, dbID(id))
	if err != nil {
		return nil, err
	}
	if d.Attempts == nil {
		d.Attempts = []*webhooks.Attempt{}
	}
	return d, nil
}

// ListDeliveries implements driver.Store.
func (s *Store) ListDeliveries(ctx context.Context, f webhooks.DeliveryFilter, p webhooks.Page) (*webhooks.List[*webhooks.Delivery], error) {
	return read(list(ctx, s.read, deliveryList(f), p, scanDelivery))
}

// deliveryList is the list of an endpoint's deliveries that f selects.
func deliveryList(f webhooks.DeliveryFilter) listQuery {
	q := listQuery{table: "deliveries", cols: deliveryColsNoBody, where: []string{"endpoint_id = ?"}, args: []any{dbID(f.EndpointID)}, byRowid: true}
	q.scoped()
	if f.Status != "" {
		q.where, q.args = append(q.where, "status = ?"), append(q.args, dbStatus(f.Status))
		if f.Status != webhooks.DeliveryDelivered {
			q.where = append(q.where, qNotDelivered)
		}
	}
	if f.EventID != "" {
		q.where, q.args = append(q.where, "event_id = ?"), append(q.args, dbID(f.EventID))
		// The event's handful of deliveries, sorted, not the endpoint's
		// whole history walked in order for them (see qEventIndex).
		q.table = "deliveries " + qEventIndex
	}
	return q
}

// CountDeliveries implements driver.Store. Neither index holds every
// delivery with its state: the endpoint's holds them all, the status index
// all but the delivered ones. Each answers its part from its entries alone,
// in one statement (one snapshot), and the delivered are what the rest
// leave of all. The retrying ones are read through the status index
// (pending, then the rule, from the rows).
func (s *Store) CountDeliveries(ctx context.Context, endpointIDs []string, since time.Time, bucket time.Duration, f driver.CountFilter) ([]webhooks.DeliveryCount, error) {
	if len(endpointIDs) == 0 {
		return nil, nil
	}
	if f == driver.CountRetrying {
		args := append([]any{ms(since), bucket.Milliseconds()}, idArgs(endpointIDs)...)
		return read(queryAll(ctx, s.read, scanCount, `SELECT endpoint_id, (created - ?1) / ?2, status, count(*) FROM deliveries
			WHERE endpoint_id IN (`+numbered(3, len(endpointIDs))+`) AND status = 'p' AND `+qRetrying+` AND created >= ?1
			GROUP BY 1, 2, 3`, args...))
	}
	counts, err := read(queryAll(ctx, s.read, scanCount, qCountAll(len(endpointIDs)),
		append([]any{ms(since), bucket.Milliseconds()}, idArgs(endpointIDs)...)...))
	if err != nil {
		return nil, err
	}
	// A total (no state) counts the delivered too: they are what the
	// other states leave of it.
	type key struct {
		endpoint string
		bucket   int
	}
	others := map[key]int{}
	for _, c := range counts {
		if c.Status != "" {
			others[key{c.EndpointID, c.Bucket}] += c.N
		}
	}
	out := counts[:0]
	for _, c := range counts {
		if c.Status == "" {
			c.Status, c.N = webhooks.DeliveryDelivered, c.N-others[key{c.EndpointID, c.Bucket}]
		}
		out = append(out, c)
	}
	return slices.DeleteFunc(out, func(c webhooks.DeliveryCount) bool { return c.N <= 0 }), nil
}

// qCountAll counts n endpoints' deliveries created at or after ?1, by
// endpoint and bucket of ?2 ms: all of them first, with no state, from the
// endpoint's index; then those not delivered, by state, from the status
// index.
func qCountAll(n int) string {
	in := numbered(3, n)
	return `SELECT endpoint_id, (created - ?1) / ?2, NULL, count(*) FROM deliveries INDEXED BY deliveries_endpoint
			WHERE endpoint_id IN (` + in + `) AND created >= ?1 GROUP BY 1, 2
		UNION ALL
		SELECT endpoint_id, (created - ?1) / ?2, status, count(*) FROM deliveries INDEXED BY deliveries_endpoint_status
			WHERE endpoint_id IN (` + in + `) AND ` + qNotDelivered + ` AND created >= ?1 GROUP BY 1, 2, 3`
}

// qRetrying is webhooks.Delivery.Retrying's rule for a pending delivery.
const qRetrying = `attempt_count > 0 AND manual = 0`

// scanCount scans a count by endpoint, bucket and state (NULL: none).
func scanCount(r scanner) (webhooks.DeliveryCount, error) {
	var c webhooks.DeliveryCount
	var st sql.NullString
	err := r.Scan((*dbID)(&c.EndpointID), &c.Bucket, &st, &c.N)
	if err == nil && st.Valid {
		err = (*dbStatus)(&c.Status).Scan(st.String)
	}
	return c, err
}

// ListEventDeliveries implements driver.Store.
func (s *Store) ListEventDeliveries(ctx context.Context, eventIDs, endpointIDs []string) ([]*webhooks.Delivery, error) {
	if len(eventIDs) == 0 || len(endpointIDs) == 0 {
		return nil, nil
	}
	args := idArgs(append(slices.Clone(eventIDs), endpointIDs...))
	return read(queryAll(ctx, s.read, scanDelivery, `SELECT `+deliveryColsNoBody+` FROM deliveries `+qEventIndex+`
		WHERE event_id IN (`+placeholders(len(eventIDs))+`) AND endpoint_id IN (`+placeholders(len(endpointIDs))+`)
		ORDER BY created, id`, args...))
}

// InsertDeliveries implements driver.Tx.
func (t *txn) InsertDeliveries(ctx context.Context, ds []*webhooks.Delivery) ([]*webhooks.Delivery, error) {
	return insertDeliveries(ctx, t, ds)
}

// LockDelivery implements driver.Tx (see LockRoutes).
func (t *txn) LockDelivery(ctx context.Context, id string) (*webhooks.Delivery, error) {
	return findDelivery(ctx, t, id)
}

// Rearm implements driver.Tx.
func (t *txn) Rearm(ctx context.Context, ds []*webhooks.Delivery) error {
	for _, d := range ds {
		if _, err := t.ExecContext(ctx, `UPDATE deliveries SET status = ?, reason = ?, next_attempt_at = ?, manual = ?,
			ordering_key = ?, waiting_for = ?, parked = 0, lease_token = NULL, lease_expires = NULL, due_since = ? WHERE id = ?`,
			dbStatus(d.Status), nullString(d.Reason), ms(d.NextAttemptAt), boolInt(d.Manual), nullString(d.OrderingKey), nullID(d.WaitingFor),
			ms(dueSince(d)), dbID(d.ID)); err != nil {
			return err
		}
	}
	return nil
}

// RecoverCandidates implements driver.Tx.
func (t *txn) RecoverCandidates(ctx context.Context, f webhooks.RecoverFilter) ([]webhooks.RecoverCandidate, error) {
	if len(f.Statuses) == 0 {
		return nil, nil
	}
	args := []any{dbID(f.EndpointID), ms(f.CreatedGTE), ms(f.CreatedLT)}
	args = append(args, statusArgs(f.Statuses)...)
	return queryAll(ctx, t, func(r scanner) (webhooks.RecoverCandidate, error) {
		var s deliveryScan
		var created sql.NullInt64
		var test, erased int
		err := r.Scan(append(s.dest(), &created, &test, &erased)...)
		return webhooks.RecoverCandidate{Delivery: s.delivery(), EventCreated: fromMS(created), EventTest: test == 1, EventErased: erased == 1}, err
	}, qRecoverCandidates(len(f.Statuses), slices.Contains(f.Statuses, webhooks.DeliveryDelivered)), args...)
}

// qRecoverCandidates selects an endpoint's deliveries created in a window
// in one of n states, oldest first, each the last of its event's to the
// endpoint, with what recover needs of its event. Without delivered among
// the states (recover's are the failed ones) they come from the status
// index, which holds no delivered one, and are sorted; with it, in order
// from the endpoint's, each row read for its state.
func qRecoverCandidates(n int, delivered bool) string {
	index, rare := "", ""
	if !delivered {
		// Without statistics the planner takes the endpoint's index, in
		// order, over the status index and a sort.
		index, rare = ` INDEXED BY deliveries_endpoint_status`, ` AND d.`+qNotDelivered
	}
	return `SELECT ` + deliveryColsD + `, e.created, e.test, e.erased IS NOT NULL OR EXISTS (
			SELECT 1 FROM erasures x WHERE x.company_id = e.company_id OR x.account_id = e.account_id)
		FROM deliveries d` + index + ` JOIN events e ON e.id = d.event_id
		WHERE d.endpoint_id = ? AND d.created >= ? AND d.created < ? AND d.status IN (` + placeholders(n) + `)` + rare + `
		AND NOT EXISTS (SELECT 1 FROM deliveries n ` + qEventIndex + ` WHERE n.event_id = d.event_id AND n.endpoint_id = d.endpoint_id
			AND (n.created, n.rowid) > (d.created, d.rowid))
		ORDER BY d.created, d.rowid`
}

// LastAttempts implements driver.Store: a delivery's last attempt is the one
// its attempt_count numbers.
func (s *Store) LastAttempts(ctx context.Context, deliveryIDs []string) ([]*webhooks.Attempt, error) {
	if len(deliveryIDs) == 0 {
		return nil, nil
	}
	args := idArgs(deliveryIDs)
	return read(queryAll(ctx, s.read, func(r scanner) (*webhooks.Attempt, error) {
		var a webhooks.Attempt
		var started, status sql.NullInt64
		var durMS int64
		var errText sql.NullString
		var manual int
		if err := r.Scan((*dbID)(&a.DeliveryID), &a.Number, &started, &durMS, &status, &errText, &manual); err != nil {
			return nil, err
		}
		a.StartedAt, a.Duration, a.ResponseStatus = fromMS(started), time.Duration(durMS)*time.Millisecond, int(status.Int64)
		a.Error, a.Manual = errText.String, manual == 1
		return &a, nil
	}, `SELECT a.delivery_id, a.number, a.started_at, a.duration_ms, a.response_status, a.error, a.manual
		FROM deliveries d JOIN attempts a ON a.delivery_id = d.id AND a.number = d.attempt_count
		WHERE d.id IN (`+placeholders(len(deliveryIDs))+`)`, args...))
}

// qTail is a chain's last pending delivery: the one no pending delivery
// waits behind.
const qTail = `SELECT id FROM deliveries d WHERE endpoint_id = ? AND ordering_key = ? AND status = 'p'
	AND NOT EXISTS (SELECT 1 FROM deliveries n WHERE n.waiting_for = d.id AND n.status = 'p')
	ORDER BY created DESC, id DESC LIMIT 1`

// Tails implements driver.Chains. The write transaction holds the
// database's one write lock: the chains are locked already.
func (t *txn) Tails(ctx context.Context, chains []webhooks.OrderKey) (map[webhooks.OrderKey]string, error) {
	out := map[webhooks.OrderKey]string{}
	for _, k := range chains {
		var id string
		err := t.QueryRowContext(ctx, qTail, dbID(k.EndpointID), k.Key).Scan((*dbID)(&id))
		if errors.Is(err, sql.ErrNoRows) {
			continue
		} else if err != nil {
			return nil, err
		}
		out[k] = id
	}
	return out, nil
}
