package postgres

import (
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// CountRetrying implements app.Store. It reads the endpoints' pending
// deliveries of the window through their status index, not the others.
func (s *Store) CountRetrying(ctx context.Context, endpointIDs []string, since time.Time, bucket time.Duration) ([]webhooks.DeliveryCount, error) {
	return s.countDeliveries(ctx, endpointIDs, since, bucket, `status = 'pending' AND attempt_count > 0 AND NOT manual`)
}
