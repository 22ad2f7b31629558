package sqlite

import (
	"context"
	"database/sql"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// The due deliveries (SPEC 14's backlog), by the moment each came due: the
// pending ones no claim holds and that wait behind none of their chain,
// parked and deferred ones too (waiting for a free slot or the rate limit
// does not move that moment). A lapsed claim's delivery is due again
// since its lease ended.
const (
	qBacklog = `FROM deliveries INDEXED BY deliveries_backlog
		WHERE status = 'p' AND lease_expires IS NULL AND waiting_for IS NULL AND due_since <= ?1`
	qLapsedDue = `FROM deliveries INDEXED BY deliveries_leased WHERE lease_expires <= ?1 AND status = 'p'`
)

// QueueStats implements metrics.Queue.
func (s *Store) QueueStats(ctx context.Context, now time.Time) (webhooks.QueueStats, error) {
	var st webhooks.QueueStats
	var oldest sql.NullInt64
	err := s.read.QueryRowContext(ctx, `SELECT
		(SELECT count(*) `+qBacklog+`) + (SELECT count(*) `+qLapsedDue+`),
		(SELECT min(t) FROM (SELECT min(due_since) AS t `+qBacklog+` UNION ALL SELECT min(lease_expires) `+qLapsedDue+`)),
		(SELECT count(*) FROM deliveries INDEXED BY deliveries_leased WHERE lease_expires > ?1),
		(SELECT count(*) FROM outbox),
		(SELECT count(*) FROM erasures)`, ms(now)).
		Scan(&st.Due, &oldest, &st.InFlight, &st.Outbox, &st.Erasures)
	if err != nil {
		return st, dbError(err)
	}
	st.OldestDue = fromMS(oldest)
	st.Failing, st.Disabled, err = endpointHealth(ctx, s.read)
	return st, dbError(err)
}

// Backlogs implements driver.Maintenance: one pass over the due deliveries.
func (s *Store) Backlogs(ctx context.Context, now, cutoff time.Time) ([]webhooks.Backlog, []string, error) {
	alerted, err := queryAll(ctx, s.read, func(r scanner) (string, error) {
		var id string
		return id, r.Scan((*dbID)(&id))
	}, `SELECT id FROM endpoints INDEXED BY endpoints_backlogged WHERE backlogged_since IS NOT NULL AND deleted IS NULL`)
	if err != nil {
		return nil, nil, dbError(err)
	}
	backlogs, err := queryAll(ctx, s.read, func(r scanner) (webhooks.Backlog, error) {
		var b webhooks.Backlog
		var oldest sql.NullInt64
		err := r.Scan((*dbID)(&b.EndpointID), &oldest, &b.Due)
		b.OldestDue = fromMS(oldest)
		return b, err
	}, `SELECT endpoint_id, min(t), count(*) FROM (
			SELECT endpoint_id, due_since AS t `+qBacklog+` UNION ALL SELECT endpoint_id, lease_expires `+qLapsedDue+`)
		GROUP BY endpoint_id HAVING min(t) <= ?2 OR endpoint_id IN (`+numbered(3, len(alerted))+`)`,
		append([]any{ms(now), ms(cutoff)}, idArgs(alerted)...)...)
	return backlogs, alerted, dbError(err)
}

// Backlog implements driver.Maintenance.
func (s *Store) Backlog(ctx context.Context, endpointID string, now time.Time) (webhooks.Backlog, error) {
	b := webhooks.Backlog{EndpointID: endpointID}
	var oldest sql.NullInt64
	err := s.read.QueryRowContext(ctx, `SELECT min(t), count(*) FROM (
			SELECT due_since AS t `+qBacklog+` AND endpoint_id = ?2
			UNION ALL SELECT lease_expires `+qLapsedDue+` AND endpoint_id = ?2)`, ms(now), dbID(endpointID)).Scan(&oldest, &b.Due)
	b.OldestDue = fromMS(oldest)
	return b, dbError(err)
}

// ToProbe implements driver.Maintenance.
func (s *Store) ToProbe(ctx context.Context, since, probeBefore time.Time, limit int) ([]*webhooks.Endpoint, error) {
	return read(queryAll(ctx, s.read, scanEndpoint, `SELECT `+endpointCols+` FROM endpoints INDEXED BY endpoints_to_probe
		WHERE status = 'disabled' AND disabled_reason = 'failing' AND auto_recover = 1 AND deleted IS NULL
		AND disabled_at >= ?1 AND disabled_at <= ?2 AND (probed_at IS NULL OR probed_at <= ?2)
		ORDER BY disabled_at LIMIT ?3`, ms(since), ms(probeBefore), limit))
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
			AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status = 'p')
			ORDER BY created LIMIT ?`, ms(before), limit)
		if err != nil {
			return err
		}
		var ids []any
		for rows.Next() {
			var id dbID
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
				`DELETE FROM bodies WHERE event_id IN ` + in,
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
