package sqlite

import (
	"context"
	"database/sql"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// QueueStats implements metrics.Queue. Parked deliveries are due too: they
// wait for a free slot of their endpoint.
func (s *Store) QueueStats(ctx context.Context, now time.Time) (webhooks.QueueStats, error) {
	var st webhooks.QueueStats
	var waiting, parked int
	var oldestWaiting, oldestParked sql.NullInt64
	err := s.read.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM deliveries WHERE status = 'pending' AND parked = 0 AND lease_expires IS NULL AND next_attempt_at <= ?1)
			+ (SELECT count(*) FROM deliveries INDEXED BY deliveries_leased WHERE lease_expires <= ?1 AND status = 'pending'),
		(SELECT min(t) FROM (
			SELECT min(next_attempt_at) AS t FROM deliveries WHERE status = 'pending' AND parked = 0 AND lease_expires IS NULL AND next_attempt_at <= ?1
			UNION ALL SELECT min(next_attempt_at) FROM deliveries INDEXED BY deliveries_leased WHERE lease_expires <= ?1 AND status = 'pending')),
		(SELECT count(*) FROM deliveries WHERE status = 'pending' AND parked = 1),
		(SELECT min(next_attempt_at) FROM deliveries WHERE status = 'pending' AND parked = 1),
		(SELECT count(*) FROM deliveries INDEXED BY deliveries_leased WHERE lease_expires > ?1),
		(SELECT count(*) FROM outbox),
		(SELECT count(*) FROM erasures)`, ms(now)).
		Scan(&waiting, &oldestWaiting, &parked, &oldestParked, &st.InFlight, &st.Outbox, &st.Erasures)
	err = dbError(err)
	st.Due = waiting + parked
	st.OldestDue = fromMS(oldestWaiting)
	if p := fromMS(oldestParked); !p.IsZero() && (st.OldestDue.IsZero() || p.Before(st.OldestDue)) {
		st.OldestDue = p
	}
	if err != nil {
		return st, err
	}
	st.Failing, st.Disabled, err = endpointHealth(ctx, s.read)
	return st, dbError(err)
}

// endpointHealth counts the failing endpoints and the disabled ones by
// reason: a scan of the endpoints, once per scrape.
func endpointHealth(ctx context.Context, q querier) (int, map[string]int, error) {
	rows, err := q.QueryContext(ctx, `SELECT status, coalesce(disabled_reason, 'manual'), failure_streak >= ?, count(*)
		FROM endpoints WHERE deleted IS NULL GROUP BY 1, 2, 3`, webhooks.FailingAfter)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	failing, disabled := 0, map[string]int{}
	for rows.Next() {
		var status, reason string
		var isFailing bool
		var n int
		if err := rows.Scan(&status, &reason, &isFailing, &n); err != nil {
			return 0, nil, err
		}
		switch {
		case status == webhooks.EndpointDisabled:
			disabled[reason] += n
		case isFailing:
			failing += n
		}
	}
	return failing, disabled, rows.Err()
}

// Purge implements service.Backend. One process owns a SQLite file, so no
// other purge can run at the same time.
func (s *Store) Purge(ctx context.Context, before, now time.Time, limit int) (int, error) {
	n := 0
	err := s.inTxWith(ctx, lazy, func(tx *txn) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM events e WHERE created < ?
			AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
			ORDER BY created LIMIT ?`, ms(before), limit)
		if err != nil {
			return err
		}
		var ids []any
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) > 0 {
			in := `(` + placeholders(len(ids)) + `)`
			for _, q := range []string{
				`DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id IN ` + in + `)`,
				`DELETE FROM deliveries WHERE event_id IN ` + in,
				`DELETE FROM idempotency_keys WHERE event_id IN ` + in,
				`DELETE FROM events WHERE id IN ` + in,
			} {
				if _, err := tx.ExecContext(ctx, q, ids...); err != nil {
					return err
				}
			}
		}
		n = len(ids)
		_, err = tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE key IN (
			SELECT key FROM idempotency_keys WHERE created < ? LIMIT ?)`, ms(now.Add(-webhooks.IdempotencyWindow)), limit)
		return err
	})
	return n, err
}
