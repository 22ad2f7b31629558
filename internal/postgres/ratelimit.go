package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/factuarea/webhooks"
)

// Reserve implements delivery.Limiter for every process on the database
// (SPEC 14): an endpoint's next free start is a row of endpoint_rates, and
// each attempt takes it and moves it one interval on, in one statement
// (the row's lock orders the processes). A start further than within from
// now is not taken; the second statement reads it, for the engine to hand
// the delivery back until then.
func (s *Store) Reserve(ctx context.Context, endpointID string, perSecond int, now time.Time, within time.Duration) (time.Time, bool, error) {
	interval := webhooks.RateInterval(perSecond).Microseconds()
	var start time.Time
	err := s.pool.QueryRow(ctx, `INSERT INTO endpoint_rates AS r (endpoint_id, next_start)
			VALUES ($1, $2::timestamptz + $3 * interval '1 microsecond')
		ON CONFLICT (endpoint_id) DO UPDATE SET next_start = greatest(r.next_start, $2) + $3 * interval '1 microsecond'
			WHERE greatest(r.next_start, $2) <= $2::timestamptz + $4 * interval '1 microsecond'
		RETURNING next_start - $3 * interval '1 microsecond'`,
		endpointID, now, interval, within.Microseconds()).Scan(&start)
	if err == nil {
		return start.UTC(), true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, txError(err)
	}
	err = s.pool.QueryRow(ctx, `SELECT next_start FROM endpoint_rates WHERE endpoint_id = $1`, endpointID).Scan(&start)
	if err != nil {
		return time.Time{}, false, txError(err)
	}
	return start.UTC(), false, nil
}
