package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/factuarea/webhooks"
)

// The due deliveries (SPEC 14's backlog), by the moment each came due: the
// queued ones no claim holds and that wait behind none of their chain,
// parked and deferred ones too (waiting for a free slot or the rate limit
// does not move that moment). A lapsed claim's delivery is due again
// since its lease ended.
const (
	qBacklog   = `FROM queue WHERE due IS NOT NULL AND NOT waiting AND lease_expires IS NULL AND since <= $1`
	qLapsedDue = `FROM queue WHERE lease_expires <= $1 AND due IS NOT NULL`
)

// QueueStats implements metrics.Queue.
func (s *Store) QueueStats(ctx context.Context, now time.Time) (webhooks.QueueStats, error) {
	var st webhooks.QueueStats
	var oldest *time.Time
	err := s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) `+qBacklog+`) + (SELECT count(*) `+qLapsedDue+`),
		least((SELECT min(since) `+qBacklog+`), (SELECT min(lease_expires) `+qLapsedDue+`)),
		(SELECT count(*) FROM queue WHERE lease_expires > $1),
		(SELECT count(*) FROM outbox),
		(SELECT count(*) FROM erasures)`, ts(now)).
		Scan(&st.Due, &oldest, &st.InFlight, &st.Outbox, &st.Erasures)
	if oldest != nil {
		st.OldestDue = oldest.UTC()
	}
	if err != nil {
		return read(st, err)
	}
	// The failing endpoints and the disabled ones by reason: a scan of
	// the endpoints, once per scrape.
	rows, err := s.pool.Query(ctx, `SELECT status, coalesce(disabled_reason, 'manual'), failure_streak >= $1, count(*)
		FROM endpoints WHERE deleted IS NULL GROUP BY 1, 2, 3`, webhooks.FailingAfter)
	if err != nil {
		return read(st, err)
	}
	st.Disabled = map[string]int{}
	var status, reason string
	var failing bool
	var n int
	_, err = pgx.ForEachRow(rows, []any{&status, &reason, &failing, &n}, func() error {
		switch {
		case status == webhooks.EndpointDisabled:
			st.Disabled[reason] += n
		case failing:
			st.Failing += n
		}
		return nil
	})
	return read(st, err)
}

// qPurgeLock takes the purge's lock of the store's schema, if it is free:
// stores on other schemas of the database purge their own data.
const qPurgeLock = `SELECT pg_try_advisory_xact_lock($1, hashtext(current_schema()))`

// Purge implements service.Backend. One process purges a schema at a time:
// the others find the advisory lock taken and return at once. Each call is one short
// transaction over at most limit events, so it holds no lock for long.
func (s *Store) Purge(ctx context.Context, before, now time.Time, limit int) (int, error) {
	n := 0
	err := s.inTx(ctx, func(tx *txn) error {
		var mine bool
		if err := tx.QueryRow(ctx, qPurgeLock, lockPurge).Scan(&mine); err != nil || !mine {
			return err
		}
		if err := lazyCommit(ctx, tx); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id FROM events e WHERE created < $1
			AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
			ORDER BY created LIMIT $2`, ts(before), limit)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		n = len(ids)
		var b pgx.Batch
		if n > 0 {
			events := uuids(ids)
			// Deliveries are locked in id order first, as every statement
			// that changes several deliveries does, so no deadlock.
			b.Queue(`DELETE FROM deliveries d USING (
				SELECT id FROM deliveries WHERE event_id = ANY ($1::uuid[]) ORDER BY id FOR UPDATE) l
				WHERE d.id = l.id`, events) // attempts and queue rows go by ON DELETE CASCADE
			b.Queue(`DELETE FROM bodies WHERE event_id = ANY ($1::uuid[])`, events)
			b.Queue(`DELETE FROM idempotency_keys WHERE event_id = ANY ($1::uuid[])`, events)
			b.Queue(`DELETE FROM events WHERE id = ANY ($1::uuid[])`, events)
		}
		b.Queue(`DELETE FROM idempotency_keys WHERE key IN (
			SELECT key FROM idempotency_keys WHERE created < $1 LIMIT $2)`, ts(now.Add(-webhooks.IdempotencyWindow)), limit)
		return tx.SendBatch(ctx, &b).Close()
	})
	return n, err
}

// Backlogs implements driver.Maintenance: one pass over the due deliveries.
func (s *Store) Backlogs(ctx context.Context, now, cutoff time.Time) ([]webhooks.Backlog, []string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id::text FROM endpoints WHERE backlogged_since IS NOT NULL AND deleted IS NULL`)
	if err != nil {
		return nil, nil, txError(err)
	}
	alerted, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, nil, txError(err)
	}
	rows, err = s.pool.Query(ctx, `SELECT endpoint_id::text, min(t), count(*) FROM (
			SELECT endpoint_id, since AS t `+qBacklog+` UNION ALL SELECT endpoint_id, lease_expires `+qLapsedDue+`) d
		GROUP BY endpoint_id HAVING min(t) <= $2 OR endpoint_id = ANY ($3::uuid[])`, ts(now), ts(cutoff), uuids(alerted))
	if err != nil {
		return nil, nil, txError(err)
	}
	var backlogs []webhooks.Backlog
	var b webhooks.Backlog
	_, err = pgx.ForEachRow(rows, []any{&b.EndpointID, &b.OldestDue, &b.Due}, func() error {
		b.OldestDue = b.OldestDue.UTC()
		backlogs = append(backlogs, b)
		return nil
	})
	return backlogs, alerted, txError(err)
}

// Backlog implements driver.Maintenance.
func (s *Store) Backlog(ctx context.Context, endpointID string, now time.Time) (webhooks.Backlog, error) {
	b := webhooks.Backlog{EndpointID: endpointID}
	if !webhooks.ValidID(endpointID) {
		return b, nil
	}
	var oldest *time.Time
	err := s.pool.QueryRow(ctx, `SELECT min(t), count(*) FROM (
			SELECT since AS t `+qBacklog+` AND endpoint_id = $2
			UNION ALL SELECT lease_expires `+qLapsedDue+` AND endpoint_id = $2) d`, ts(now), endpointID).Scan(&oldest, &b.Due)
	if oldest != nil {
		b.OldestDue = oldest.UTC()
	}
	return read(b, err)
}

// ToProbe implements driver.Maintenance.
func (s *Store) ToProbe(ctx context.Context, since, probeBefore time.Time, limit int) ([]*webhooks.Endpoint, error) {
	return read(queryAll(ctx, s.pool, scanEndpoint, `SELECT `+endpointCols+` FROM endpoints
		WHERE status = 'disabled' AND disabled_reason = 'failing' AND auto_recover AND deleted IS NULL
		AND disabled_at >= $1 AND disabled_at <= $2 AND (probed_at IS NULL OR probed_at <= $2)
		ORDER BY disabled_at LIMIT $3`, ts(since), ts(probeBefore), limit))
}
