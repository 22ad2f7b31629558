package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// ClaimDeliveries implements webhooks.Store.
func (s *Store) ClaimDeliveries(ctx context.Context, r webhooks.ClaimRequest) ([]*webhooks.Claim, error) {
	var claims []*webhooks.Claim
	err := s.inTxWith(ctx, lazy, func(tx *sql.Tx) error {
		exclude := append([]string(nil), r.Exclude...)
		held := map[string]int{}
		if r.PerEndpoint > 0 {
			rows, err := tx.QueryContext(ctx, `SELECT endpoint_id, count(*) FROM deliveries WHERE lease_expires > ? GROUP BY endpoint_id`, ms(r.Now))
			if err != nil {
				return err
			}
			for rows.Next() {
				var id string
				var n int
				if err := rows.Scan(&id, &n); err != nil {
					rows.Close()
					return err
				}
				held[id] = n
				if n >= r.PerEndpoint {
					exclude = append(exclude, id)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		// Due deliveries are scanned in order, a chunk at a time. Endpoints
		// at their cap are skipped in the scan itself, and one that reaches
		// its cap during the scan is left out of the next chunk, so a deep
		// backlog on one endpoint costs one chunk, and cannot keep another
		// endpoint's due deliveries out of a batch that has room for them.
		scan := r.Limit
		if r.PerEndpoint > 0 {
			scan *= 4
		}
		var ids []any
		var lastDue int64
		var lastID string
		for len(ids) < r.Limit {
			where := `status = 'pending' AND next_attempt_at <= ? AND (lease_expires IS NULL OR lease_expires <= ?)`
			args := []any{ms(r.Now), ms(r.Now)}
			if len(exclude) > 0 {
				where += ` AND endpoint_id NOT IN (` + placeholders(len(exclude)) + `)`
				for _, id := range exclude {
					args = append(args, id)
				}
			}
			if lastID != "" {
				where += ` AND (next_attempt_at, id) > (?, ?)`
				args = append(args, lastDue, lastID)
			}
			rows, err := tx.QueryContext(ctx, `SELECT id, endpoint_id, next_attempt_at FROM deliveries WHERE `+where+`
				ORDER BY next_attempt_at, id LIMIT ?`, append(args, scan)...)
			if err != nil {
				return err
			}
			n := 0
			for rows.Next() && len(ids) < r.Limit {
				var id, endpointID string
				if err := rows.Scan(&id, &endpointID, &lastDue); err != nil {
					rows.Close()
					return err
				}
				n, lastID = n+1, id
				if r.PerEndpoint > 0 && held[endpointID] >= r.PerEndpoint {
					continue
				}
				held[endpointID]++
				ids = append(ids, id)
				if r.PerEndpoint > 0 && held[endpointID] >= r.PerEndpoint {
					exclude = append(exclude, endpointID)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if n < scan {
				break // the chunk was the last of the due deliveries
			}
		}
		if len(ids) == 0 {
			return nil
		}
		order := make(map[string]int, len(ids))
		for i, id := range ids {
			order[id.(string)] = i
		}
		rows, err := tx.QueryContext(ctx, `UPDATE deliveries SET lease_token = ?, lease_expires = ?
			WHERE id IN (`+placeholders(len(ids))+`) RETURNING `+deliveryCols,
			append([]any{r.Token, ms(r.LeaseUntil)}, ids...)...)
		if err != nil {
			return err
		}
		endpoints := map[string]*webhooks.Endpoint{}
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				rows.Close()
				return err
			}
			endpoints[d.EndpointID] = nil
			claims = append(claims, &webhooks.Claim{Delivery: d, Token: r.Token})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		// RETURNING comes in the table's order: put the claims back in the
		// order they were chosen, oldest due first.
		slices.SortFunc(claims, func(a, b *webhooks.Claim) int { return order[a.Delivery.ID] - order[b.Delivery.ID] })
		for id := range endpoints {
			// A deleted endpoint has no pending deliveries, so this finds
			// every claim's endpoint.
			if endpoints[id], err = findEndpoint(ctx, tx, id); err != nil {
				return err
			}
		}
		for _, c := range claims {
			c.Endpoint = endpoints[c.Delivery.EndpointID]
		}
		return nil
	})
	return claims, err
}

// RecordAttempts implements webhooks.Store.
func (s *Store) RecordAttempts(ctx context.Context, records []*webhooks.AttemptRecord) error {
	if len(records) == 0 {
		return nil
	}
	return s.inTxWith(ctx, lazy, func(tx *sql.Tx) error {
		// While the delivery is pending the attempt decides its state. If its
		// endpoint was disabled or deleted during the attempt, the delivery
		// already ended failed: only a success still changes that.
		update, err := tx.PrepareContext(ctx, `UPDATE deliveries SET
			attempt_count = max(attempt_count, ?1),
			last_response_status = ?2,
			status = CASE WHEN status = 'pending' OR ?3 = 'delivered' THEN ?3 ELSE status END,
			reason = CASE WHEN status = 'pending' OR ?3 = 'delivered' THEN ?4 ELSE reason END,
			next_attempt_at = CASE WHEN status = 'pending' OR ?3 = 'delivered' THEN ?5 ELSE next_attempt_at END,
			manual = 0, lease_token = NULL, lease_expires = NULL, updated = ?6
			WHERE id = ?7 AND lease_token = ?8`)
		if err != nil {
			return err
		}
		defer update.Close()
		insert, err := tx.PrepareContext(ctx, `INSERT INTO attempts (delivery_id, number, started_at, duration_ms, response_status, response_body, error, manual)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
		if err != nil {
			return err
		}
		defer insert.Close()
		for _, r := range records {
			a, t := r.Attempt, r.Transition
			res, err := update.ExecContext(ctx, a.Number, nullInt(a.ResponseStatus), t.Status, nullString(t.Reason),
				ms(t.NextAttemptAt), ms(a.StartedAt.Add(a.Duration)), a.DeliveryID, r.Token)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue // the claim lapsed and another worker holds the delivery
			}
			if _, err := insert.ExecContext(ctx, a.DeliveryID, a.Number, ms(a.StartedAt), a.Duration.Milliseconds(),
				nullInt(a.ResponseStatus), []byte(a.ResponseBody), nullString(a.Error), boolInt(a.Manual)); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReleaseClaims implements webhooks.Store.
func (s *Store) ReleaseClaims(ctx context.Context, token string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{token}
	for _, id := range ids {
		args = append(args, id)
	}
	return s.inTxWith(ctx, lazy, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE deliveries SET lease_token = NULL, lease_expires = NULL
			WHERE lease_token = ? AND id IN (`+placeholders(len(ids))+`)`, args...)
		return err
	})
}

// NextScheduled implements webhooks.Store.
func (s *Store) NextScheduled(ctx context.Context, now time.Time) (time.Time, error) {
	var next sql.NullInt64
	err := s.read.QueryRowContext(ctx, `SELECT min(next_attempt_at) FROM deliveries WHERE status = 'pending' AND next_attempt_at > ?`, ms(now)).Scan(&next)
	return fromMS(next), err
}

// prefixed qualifies a column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
