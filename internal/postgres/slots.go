package postgres

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/factuarea/webhooks/internal/driver"
)

// Slots is the semaphore of the endpoints' concurrency cap for every
// process on the database (driver.Semaphore), made of session advisory
// locks: slot n of an endpoint is the lock of a key made of the
// endpoint's hash and n, held by the process whose attempt holds the slot,
// on a connection of the semaphore's own. A lock is in memory (no write,
// no transaction), taken without waiting (pg_try_advisory_lock), and
// released with the session: a process that dies gives its slots back at
// once, however long its claims' leases last.
//
// A session may take one lock twice (they stack), so the process keeps
// the slots it holds and tries only the others.
type Slots struct {
	cfg *pgx.ConnConfig
	log func(msg string, args ...any)

	mu    sync.Mutex // one user of the connection at a time
	conn  *pgx.Conn
	epoch uint64           // counts the connections: a slot of an earlier one is gone
	held  map[string][]int // the slot numbers this process holds, by endpoint

	pmu     sync.Mutex
	pending []driver.Slot // released, to unlock
	kick    chan struct{}
	done    chan struct{}
	stop    context.CancelFunc
}

// Slots returns the store's semaphore; Close it when done.
func (s *Store) Slots() *Slots {
	ctx, stop := context.WithCancel(s.closed)
	sl := &Slots{cfg: s.pool.Config().ConnConfig.Copy(), log: s.log.Warn, held: map[string][]int{},
		kick: make(chan struct{}, 1), done: make(chan struct{}), stop: stop}
	go sl.releaser(ctx)
	return sl
}

// releaseDelay is how long a release waits for others to share its round
// trip: a slot freed a little late only delays the endpoint's next
// attempt, never overruns the cap.
const releaseDelay = time.Millisecond

// Close gives back every slot and closes the connection.
func (sl *Slots) Close() {
	sl.stop()
	<-sl.done
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.reset()
}

// slotKey is the advisory lock of slot n of an endpoint: 48 bits of the
// endpoint id's hash and the slot's number (caps are at most 65,535).
func slotKey(endpoint string, n int) int64 {
	h := fnv.New64a()
	h.Write([]byte(endpoint))
	return int64(h.Sum64()<<16 | uint64(n&0xffff))
}

// Acquire implements driver.Semaphore, in one round trip: the releases
// waiting go first, then one statement per endpoint tries its free slots
// in order until it has what it wants.
func (sl *Slots) Acquire(ctx context.Context, endpoints []string, cap int) ([]driver.Slot, error) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if err := sl.connect(ctx); err != nil {
		return make([]driver.Slot, len(endpoints)), err
	}
	want := map[string]int{}
	var order []string
	for _, e := range endpoints {
		if want[e] == 0 {
			order = append(order, e)
		}
		want[e]++
	}
	var b pgx.Batch
	sl.queueReleases(&b)
	got := map[string][]int{}
	for _, e := range order {
		mine := map[int]bool{}
		for _, n := range sl.held[e] {
			mine[n] = true
		}
		var free []int64
		for n := range min(cap, 0xffff) {
			if !mine[n] {
				free = append(free, slotKey(e, n))
			}
		}
		if len(free) == 0 {
			continue
		}
		// The executor evaluates the rows in order and stops at the
		// limit: it takes the first free slots, and tries no more.
		b.Queue(`SELECT k FROM unnest($1::bigint[]) AS k WHERE pg_try_advisory_lock(k) LIMIT $2`, free, want[e]).
			Query(func(rows pgx.Rows) error {
				var k int64
				_, err := pgx.ForEachRow(rows, []any{&k}, func() error {
					got[e] = append(got[e], int(uint64(k)&0xffff))
					return nil
				})
				return err
			})
	}
	if err := sl.conn.SendBatch(ctx, &b).Close(); err != nil {
		sl.reset()
		return make([]driver.Slot, len(endpoints)), err
	}
	out := make([]driver.Slot, len(endpoints))
	for i, e := range endpoints {
		if len(got[e]) == 0 {
			continue
		}
		n := got[e][0]
		got[e] = got[e][1:]
		sl.held[e] = append(sl.held[e], n)
		out[i] = driver.Slot{Endpoint: e, N: n, Epoch: sl.epoch, OK: true}
	}
	return out, nil
}

// Release implements driver.Semaphore: the slots are unlocked within
// releaseDelay, with the others released meanwhile (or by the next
// Acquire, first).
func (sl *Slots) Release(slots []driver.Slot) {
	sl.pmu.Lock()
	sl.pending = append(sl.pending, slots...)
	sl.pmu.Unlock()
	select {
	case sl.kick <- struct{}{}:
	default:
	}
}

// releaser unlocks the released slots until ctx ends.
func (sl *Slots) releaser(ctx context.Context) {
	defer close(sl.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sl.kick:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(releaseDelay):
		}
		sl.mu.Lock()
		if sl.conn != nil {
			var b pgx.Batch
			sl.queueReleases(&b)
			if b.Len() > 0 {
				if err := sl.conn.SendBatch(ctx, &b).Close(); err != nil && ctx.Err() == nil {
					sl.log("postgres: releasing endpoint slots failed; reconnecting (every slot is given back)", "err", err)
					sl.reset()
				}
			}
		}
		sl.mu.Unlock()
	}
}

// queueReleases queues in b the unlocks of the slots released, but for
// those of an earlier connection (gone with it). sl.mu is held.
func (sl *Slots) queueReleases(b *pgx.Batch) {
	sl.pmu.Lock()
	pending := sl.pending
	sl.pending = nil
	sl.pmu.Unlock()
	var keys []int64
	for _, s := range pending {
		if !s.OK || s.Epoch != sl.epoch || sl.conn == nil {
			continue
		}
		held := sl.held[s.Endpoint]
		for i, n := range held {
			if n == s.N {
				sl.held[s.Endpoint] = append(held[:i:i], held[i+1:]...)
				break
			}
		}
		if len(sl.held[s.Endpoint]) == 0 {
			delete(sl.held, s.Endpoint)
		}
		keys = append(keys, slotKey(s.Endpoint, s.N))
	}
	if len(keys) > 0 {
		b.Queue(`SELECT count(pg_advisory_unlock(k)) FROM unnest($1::bigint[]) AS k`, keys)
	}
}

// connect opens the semaphore's connection if it has none. sl.mu is held.
func (sl *Slots) connect(ctx context.Context) error {
	if sl.conn != nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, sl.cfg)
	if err != nil {
		return err
	}
	sl.conn, sl.epoch, sl.held = conn, sl.epoch+1, map[string][]int{}
	return nil
}

// reset closes the connection, which gives back every slot it holds.
// sl.mu is held.
func (sl *Slots) reset() {
	if sl.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := sl.conn.Close(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		sl.log("postgres: closing the slots' connection", "err", err)
	}
	sl.conn, sl.held = nil, map[string][]int{}
}
