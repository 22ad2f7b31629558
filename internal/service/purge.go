package service

import (
	"context"
	"time"
)

// Retention defaults.
const (
	DefaultRetention     = 90 * 24 * time.Hour
	DefaultPurgeInterval = 10 * time.Minute
	// purgeBatch bounds one purge transaction, so that it holds its locks
	// for milliseconds, not minutes.
	purgeBatch = 500
)

// purge deletes, every PurgeInterval, the events (with their deliveries and
// attempts) older than the retention, in small batches with a pause
// between them, until none is left. With PostgreSQL one process purges at a
// time; the others' calls return at once.
func (s *Service) purge(ctx context.Context) {
	t := time.NewTimer(time.Minute) // not at start: let a restart settle
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		total := 0
		for ctx.Err() == nil {
			now := s.cfg.Now()
			n, err := s.Store.Purge(ctx, now.Add(-s.cfg.Retention), now, purgeBatch)
			if err != nil {
				if ctx.Err() == nil {
					s.cfg.Logger.Error("purge failed", "err", err)
				}
				break
			}
			total += n
			if n < purgeBatch {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
		if total > 0 {
			s.cfg.Logger.Info("purged events older than the retention", "events", total, "retention", s.cfg.Retention.String())
		}
		t.Reset(s.cfg.PurgeInterval)
	}
}
