package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

const deliveryCols = `id, endpoint_id, event_id, event_type, relationship, replay_of, status, reason, attempt_count,
	next_attempt_at, last_response_status, manual, body, created, updated`

// deliveryColsNoBody are deliveryCols with an empty body, for lists that
// show deliveries' states, not what they send.
const deliveryColsNoBody = `id, endpoint_id, event_id, event_type, relationship, replay_of, status, reason, attempt_count,
	next_attempt_at, last_response_status, manual, NULL, created, updated`

func scanDelivery(r scanner) (*webhooks.Delivery, error) {
	var d webhooks.Delivery
	var rel, replayOf, reason sql.NullString
	var next, created, updated sql.NullInt64
	var lastStatus sql.NullInt64
	var manual int
	if err := r.Scan(&d.ID, &d.EndpointID, &d.EventID, &d.EventType, &rel, &replayOf, &d.Status, &reason, &d.AttemptCount,
		&next, &lastStatus, &manual, &d.Body, &created, &updated); err != nil {
		return nil, err
	}
	d.Relationship, d.ReplayOf, d.Reason = webhooks.Relationship(rel.String), replayOf.String, reason.String
	d.NextAttemptAt, d.LastResponseStatus, d.Manual = fromMS(next), int(lastStatus.Int64), manual == 1
	d.Created, d.Updated = fromMS(created), fromMS(updated)
	return &d, nil
}

// A pending delivery to an endpoint that has a queue of parked deliveries
// joins the queue at once (see ClaimDeliveries).
const insertDelivery = `INSERT INTO deliveries (` + deliveryCols + `, parked)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
		?7 = 'pending' AND EXISTS (SELECT 1 FROM deliveries WHERE endpoint_id = ?2 AND status = 'pending' AND parked = 1))
	ON CONFLICT (endpoint_id, event_id) WHERE replay_of IS NULL DO NOTHING`

// insertDeliveries inserts ds and returns those inserted: an original
// delivery that already exists for its endpoint and event is skipped, by
// the unique index, not by a check in memory.
func insertDeliveries(ctx context.Context, tx *txn, ds []*webhooks.Delivery) ([]*webhooks.Delivery, error) {
	if len(ds) == 0 {
		return nil, nil
	}
	out := ds[:0:0]
	for _, d := range ds {
		res, err := tx.ExecContext(ctx, insertDelivery, d.ID, d.EndpointID, d.EventID, d.EventType, nullString(string(d.Relationship)),
			nullString(d.ReplayOf), d.Status, nullString(d.Reason), d.AttemptCount, ms(d.NextAttemptAt),
			nullInt(d.LastResponseStatus), boolInt(d.Manual), d.Body, ms(d.Created), ms(d.Updated))
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			out = append(out, d)
		}
	}
	return out, nil
}

func findDelivery(ctx context.Context, q querier, id string) (*webhooks.Delivery, error) {
	d, err := scanDelivery(q.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM deliveries WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("webhook delivery")
	}
	return d, err
}

// FindDelivery implements webhooks.Store.
func (s *Store) FindDelivery(ctx context.Context, id string) (*webhooks.Delivery, error) {
	d, err := findDelivery(ctx, s.read, id)
	if err != nil {
		return nil, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT number, started_at, duration_ms, response_status, response_body, error, manual
		FROM attempts WHERE delivery_id = ? ORDER BY number`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	d.Attempts = []*webhooks.Attempt{}
	for rows.Next() {
		a := webhooks.Attempt{DeliveryID: id}
		var started, status sql.NullInt64
		var durMS int64
		var body []byte
		var errText sql.NullString
		var manual int
		if err := rows.Scan(&a.Number, &started, &durMS, &status, &body, &errText, &manual); err != nil {
			return nil, err
		}
		a.StartedAt, a.Duration, a.ResponseStatus = fromMS(started), time.Duration(durMS)*time.Millisecond, int(status.Int64)
		a.ResponseBody, a.Error, a.Manual = string(body), errText.String, manual == 1
		d.Attempts = append(d.Attempts, &a)
	}
	return d, rows.Err()
}

// ListDeliveries implements webhooks.Store.
func (s *Store) ListDeliveries(ctx context.Context, f webhooks.DeliveryFilter, p webhooks.Page) (*webhooks.List[*webhooks.Delivery], error) {
	q := listQuery{table: "deliveries", cols: deliveryCols, where: []string{"endpoint_id = ?"}, args: []any{f.EndpointID}}
	q.scoped()
	if f.Status != "" {
		q.where, q.args = append(q.where, "status = ?"), append(q.args, f.Status)
	}
	if f.EventID != "" {
		q.where, q.args = append(q.where, "event_id = ?"), append(q.args, f.EventID)
	}
	return list(ctx, s.read, q, p, scanDelivery)
}

// CountDeliveries implements webhooks.Store. Listing every state lets the
// endpoint's status index answer alone, without reading the deliveries.
func (s *Store) CountDeliveries(ctx context.Context, endpointIDs []string, since time.Time, bucket time.Duration) ([]webhooks.DeliveryCount, error) {
	if len(endpointIDs) == 0 {
		return nil, nil
	}
	args := []any{ms(since), bucket.Milliseconds()}
	for _, id := range endpointIDs {
		args = append(args, id)
	}
	for _, st := range webhooks.DeliveryStatuses {
		args = append(args, st)
	}
	args = append(args, ms(since))
	return queryAll(ctx, s.read, func(r scanner) (webhooks.DeliveryCount, error) {
		var c webhooks.DeliveryCount
		err := r.Scan(&c.EndpointID, &c.Bucket, &c.Status, &c.N)
		return c, err
	}, `SELECT endpoint_id, (created - ?) / ?, status, count(*) FROM deliveries
		WHERE endpoint_id IN (`+placeholders(len(endpointIDs))+`) AND status IN (`+placeholders(len(webhooks.DeliveryStatuses))+`)
		AND created >= ? GROUP BY 1, 2, 3`, args...)
}

// ListEventDeliveries implements webhooks.Store.
func (s *Store) ListEventDeliveries(ctx context.Context, eventIDs, endpointIDs []string) ([]*webhooks.Delivery, error) {
	if len(eventIDs) == 0 || len(endpointIDs) == 0 {
		return nil, nil
	}
	var args []any
	for _, id := range append(slices.Clone(eventIDs), endpointIDs...) {
		args = append(args, id)
	}
	return queryAll(ctx, s.read, scanDelivery, `SELECT `+deliveryColsNoBody+` FROM deliveries
		WHERE event_id IN (`+placeholders(len(eventIDs))+`) AND endpoint_id IN (`+placeholders(len(endpointIDs))+`)
		ORDER BY created, id`, args...)
}

// resendable loads what a manual resend of delivery id checks, in tx.
func resendable(ctx context.Context, tx *txn, id, action string, now time.Time) (*webhooks.Delivery, *webhooks.Endpoint, error) {
	d, err := findDelivery(ctx, tx, id)
	if err != nil {
		return nil, nil, err
	}
	ep, err := findEndpoint(ctx, tx, d.EndpointID)
	if err != nil {
		return nil, nil, err
	}
	var created int64
	if err := tx.QueryRowContext(ctx, `SELECT created FROM events WHERE id = ?`, d.EventID).Scan(&created); err != nil {
		return nil, nil, err
	}
	if err := webhooks.CheckResend(action, ep, d, time.UnixMilli(created), now); err != nil {
		return nil, nil, err
	}
	return d, ep, nil
}

// rearm makes a delivery pending for one manual attempt now.
func rearm(ctx context.Context, tx *txn, id string, now time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = ?, reason = NULL, next_attempt_at = ?, manual = 1,
		parked = 0, lease_token = NULL, lease_expires = NULL, updated = ? WHERE id = ?`,
		webhooks.DeliveryPending, ms(now), ms(now), id)
	return err
}

// replay inserts a new delivery of d's event with d's body, for one manual
// attempt now. replay_of names the original, also when d is a replay.
func replay(ctx context.Context, tx *txn, d *webhooks.Delivery, now time.Time) (*webhooks.Delivery, error) {
	r := &webhooks.Delivery{
		ID: webhooks.NewID(), EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		Relationship: d.Relationship, ReplayOf: d.ID, Status: webhooks.DeliveryPending, NextAttemptAt: now,
		Manual: true, Body: d.Body, Created: now, Updated: now,
	}
	if d.ReplayOf != "" {
		r.ReplayOf = d.ReplayOf
	}
	_, err := insertDeliveries(ctx, tx, []*webhooks.Delivery{r})
	return r, err
}

// RetryDelivery implements webhooks.Store.
func (s *Store) RetryDelivery(ctx context.Context, id string, now time.Time, audit *webhooks.AuditEntry) (*webhooks.Delivery, error) {
	var out *webhooks.Delivery
	err := s.inTx(ctx, func(tx *txn) error {
		_, ep, err := resendable(ctx, tx, id, webhooks.ActionRetry, now)
		if err != nil {
			return err
		}
		if err := rearm(ctx, tx, id, now); err != nil {
			return err
		}
		if out, err = findDelivery(ctx, tx, id); err != nil {
			return err
		}
		return insertAudit(ctx, tx, audit, ep.AccountID, webhooks.AuditDeliveryRetried, webhooks.TargetDelivery, id, now)
	})
	return out, err
}

// ReplayDelivery implements webhooks.Store.
func (s *Store) ReplayDelivery(ctx context.Context, id string, now time.Time, audit *webhooks.AuditEntry) (*webhooks.Delivery, error) {
	var out *webhooks.Delivery
	err := s.inTx(ctx, func(tx *txn) error {
		d, ep, err := resendable(ctx, tx, id, webhooks.ActionReplay, now)
		if err != nil {
			return err
		}
		if out, err = replay(ctx, tx, d, now); err != nil {
			return err
		}
		accountID, err := endpointAccount(ctx, tx, ep)
		if err != nil {
			return err
		}
		return insertAudit(ctx, tx, audit, accountID, webhooks.AuditDeliveryReplayed, webhooks.TargetDelivery, out.ID, now)
	})
	return out, err
}

// Recover implements webhooks.Store.
func (s *Store) Recover(ctx context.Context, endpointID string, since, until, now time.Time, audit *webhooks.AuditEntry) (int, error) {
	count := 0
	err := s.inTx(ctx, func(tx *txn) error {
		ep, err := findEndpoint(ctx, tx, endpointID)
		if err != nil {
			return err
		}
		if !ep.Enabled() {
			return webhooks.Errorf(webhooks.EENDPOINTDISABLED, "the endpoint is disabled: enable it before recovering its deliveries.")
		}
		action := webhooks.ResendAction(ep.Scope)
		window := webhooks.RetryWindow
		if action == webhooks.ActionReplay {
			window = webhooks.ReplayWindow
		}
		// The failed deliveries in range whose event is inside the window,
		// is not a test, and has no newer delivery on this endpoint (a replay
		// of a replay would send the event twice more).
		rows, err := tx.QueryContext(ctx, `SELECT `+prefixed("d", deliveryCols)+` FROM deliveries d JOIN events e ON e.id = d.event_id
			WHERE d.endpoint_id = ? AND d.created >= ? AND d.created < ? AND d.status IN (?, ?)
			AND e.test = 0 AND e.created > ?
			AND NOT EXISTS (SELECT 1 FROM deliveries n WHERE n.event_id = d.event_id AND n.endpoint_id = d.endpoint_id
				AND (n.created, n.id) > (d.created, d.id))
			ORDER BY d.created, d.id`,
			endpointID, ms(since), ms(until), webhooks.DeliveryFailed, webhooks.DeliveryFailedPermanently, ms(now.Add(-window)))
		if err != nil {
			return err
		}
		var ds []*webhooks.Delivery
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				rows.Close()
				return err
			}
			ds = append(ds, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, d := range ds {
			if action == webhooks.ActionRetry {
				err = rearm(ctx, tx, d.ID, now)
			} else {
				_, err = replay(ctx, tx, d, now)
			}
			if err != nil {
				return err
			}
		}
		count = len(ds)
		accountID, err := endpointAccount(ctx, tx, ep)
		if err != nil {
			return err
		}
		return insertAudit(ctx, tx, audit, accountID, webhooks.AuditEndpointRecovered, webhooks.TargetEndpoint, endpointID, now)
	})
	return count, err
}
