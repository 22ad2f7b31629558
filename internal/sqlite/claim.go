package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Queries of the work queue, prepared once (see txn).
const (
	// The claims each endpoint holds now, for the per-endpoint cap.
	// INDEXED BY: without statistics the planner prefers walking the
	// endpoint index in GROUP BY order, a scan of the whole table.
	qHeld = `SELECT endpoint_id, count(*) FROM deliveries INDEXED BY deliveries_leased
		WHERE lease_expires > ? GROUP BY endpoint_id`
	qDue = `SELECT id, endpoint_id, next_attempt_at FROM deliveries
		WHERE status = 'pending' AND parked = 0 AND lease_expires IS NULL AND next_attempt_at <= ?1
		ORDER BY next_attempt_at, id LIMIT ?2`
	qDueAfter = `SELECT id, endpoint_id, next_attempt_at FROM deliveries
		WHERE status = 'pending' AND parked = 0 AND lease_expires IS NULL AND next_attempt_at <= ?1
		AND (next_attempt_at, id) > (?3, ?4)
		ORDER BY next_attempt_at, id LIMIT ?2`
	// Pending deliveries whose claim lapsed (its process died, or hung
	// past the lease): not in the due index, which holds the unleased.
	qLapsed = `SELECT id, endpoint_id, next_attempt_at FROM deliveries INDEXED BY deliveries_leased
		WHERE lease_expires <= ?1 AND status = 'pending' AND parked = 0
		ORDER BY lease_expires LIMIT ?2`
	qClaim = `UPDATE deliveries SET lease_token = ?, lease_expires = ?, parked = 0 WHERE id = ? RETURNING ` + deliveryCols
	qPark  = `UPDATE deliveries SET parked = 1 WHERE id = ?`
	// The endpoints with parked deliveries: a loose index scan, one probe
	// per endpoint however deep its backlog.
	qParkedEndpoints = `WITH RECURSIVE ep(id) AS (
		SELECT (SELECT min(endpoint_id) FROM deliveries WHERE status = 'pending' AND parked = 1)
		UNION ALL
		SELECT (SELECT min(endpoint_id) FROM deliveries WHERE status = 'pending' AND parked = 1 AND endpoint_id > ep.id)
		FROM ep WHERE ep.id IS NOT NULL)
		SELECT id FROM ep WHERE id IS NOT NULL`
	// The first n of an endpoint's queue of parked deliveries.
	qParkedOf = `SELECT id, next_attempt_at FROM deliveries WHERE endpoint_id = ? AND status = 'pending' AND parked = 1
		ORDER BY next_attempt_at, id LIMIT ?`
	// While the delivery is pending the attempt decides its state; if it
	// ended meanwhile, only a transition that overrides an end does (?9:
	// Transition.OverridesEnd).
	qRecord = `UPDATE deliveries SET
		attempt_count = max(attempt_count, ?1),
		last_response_status = ?2,
		status = CASE WHEN status = 'pending' OR ?9 THEN ?3 ELSE status END,
		reason = CASE WHEN status = 'pending' OR ?9 THEN ?4 ELSE reason END,
		next_attempt_at = CASE WHEN status = 'pending' OR ?9 THEN ?5 ELSE next_attempt_at END,
		manual = 0, lease_token = NULL, lease_expires = NULL, updated = ?6
		WHERE id = ?7 AND lease_token = ?8`
	qInsertAttempt = `INSERT INTO attempts (delivery_id, number, started_at, duration_ms, response_status, response_body, error, manual)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	qRelease = `UPDATE deliveries SET lease_token = NULL, lease_expires = NULL
		WHERE id = ? AND lease_token = ?`
	// A deferral moves a pending delivery's next attempt; one that ended
	// meanwhile (its endpoint was disabled) keeps its end.
	qDefer = `UPDATE deliveries SET lease_token = NULL, lease_expires = NULL,
			next_attempt_at = CASE WHEN status = 'pending' THEN ? ELSE next_attempt_at END
		WHERE id = ? AND lease_token = ?`
)

// qClaimTraced is qClaim with the event's traceparent, when tracing is on
// (ClaimRequest.Traceparents): off, a claim reads no event.
const qClaimTraced = qClaim + `, (SELECT traceparent FROM events WHERE id = deliveries.event_id)`

// qNextScheduled is the first attempt due after now.
const qNextScheduled = `SELECT min(next_attempt_at) FROM deliveries
	WHERE status = 'pending' AND parked = 0 AND lease_expires IS NULL AND next_attempt_at > ?`

// claimChunk is how many due deliveries a claim reads at a time.
const claimChunk = 200

// maxClaimScan bounds the due deliveries one claim reads (claimed or
// parked), so that one transaction stays short; the rest waits for the
// next claim.
const maxClaimScan = 5000

// ClaimDeliveries implements delivery.Queue. Due deliveries are read oldest
// first. One whose endpoint holds its cap of claims is parked instead of
// skipped again and again: a deep backlog on one endpoint is read once, and
// cannot keep another endpoint's due deliveries out of a batch. The parked
// deliveries are the endpoint's queue: each claim takes, oldest first, as
// many of an endpoint's parked deliveries as it has free slots (claims
// recorded, handed back or lapsed), and a new delivery to an endpoint with a
// queue joins it at once (see insertDeliveries).
func (s *Store) ClaimDeliveries(ctx context.Context, r webhooks.ClaimRequest) ([]*webhooks.Claim, error) {
	var claims []*webhooks.Claim
	err := s.inTxWith(ctx, lazy, func(tx *txn) error {
		if err := recordAttempts(ctx, tx, r.Records); err != nil || r.Limit <= 0 {
			return err
		}
		held, err := heldClaims(ctx, tx, r)
		if err != nil {
			return err
		}
		cands, err := parkedCandidates(ctx, tx, held, r)
		if err != nil {
			return err
		}
		if cands, err = lapsedCandidates(ctx, tx, r, cands); err != nil {
			return err
		}
		var park []candidate
		var lastDue int64
		var lastID string
		due := map[string]int{} // what the scan takes, per endpoint, beyond held
		for scanned, taken := 0, 0; taken < r.Limit && scanned < maxClaimScan; {
			var rows *sql.Rows
			if lastID == "" {
				rows, err = tx.QueryContext(ctx, qDue, ms(r.Now), claimChunk)
			} else {
				rows, err = tx.QueryContext(ctx, qDueAfter, ms(r.Now), claimChunk, lastDue, lastID)
			}
			if err != nil {
				return err
			}
			n := 0
			for taken < r.Limit && rows.Next() {
				var c candidate
				if err := rows.Scan(&c.id, &c.endpoint, &c.due); err != nil {
					rows.Close()
					return err
				}
				n, lastID, lastDue = n+1, c.id, c.due
				if r.PerEndpoint > 0 && held[c.endpoint]+due[c.endpoint] >= r.PerEndpoint {
					park = append(park, c)
					continue
				}
				due[c.endpoint]++
				taken++
				cands = append(cands, c)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			scanned += n
			if n < claimChunk {
				break // that was the last of the due deliveries
			}
		}
		for _, c := range park {
			tx.queues.mark(c.endpoint)
			if _, err := tx.ExecContext(ctx, qPark, c.id); err != nil {
				return err
			}
		}
		// Oldest due first, wherever it waited (an endpoint's queue or the
		// due index), within each endpoint's cap and the limit.
		slices.SortFunc(cands, func(a, b candidate) int { return cmp.Or(cmp.Compare(a.due, b.due), cmp.Compare(a.id, b.id)) })
		endpoints := map[string]*webhooks.Endpoint{}
		for _, c := range cands {
			if len(claims) == r.Limit {
				break
			}
			if r.PerEndpoint > 0 && held[c.endpoint] >= r.PerEndpoint {
				continue // over the cap: a parked one stays parked, a due one waits
			}
			held[c.endpoint]++
			d, traceparent, err := claimDelivery(ctx, tx, r, c.id)
			if err != nil {
				return err
			}
			if endpoints[d.EndpointID] == nil {
				// A deleted endpoint has no pending deliveries, so this
				// finds every claim's endpoint.
				if endpoints[d.EndpointID], err = findEndpoint(ctx, tx, d.EndpointID); err != nil {
					return err
				}
			}
			claims = append(claims, &webhooks.Claim{Delivery: d, Endpoint: endpoints[d.EndpointID], Token: r.Token, Traceparent: traceparent})
			if r.Hold != nil {
				r.Hold(d.EndpointID)
			}
		}
		return nil
	})
	return claims, err
}

// claimDelivery claims the delivery id for r, and returns it with its
// event's traceparent if r asks for it.
func claimDelivery(ctx context.Context, tx *txn, r webhooks.ClaimRequest, id string) (*webhooks.Delivery, string, error) {
	if !r.Traceparents {
		d, err := scanDelivery(tx.QueryRowContext(ctx, qClaim, r.Token, ms(r.LeaseUntil), id))
		return d, "", err
	}
	var s deliveryScan
	var traceparent sql.NullString
	if err := tx.QueryRowContext(ctx, qClaimTraced, r.Token, ms(r.LeaseUntil), id).Scan(append(s.dest(), &traceparent)...); err != nil {
		return nil, "", err
	}
	return s.delivery(), traceparent.String, nil
}

// candidate is a delivery a claim may take.
type candidate struct {
	id, endpoint string
	due          int64
}

// lapsedCandidates appends to cands up to r.Limit pending deliveries whose
// claims lapsed; the caps apply to them as to the others.
func lapsedCandidates(ctx context.Context, tx *txn, r webhooks.ClaimRequest, cands []candidate) ([]candidate, error) {
	rows, err := tx.QueryContext(ctx, qLapsed, ms(r.Now), r.Limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.id, &c.endpoint, &c.due); err != nil {
			return nil, err
		}
		cands = append(cands, c)
	}
	return cands, rows.Err()
}

// heldClaims counts the unexpired claims of each endpoint.
func heldClaims(ctx context.Context, tx *txn, r webhooks.ClaimRequest) (map[string]int, error) {
	held := map[string]int{}
	if r.PerEndpoint == 0 {
		return held, nil
	}
	rows, err := tx.QueryContext(ctx, qHeld, ms(r.Now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		held[id] = n
	}
	return held, rows.Err()
}

// parkedCandidates returns, for each endpoint with parked deliveries, as
// many of them, oldest due first, as it has free slots (all of them
// without a cap), r.Limit at most in all.
func parkedCandidates(ctx context.Context, tx *txn, held map[string]int, r webhooks.ClaimRequest) ([]candidate, error) {
	rows, err := tx.QueryContext(ctx, qParkedEndpoints)
	if err != nil {
		return nil, err
	}
	var endpoints []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		endpoints = append(endpoints, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []candidate
	for _, e := range endpoints {
		free := r.Limit
		if r.PerEndpoint > 0 {
			free = min(free, r.PerEndpoint-held[e])
		}
		if free <= 0 {
			continue
		}
		rows, err := tx.QueryContext(ctx, qParkedOf, e, free)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			c := candidate{endpoint: e}
			if err := rows.Scan(&c.id, &c.due); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RecordAttempts implements delivery.Queue.
func (s *Store) RecordAttempts(ctx context.Context, records []*webhooks.AttemptRecord) error {
	if len(records) == 0 {
		return nil
	}
	return s.inTxWith(ctx, lazy, func(tx *txn) error { return recordAttempts(ctx, tx, records) })
}

// recordAttempts stores records in tx: each attempt and its delivery's
// new state, if the delivery still holds the record's claim.
func recordAttempts(ctx context.Context, tx *txn, records []*webhooks.AttemptRecord) error {
	recorded := make([]*webhooks.AttemptRecord, 0, len(records))
	for _, r := range records {
		a, t := r.Attempt, r.Transition
		res, err := tx.ExecContext(ctx, qRecord, a.Number, nullInt(a.ResponseStatus), t.Status, nullString(t.Reason),
			ms(t.NextAttemptAt), ms(a.StartedAt.Add(a.Duration)), a.DeliveryID, r.Token, boolInt(t.OverridesEnd()))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue // the claim lapsed and another worker holds the delivery
		}
		if _, err := tx.ExecContext(ctx, qInsertAttempt, a.DeliveryID, a.Number, ms(a.StartedAt), a.Duration.Milliseconds(),
			nullInt(a.ResponseStatus), []byte(a.ResponseBody), nullString(a.Error), boolInt(a.Manual)); err != nil {
			return err
		}
		recorded = append(recorded, r)
	}
	return recordHealth(ctx, tx, recorded)
}

// Each endpoint's streak of failures, read and written in the write
// transaction that records its attempts. A healthy endpoint's 2xx reads
// one row and writes nothing.
const (
	qStreak       = `SELECT failure_streak, failing_since FROM endpoints WHERE id = ?`
	qUpdateStreak = `UPDATE endpoints SET failure_streak = ?, failing_since = ? WHERE id = ?`
)

// recordHealth applies the recorded attempts to their endpoints' streaks
// and gives each endpoint's last record its Health (SPEC 14).
func recordHealth(ctx context.Context, tx *txn, recorded []*webhooks.AttemptRecord) error {
	for _, step := range webhooks.StreakSteps(recorded) {
		var old int
		var since sql.NullInt64
		err := tx.QueryRowContext(ctx, qStreak, step.EndpointID).Scan(&old, &since)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		} else if err != nil {
			return err
		}
		h := step.Apply(old, fromMS(since))
		if h.After != old || !h.FailingSince.Equal(fromMS(since)) {
			if _, err := tx.ExecContext(ctx, qUpdateStreak, h.After, ms(h.FailingSince), step.EndpointID); err != nil {
				return err
			}
		}
		recorded[step.Last].Health = &h
	}
	return nil
}

// ReleaseClaims implements delivery.Queue.
func (s *Store) ReleaseClaims(ctx context.Context, token string, ids []string) error {
	return s.inTxWith(ctx, lazy, func(tx *txn) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, qRelease, id, token); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeferClaims implements delivery.Queue.
func (s *Store) DeferClaims(ctx context.Context, deferrals []webhooks.Deferral) error {
	return s.inTxWith(ctx, lazy, func(tx *txn) error {
		for _, d := range deferrals {
			if _, err := tx.ExecContext(ctx, qDefer, ms(d.Until), d.DeliveryID, d.Token); err != nil {
				return err
			}
		}
		return nil
	})
}

// NextScheduled implements delivery.Queue.
func (s *Store) NextScheduled(ctx context.Context, now time.Time) (time.Time, error) {
	var next sql.NullInt64
	err := s.read.QueryRowContext(ctx, qNextScheduled, ms(now)).Scan(&next)
	return fromMS(next), dbError(err)
}

// prefixed qualifies a column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
