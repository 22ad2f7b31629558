package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

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
		return nil, nil, dbError(err)
	}
	args = args[:0]
	for _, id := range endpointIDs {
		args = append(args, id)
	}
	retries, err := queryAll(ctx, s.read, func(r scanner) (app.Retries, error) {
		var rt app.Retries
		var first, delivered sql.NullInt64
		err := r.Scan(&rt.EndpointID, &first, &delivered)
		rt.FirstFailed, rt.LastDelivered = fromMS(first), fromMS(delivered)
		return rt, err
	}, `WITH ep(id) AS (VALUES `+strings.TrimSuffix(strings.Repeat("(?), ", len(endpointIDs)), ", ")+`),
		oldest AS (SELECT ep.id AS endpoint_id, (SELECT o.id FROM deliveries o
			WHERE o.endpoint_id = ep.id AND o.status = 'pending' AND o.attempt_count > 0 AND o.manual = 0
			ORDER BY o.created, o.id LIMIT 1) AS delivery_id FROM ep)
		SELECT oldest.endpoint_id, a.started_at, (SELECT l.updated FROM deliveries l
			WHERE l.endpoint_id = oldest.endpoint_id AND l.status = 'delivered' ORDER BY l.created DESC, l.id DESC LIMIT 1)
		FROM oldest JOIN attempts a ON a.delivery_id = oldest.delivery_id AND a.number = 1`, args...)
	if err != nil {
		return nil, nil, dbError(err)
	}
	return counts, retries, nil
}
