package postgres

import (
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// CountRetrying implements app.Store. It reads the endpoints' pending
// deliveries of the window through their status index, not the others.
func (s *Store) CountRetrying(ctx context.Context, endpointIDs []string, since time.Time, bucket time.Duration) ([]webhooks.DeliveryCount, error) {
	if len(endpointIDs) == 0 {
		return nil, nil
	}
	counts, err := queryAll(ctx, s.pool, func(r scanner) (webhooks.DeliveryCount, error) {
		c := webhooks.DeliveryCount{Status: webhooks.DeliveryPending}
		err := r.Scan(&c.EndpointID, &c.Bucket, &c.N)
		return c, err
	}, `SELECT endpoint_id::text, floor(extract(epoch FROM created - $2) * 1000 / $3)::int, count(*)::int FROM deliveries
		WHERE endpoint_id = ANY ($1::uuid[]) AND status = 'pending' AND created >= $2 AND attempt_count > 0
		GROUP BY 1, 2`, uuids(endpointIDs), ts(since), bucket.Milliseconds())
	if err != nil {
		return nil, txError(err)
	}
	return counts, nil
}
