package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// Queries of the work queue, prepared once (see txn).
const (
	// The claims each endpoint holds now, for the per-endpoint cap.
	// INDEXED BY: without statistics the planner prefers walking the
	// endpoint index in GROUP BY order, a scan of the whole table.
	qHeld = `SELECT endpoint_id, count(*) FROM deliveries INDEXED BY deliveries_leased
		WHERE lease_expires > ? GROUP BY endpoint_id`
	qDue = `SELECT id, endpoint_id, next_attempt_at FROM deliveries
		WHERE status = 'p' AND parked = 0 AND lease_expires IS NULL AND waiting_for IS NULL AND next_attempt_at <= ?1
		ORDER BY next_attempt_at, id LIMIT ?2`
	qDueAfter = `SELECT id, endpoint_id, next_attempt_at FROM deliveries
		WHERE status = 'p' AND parked = 0 AND lease_expires IS NULL AND waiting_for IS NULL AND next_attempt_at <= ?1
		AND (next_attempt_at, id) > (?3, ?4)
		ORDER BY next_attempt_at, id LIMIT ?2`
	// Pending deliveries whose claim lapsed (its process died, or hung
	// past the lease): not in the due index, which holds the unleased.
	qLapsed = `SELECT id, endpoint_id, next_attempt_at FROM deliveries INDEXED BY deliveries_leased
		WHERE lease_expires <= ?1 AND status = 'p' AND parked = 0
		ORDER BY lease_expires LIMIT ?2`
	qClaim = `UPDATE deliveries SET lease_token = ?, lease_expires = ?, parked = 0 WHERE id = ? RETURNING ` + deliveryCols
	qPark  = `UPDATE deliveries SET parked = 1 WHERE id = ?`
	// The endpoints with parked deliveries: a loose index scan, one probe
	// per endpoint however deep its backlog.
	qParkedEndpoints = `WITH RECURSIVE ep(id) AS (
		SELECT (SELECT min(endpoint_id) FROM deliveries WHERE status = 'p' AND parked = 1)
		UNION ALL
		SELECT (SELECT min(endpoint_id) FROM deliveries WHERE status = 'p' AND parked = 1 AND endpoint_id > ep.id)
		FROM ep WHERE ep.id IS NOT NULL)
		SELECT id FROM ep WHERE id IS NOT NULL`
	// The first n of an endpoint's queue of parked deliveries.
	qParkedOf = `SELECT id, next_attempt_at FROM deliveries WHERE endpoint_id = ? AND status = 'p' AND parked = 1
		ORDER BY next_attempt_at, id LIMIT ?`
	// While the delivery is pending the attempt decides its state; if it
	// ended meanwhile, only a transition that overrides an end does (?8:
	// Transition.OverridesEnd).
	qRecord = `UPDATE deliveries SET
		attempt_count = max(attempt_count, ?1),
		last_response_status = ?2,
		status = CASE WHEN status = 'p' OR ?8 THEN ?3 ELSE status END,
		reason = CASE WHEN status = 'p' OR ?8 THEN ?4 ELSE reason END,
		next_attempt_at = CASE WHEN status = 'p' OR ?8 THEN ?5 ELSE next_attempt_at END,
		due_since = CASE WHEN status = 'p' OR ?8 THEN ?5 ELSE due_since END,
		manual = 0, lease_token = NULL, lease_expires = NULL
		WHERE id = ?6 AND lease_token = ?7`
	// An attempt of an erased delivery (one in flight at the erasure: its
	// body is gone only then) is stored without its response body.
	qInsertAttempt = `INSERT INTO attempts (delivery_id, number, started_at, duration_ms, response_status, response_body, error, manual)
		SELECT ?1, ?2, ?3, ?4, ?5, CASE WHEN body_n IS NOT NULL THEN ?6 ELSE X'' END, ?7, ?8 FROM deliveries WHERE id = ?1
		ON CONFLICT DO NOTHING`
	qRelease = `UPDATE deliveries SET lease_token = NULL, lease_expires = NULL
		WHERE id = ? AND lease_token = ?`
	// A deferral moves a pending delivery's next attempt; one that ended
	// meanwhile (its endpoint was disabled) keeps its end.
	qDefer = `UPDATE deliveries SET lease_token = NULL, lease_expires = NULL,
			next_attempt_at = CASE WHEN status = 'p' THEN ? ELSE next_attempt_at END
		WHERE id = ? AND lease_token = ?`
)

// qClaimTraced is qClaim with the event's traceparent, when tracing is on
// (ClaimRequest.Traceparents): off, a claim reads no event.
const qClaimTraced = qClaim + `, (SELECT traceparent FROM events WHERE id = deliveries.event_id)`

// qNextScheduled is the first attempt due after now.
const qNextScheduled = `SELECT min(next_attempt_at) FROM deliveries
	WHERE status = 'p' AND parked = 0 AND lease_expires IS NULL AND waiting_for IS NULL AND next_attempt_at > ?`

// Each endpoint's streak of failures, read and written in the write
// transaction that records its attempts (qStreak reads only an endpoint
// that has one, or a failure now: a healthy endpoint's 2xx reads nothing
// more and writes nothing).
const (
	qStreak       = `SELECT failure_streak, failing_since FROM endpoints WHERE id = ? AND (failure_streak > 0 OR ?)`
	qUpdateStreak = `UPDATE endpoints SET failure_streak = ?, failing_since = ? WHERE id = ?`
	qStatus       = `SELECT status FROM deliveries WHERE id = ?`
	// A delivery of a chain that ended releases the one waiting behind
	// it, which is due then (?2).
	qReleaseNext = `UPDATE deliveries SET waiting_for = NULL, due_since = ?2
		WHERE waiting_for = ?1 AND status = 'p' AND (SELECT status FROM deliveries WHERE id = ?1) <> 'p'`
)

// Claim implements driver.Queue, in a write transaction that commits
// lazily. SQLite has one writer: the transaction locks everything.
func (s *Store) Claim(ctx context.Context, fn func(tx driver.QueueTx) (*driver.QueueWrites, error)) ([]*webhooks.Claim, error) {
	var claims []*webhooks.Claim
	err := s.inTxWith(ctx, lazy, func(tx *txn) error {
		w, err := fn(queueTx{tx})
		if err != nil {
			return err
		}
		claims, err = tx.writeClaim(ctx, w)
		return err
	})
	return claims, err
}

// queueTx is a txn as a claim's steps (driver.QueueTx), whose Begin is
// not the registration's.
type queueTx struct{ *txn }

// Begin implements driver.QueueTx.
func (t queueTx) Begin(ctx context.Context, r driver.QueueReads) (*driver.QueueFacts, error) {
	f := &driver.QueueFacts{Streaks: map[string]webhooks.Streak{}, Held: map[string]int{}}
	for _, id := range r.Streaks {
		var st webhooks.Streak
		var since sql.NullInt64
		err := t.QueryRowContext(ctx, qStreak, dbID(id), slices.Contains(r.Failed, id)).Scan(&st.Length, &since)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		} else if err != nil {
			return nil, err
		}
		st.Since = fromMS(since)
		f.Streaks[id] = st
	}
	if err := recordAttempts(ctx, t.txn, r.Records); err != nil || r.Limit <= 0 {
		return f, err
	}
	var err error
	if r.Cap > 0 {
		if f.Held, err = heldClaims(ctx, t.txn, r.Now); err != nil {
			return nil, err
		}
	}
	if f.Parked, err = parkedCandidates(ctx, t.txn, f.Held, r); err != nil {
		return nil, err
	}
	if f.Due, err = scan(ctx, t.txn, qLapsed, ms(r.Now), r.Limit); err != nil {
		return nil, err
	}
	due, err := scan(ctx, t.txn, qDue, ms(r.Now), r.Chunk)
	if err != nil {
		return nil, err
	}
	f.Due, f.More = append(f.Due, due...), len(due) == r.Chunk
	if len(due) > 0 {
		f.Cursor = due[len(due)-1]
	}
	return f, nil
}

// Scan implements driver.QueueTx.
func (t queueTx) Scan(ctx context.Context, now time.Time, after driver.Candidate, n int) ([]driver.Candidate, driver.Candidate, error) {
	cands, err := scan(ctx, t.txn, qDueAfter, ms(now), n, ms(after.Due), dbID(after.ID))
	if len(cands) > 0 {
		after = cands[len(cands)-1]
	}
	return cands, after, err
}

// scan reads candidates with query, whose columns are id, endpoint_id and
// next_attempt_at.
func scan(ctx context.Context, tx *txn, query string, args ...any) ([]driver.Candidate, error) {
	return queryAll(ctx, tx, func(r scanner) (driver.Candidate, error) {
		var c driver.Candidate
		var due sql.NullInt64
		err := r.Scan((*dbID)(&c.ID), (*dbID)(&c.EndpointID), &due)
		c.Due = fromMS(due)
		return c, err
	}, query, args...)
}

// writeClaim writes a claim's streaks, outbox entries, parked deliveries
// and claims, and returns the claims with their endpoints.
func (t *txn) writeClaim(ctx context.Context, w *driver.QueueWrites) ([]*webhooks.Claim, error) {
	for _, u := range w.Streaks {
		if _, err := t.ExecContext(ctx, qUpdateStreak, u.Length, ms(u.Since), dbID(u.EndpointID)); err != nil {
			return nil, err
		}
	}
	if err := t.InsertOutbox(ctx, w.Outbox); err != nil {
		return nil, err
	}
	for _, id := range w.Park {
		if _, err := t.ExecContext(ctx, qPark, dbID(id)); err != nil {
			return nil, err
		}
	}
	claims := make([]*webhooks.Claim, 0, len(w.Claim))
	endpoints := map[string]*webhooks.Endpoint{}
	for _, id := range w.Claim {
		d, traceparent, err := claimDelivery(ctx, t, w, id)
		if err != nil {
			return nil, err
		}
		if endpoints[d.EndpointID] == nil {
			// A deleted endpoint has no pending deliveries, so this finds
			// every claim's endpoint.
			if endpoints[d.EndpointID], err = findEndpoint(ctx, t, d.EndpointID); err != nil {
				return nil, err
			}
		}
		claims = append(claims, &webhooks.Claim{Delivery: d, Endpoint: endpoints[d.EndpointID], Token: w.Token, Traceparent: traceparent})
	}
	return claims, nil
}

// claimDelivery claims the delivery id, and returns it with its event's
// traceparent if w asks for it.
func claimDelivery(ctx context.Context, tx *txn, w *driver.QueueWrites, id string) (*webhooks.Delivery, string, error) {
	if !w.Traceparents {
		d, err := scanDelivery(tx.QueryRowContext(ctx, qClaim, leaseToken(w.Token), ms(w.LeaseUntil), dbID(id)))
		return d, "", err
	}
	var s deliveryScan
	var traceparent sql.NullString
	if err := tx.QueryRowContext(ctx, qClaimTraced, leaseToken(w.Token), ms(w.LeaseUntil), dbID(id)).Scan(append(s.dest(), &traceparent)...); err != nil {
		return nil, "", err
	}
	return s.delivery(), traceparent.String, nil
}

// heldClaims counts the unexpired claims of each endpoint.
func heldClaims(ctx context.Context, tx *txn, now time.Time) (map[string]int, error) {
	held := map[string]int{}
	rows, err := tx.QueryContext(ctx, qHeld, ms(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id dbID
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		held[string(id)] = n
	}
	return held, rows.Err()
}

// parkedCandidates returns, for each endpoint with parked deliveries, as
// many of them, oldest due first, as it has free slots (all of them
// without a cap), r.Limit at most in all.
func parkedCandidates(ctx context.Context, tx *txn, held map[string]int, r driver.QueueReads) ([]driver.Candidate, error) {
	endpoints, err := queryAll(ctx, tx, func(r scanner) (string, error) {
		var id string
		return id, r.Scan((*dbID)(&id))
	}, qParkedEndpoints)
	if err != nil {
		return nil, err
	}
	var out []driver.Candidate
	for _, e := range endpoints {
		free := r.Limit - len(out)
		if r.Cap > 0 {
			free = min(free, r.Cap-held[e])
		}
		if free <= 0 {
			continue
		}
		cands, err := queryAll(ctx, tx, func(r scanner) (driver.Candidate, error) {
			c := driver.Candidate{EndpointID: e, Parked: true}
			var due sql.NullInt64
			err := r.Scan((*dbID)(&c.ID), &due)
			c.Due = fromMS(due)
			return c, err
		}, qParkedOf, dbID(e), free)
		if err != nil {
			return nil, err
		}
		out = append(out, cands...)
	}
	return out, nil
}

// recordAttempts stores records in tx: each attempt and its delivery's
// new state, if the delivery still holds the record's claim.
func recordAttempts(ctx context.Context, tx *txn, records []*webhooks.AttemptRecord) error {
	for _, r := range records {
		a, t := r.Attempt, r.Transition
		res, err := tx.ExecContext(ctx, qRecord, a.Number, nullInt(a.ResponseStatus), dbStatus(t.Status), nullString(t.Reason),
			ms(t.NextAttemptAt), dbID(a.DeliveryID), leaseToken(r.Token), boolInt(t.OverridesEnd()))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			r.Lapsed = true // the claim lapsed and another worker holds the delivery
			continue
		}
		if _, err := tx.ExecContext(ctx, qInsertAttempt, dbID(a.DeliveryID), a.Number, ms(a.StartedAt), a.Duration.Milliseconds(),
			nullInt(a.ResponseStatus), []byte(a.ResponseBody), nullString(a.Error), boolInt(a.Manual)); err != nil {
			return err
		}
		if t.Status == webhooks.DeliveryFailedPermanently {
			var status string
			if err := tx.QueryRowContext(ctx, qStatus, dbID(a.DeliveryID)).Scan((*dbStatus)(&status)); err != nil {
				return err
			}
			r.Exhausted = status == webhooks.DeliveryFailedPermanently
		}
		if r.Chained() {
			if _, err := tx.ExecContext(ctx, qReleaseNext, dbID(a.DeliveryID), ms(a.StartedAt.Add(a.Duration))); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReleaseClaims implements driver.Queue.
func (s *Store) ReleaseClaims(ctx context.Context, token string, ids []string) error {
	return s.inTxWith(ctx, lazy, func(tx *txn) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, qRelease, dbID(id), leaseToken(token)); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeferClaims implements driver.Queue.
func (s *Store) DeferClaims(ctx context.Context, deferrals []webhooks.Deferral) error {
	return s.inTxWith(ctx, lazy, func(tx *txn) error {
		for _, d := range deferrals {
			if _, err := tx.ExecContext(ctx, qDefer, ms(d.Until), dbID(d.DeliveryID), leaseToken(d.Token)); err != nil {
				return err
			}
		}
		return nil
	})
}

// NextScheduled implements driver.Queue.
func (s *Store) NextScheduled(ctx context.Context, now time.Time) (time.Time, error) {
	var next sql.NullInt64
	err := s.read.QueryRowContext(ctx, qNextScheduled, ms(now)).Scan(&next)
	return fromMS(next), dbError(err)
}
