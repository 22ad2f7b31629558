package sqlite

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
	args := []any{ms(since), bucket.Milliseconds()}
	for _, id := range endpointIDs {
		args = append(args, id)
	}
	args = append(args, ms(since))
	counts, err := queryAll(ctx, s.read, func(r scanner) (webhooks.DeliveryCount, error) {
		c := webhooks.DeliveryCount{Status: webhooks.DeliveryPending}
		err := r.Scan(&c.EndpointID, &c.Bucket, &c.N)
		return c, err
	}, `SELECT endpoint_id, (created - ?) / ?, count(*) FROM deliveries
		WHERE endpoint_id IN (`+placeholders(len(endpointIDs))+`) AND status = 'pending' AND created >= ? AND attempt_count > 0
		GROUP BY 1, 2`, args...)
	if err != nil {
		return nil, dbError(err)
	}
	return counts, nil
}
