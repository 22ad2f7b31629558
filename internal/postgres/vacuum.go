package postgres

import (
	"context"
	"fmt"
	"time"
)

// What Vacuum vacuums, and how often.
var vacuums = []struct {
	table string
	every time.Duration
}{
	// The work queue: each queued delivery is inserted, claimed, and
	// deleted or rescheduled, and every change leaves a dead row version
	// behind, whose entries in the queue's indexes each claim reads through
	// until a vacuum removes them. Autovacuum wakes up once a minute at
	// best, by which time a busy queue has hundreds of thousands; the queue
	// is small, so a vacuum every second costs little; the room of its
	// indexes is about that second's changes (see deliveries below).
	{"queue", time.Second},
	// The outbox: few rows, each inserted and deleted once.
	{"outbox", time.Minute},
	// The deliveries: one dead version per attempt (its record), which
	// nothing on the engine's path reads. The record is a HOT update
	// (migration 0018): no index entry is added, and a later visit of the
	// page may prune the dead version, but its room goes to new rows only
	// once a vacuum has told the free space map; until then every row
	// takes the room of two. A vacuum reads only the pages changed since
	// the last (the visibility map), and skips the indexes while the
	// pages with dead entries (the records that were not HOT) are under
	// 2 % of the table's, which a few seconds of records are once the table
	// is past its first thousands of pages. Every 5 s instead of every
	// minute: 912 -> 618 bytes per event in scripts/footprint's run, and no
	// CPU per delivery that three alternating bench runs could tell apart.
	// Every 2 s, and the queue every 1 s instead of 2: 2,064 -> 1,964 bytes
	// per event in that run, and the service's and PostgreSQL's CPU per
	// delivery flat out 249 -> 240 µs (medians of three alternating runs).
	{"deliveries", 2 * time.Second},
	// The relay's mailbox: each attempt to a relay endpoint inserts,
	// takes, answers and deletes one row, and an idle connection looks
	// at the endpoint's rows every 50 ms.
	{"relay_requests", 10 * time.Second},
}

// VacuumInterval is how often Vacuum should be called: the shortest of
// its tables' periods.
const VacuumInterval = time.Second

// Vacuum vacuums each table whose period has passed since its last vacuum
// (by any process, or by autovacuum): every process calls it, but a table
// needs one vacuum per period, not one per process, and SKIP_LOCKED lets
// one that is vacuuming now finish alone.
func (s *Store) Vacuum(ctx context.Context) error {
	for _, v := range vacuums {
		var due bool
		err := s.pool.QueryRow(ctx, `SELECT coalesce(greatest(last_vacuum, last_autovacuum) < now() - $2 * interval '1 millisecond', true)
			FROM pg_stat_user_tables WHERE relid = $1::regclass`, v.table, (v.every * 9 / 10).Milliseconds()).Scan(&due)
		if err == nil && due {
			_, err = s.pool.Exec(ctx, `VACUUM (SKIP_LOCKED) `+v.table)
		}
		if err != nil {
			return fmt.Errorf("postgres: vacuum %s: %w", v.table, err)
		}
	}
	return nil
}
