package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// CountRetrying implements app.Store. The counts read the endpoints'
// pending deliveries of the window through their status index, not the
// others; the rest reads, per endpoint, the first delivery in that index
// that waits for a retry (the oldest), its first attempt, and the newest
// delivered delivery.
func (s *Store) CountRetrying(ctx context.Context, endpointIDs []string, since time.Time, bucket time.Duration) ([]webhooks.DeliveryCount, []app.Retries, error) {
	if len(endpointIDs) == 0 {
		return nil, nil, nil
	}
	counts, err := queryAll(ctx, s.pool, func(r scanner) (webhooks.DeliveryCount, error) {
		c := webhooks.DeliveryCount{Status: webhooks.DeliveryPending}
		err := r.Scan(&c.EndpointID, &c.Bucket, &c.N)
		return c, err
	}, `SELECT endpoint_id::text, floor(extract(epoch FROM created - $2) * 1000 / $3)::int, count(*)::int FROM deliveries
		WHERE endpoint_id = ANY ($1::uuid[]) AND status = 'pending' AND created >= $2 AND attempt_count > 0
		GROUP BY 1, 2`, uuids(endpointIDs), ts(since), bucket.Milliseconds())
	if err != nil {
		return nil, nil, txError(err)
	}
	retries, err := queryAll(ctx, s.pool, func(r scanner) (app.Retries, error) {
		var rt app.Retries
		var first, delivered pgtype.Timestamptz
		err := r.Scan(&rt.EndpointID, &first, &delivered)
		rt.FirstFailed, rt.LastDelivered = fromTS(first), fromTS(delivered)
		return rt, err
	}, `SELECT ep.id::text, a.started_at, l.updated
		FROM unnest($1::uuid[]) AS ep (id)
		CROSS JOIN LATERAL (SELECT o.id FROM deliveries o
			WHERE o.endpoint_id = ep.id AND o.status = 'pending' AND o.attempt_count > 0 AND NOT o.manual
			ORDER BY o.created, o.id LIMIT 1) oldest
		JOIN attempts a ON a.delivery_id = oldest.id AND a.number = 1
		LEFT JOIN LATERAL (SELECT d.updated FROM deliveries d
			WHERE d.endpoint_id = ep.id AND d.status = 'delivered' ORDER BY d.created DESC, d.id DESC LIMIT 1) l ON true`,
		uuids(endpointIDs))
	if err != nil {
		return nil, nil, txError(err)
	}
	return counts, retries, nil
}
