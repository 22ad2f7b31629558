package driver

import (
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Maintenance is what the service's background work and its metrics need
// of a backend.
type Maintenance interface {
	// Purge deletes up to limit events created before before, with their
	// deliveries and attempts, skipping any event with a delivery that may
	// still be attempted (pending); and the Idempotency-Keys older than
	// webhooks.IdempotencyWindow at now. It returns how many events it
	// deleted: call it again while that is limit. When another process is
	// purging the same database, it returns 0 at once.
	Purge(ctx context.Context, before, now time.Time, limit int) (int, error)
	// Scrub makes what erasures and purges removed leave the disk, not
	// only the tables (SPEC 19): on SQLite, whose deletions overwrite the
	// content they free (secure_delete), a checkpoint that copies the WAL
	// into the database and truncates it; on PostgreSQL, a vacuum of the
	// tables that erasures and purges change. It returns an error when it
	// could not finish (a checkpoint that readers held back): call it
	// again.
	Scrub(ctx context.Context) error
	// QueueStats measures the work queue at now.
	QueueStats(ctx context.Context, now time.Time) (webhooks.QueueStats, error)
	// Backlogs returns the due deliveries at now (webhooks.Backlog: the
	// pending ones no unexpired claim holds, parked and deferred ones too,
	// each due since its attempt was, a lapsed claim's since its lease
	// ended; one waiting behind another of its chain is not due) of each
	// endpoint whose oldest came due at or before cutoff or whose backlog
	// alert is on; and the endpoints (not deleted) whose alert is on
	// (BackloggedSince set), due deliveries or not.
	Backlogs(ctx context.Context, now, cutoff time.Time) (backlogs []webhooks.Backlog, alerted []string, err error)
	// Backlog returns one endpoint's due deliveries at now, as Backlogs
	// counts them.
	Backlog(ctx context.Context, endpointID string, now time.Time) (webhooks.Backlog, error)
	// ToProbe returns up to limit endpoints to probe for automatic
	// recovery, oldest disable first: disabled for failing
	// (DisabledFailing), asking for it (AutoRecover), disabled at or after
	// since and at or before probeBefore, and not probed after
	// probeBefore.
	ToProbe(ctx context.Context, since, probeBefore time.Time, limit int) ([]*webhooks.Endpoint, error)
}

// Cluster is what a backend that several processes share offers them,
// besides its data: a way to tell each other of new work, and a
// semaphore per endpoint for the concurrency cap across all of them.
type Cluster interface {
	// Notify tells every process listening that deliveries are due.
	Notify(ctx context.Context) error
	// Listen calls wake whenever a process notifies (and once it listens,
	// and after every reconnection: what was notified meanwhile is lost),
	// until ctx ends.
	Listen(ctx context.Context, wake func())
}

// Semaphore holds, for every process on a shared database, the slots of
// the endpoints' concurrency cap (SPEC 14): at most cap attempts to one
// endpoint in flight at any instant, across every process, however each
// was claimed. An engine takes a slot before it starts an attempt and
// gives it back when the attempt ends.
type Semaphore interface {
	// Acquire takes a slot of each endpoint listed (one per attempt, in
	// order) under cap, and returns them: got[i] is endpoints[i]'s, its
	// OK false when no slot was free (nothing is then taken for it).
	Acquire(ctx context.Context, endpoints []string, cap int) (got []Slot, err error)
	// Release gives slots back.
	Release(slots []Slot)
}

// Slot is a slot Semaphore.Acquire took.
type Slot struct {
	Endpoint string
	N        int    // the slot's number, under the cap
	Epoch    uint64 // the holder's session: a slot of an ended one is gone already
	OK       bool
}
