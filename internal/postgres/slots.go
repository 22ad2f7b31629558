package postgres

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"
	"sync/atomic"
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
// A slot given back stays locked, idle, for keepWarm: the next attempt to
// the endpoint takes it again without a round trip, which is most of them
// while an endpoint is busy. Only then is it unlocked, for another
// process to take. A session may take one lock twice (they stack), so the
// semaphore never tries a slot it holds, idle or not.
type Slots struct {
	cfg *pgx.ConnConfig
	log func(msg string, args ...any)

	// mu guards the slots held; conn is used by one caller at a time, with
	// cmu held (and mu, when a caller needs both: cmu first).
	mu    sync.Mutex
	held  map[string][]*slot // by endpoint
	epoch uint64             // counts the connections: a slot of an earlier one is gone
	cmu   sync.Mutex
	conn  *pgx.Conn

	// wake wakes the sweeper, which sleeps while no slot is held.
	wake   chan struct{}
	sweeps atomic.Int64 // counts the sweeps (for tests)

	done chan struct{}
	stop context.CancelFunc
}

// slot is a slot the process holds.
type slot struct {
	n         int
	inUse     bool
	idleSince time.Time
}

// keepWarm is how long a slot given back stays locked for this process's
// next attempt to its endpoint: long enough for the next one of a busy
// endpoint, short against an attempt, so that another process waits for
// an idle slot no longer than that.
const keepWarm = 20 * time.Millisecond

// prefetch is the fewest slots Acquire takes of an endpoint at a time.
const prefetch = 8

// Slots returns the store's semaphore; Close it when done.
func (s *Store) Slots() *Slots {
	ctx, stop := context.WithCancel(s.closed)
	sl := &Slots{cfg: s.pool.Config().ConnConfig.Copy(), log: s.log.Warn, held: map[string][]*slot{},
		wake: make(chan struct{}, 1), done: make(chan struct{}), stop: stop}
	go sl.sweeper(ctx)
	return sl
}

// Close gives back every slot and closes the connection.
func (sl *Slots) Close() {
	sl.stop()
	<-sl.done
	sl.cmu.Lock()
	defer sl.cmu.Unlock()
	sl.reset()
}

// slotKey is the advisory lock of slot n of an endpoint: 48 bits of the
// endpoint id's hash and the slot's number (caps are at most 65,535).
func slotKey(endpoint string, n int) int64 {
	h := fnv.New64a()
	h.Write([]byte(endpoint))
	return int64(h.Sum64()<<16 | uint64(n&0xffff))
}

// Acquire implements driver.Semaphore: each endpoint's idle slots first,
// then, in one round trip, one statement per endpoint that tries its free
// slots in order until it has what it wants.
func (sl *Slots) Acquire(ctx context.Context, endpoints []string, cap int) ([]driver.Slot, error) {
	out := make([]driver.Slot, len(endpoints))
	want := map[string]int{}
	var order []string
	sl.mu.Lock()
	for i, e := range endpoints {
		if s := sl.idle(e); s != nil {
			s.inUse = true
			out[i] = driver.Slot{Endpoint: e, N: s.n, Epoch: sl.epoch, OK: true}
			continue
		}
		if want[e] == 0 {
			order = append(order, e)
		}
		want[e]++
	}
	sl.mu.Unlock()
	if len(order) == 0 {
		return out, nil
	}

	sl.cmu.Lock()
	defer sl.cmu.Unlock()
	if err := sl.connect(ctx); err != nil {
		return out, err
	}
	var b pgx.Batch
	got := map[string][]int{}
	sl.mu.Lock()
	for _, e := range order {
		mine := map[int]bool{}
		for _, s := range sl.held[e] {
			mine[s.n] = true
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
		// limit: it takes the first free slots, and tries no more. It asks
		// for more than it wants, which wait idle for the next attempts
		// (a busy endpoint's come in groups): fewer round trips.
		b.Queue(`SELECT k FROM unnest($1::bigint[]) AS k WHERE pg_try_advisory_lock(k) LIMIT $2`, free, max(2*want[e], prefetch)).
			Query(func(rows pgx.Rows) error {
				var k int64
				_, err := pgx.ForEachRow(rows, []any{&k}, func() error {
					got[e] = append(got[e], int(uint64(k)&0xffff))
					return nil
				})
				return err
			})
	}
	epoch := sl.epoch
	sl.mu.Unlock()
	if err := sl.conn.SendBatch(ctx, &b).Close(); err != nil {
		sl.reset()
		return out, err
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if epoch != sl.epoch {
		return out, nil // reset meanwhile: what was taken is gone
	}
	now := time.Now()
	for i, e := range endpoints {
		if out[i].OK || len(got[e]) == 0 {
			continue
		}
		n := got[e][0]
		got[e] = got[e][1:]
		sl.held[e] = append(sl.held[e], &slot{n: n, inUse: true})
		out[i] = driver.Slot{Endpoint: e, N: n, Epoch: epoch, OK: true}
	}
	for e, extra := range got {
		for _, n := range extra {
			sl.held[e] = append(sl.held[e], &slot{n: n, idleSince: now})
		}
	}
	select {
	case sl.wake <- struct{}{}:
	default:
	}
	return out, nil
}

// idle returns an idle slot of endpoint e, or nil. sl.mu is held.
func (sl *Slots) idle(e string) *slot {
	for _, s := range sl.held[e] {
		if !s.inUse {
			return s
		}
	}
	return nil
}

// Release implements driver.Semaphore: the slots stay locked, idle, for
// keepWarm (see Slots).
func (sl *Slots) Release(slots []driver.Slot) {
	now := time.Now()
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for _, r := range slots {
		if !r.OK || r.Epoch != sl.epoch {
			continue // of a connection gone, which released it
		}
		for _, s := range sl.held[r.Endpoint] {
			if s.n == r.N {
				s.inUse, s.idleSince = false, now
				break
			}
		}
	}
}

// sweeper unlocks the slots idle for keepWarm, until ctx ends. While the
// process holds no slot it sleeps until Acquire takes one: an idle
// process, or one whose endpoints take no slot, wakes for nothing (on a
// guest where every wake-up is dear, a tick every 10 ms was most of an
// idle process's system calls).
func (sl *Slots) sweeper(ctx context.Context) {
	defer close(sl.done)
	t := time.NewTimer(keepWarm / 2)
	defer t.Stop()
	for {
		if sl.holding() {
			t.Reset(keepWarm / 2)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		} else {
			select {
			case <-ctx.Done():
				return
			case <-sl.wake:
				continue
			}
		}
		sl.cmu.Lock()
		sl.sweeps.Add(1)
		if err := sl.sweep(ctx); err != nil && ctx.Err() == nil {
			sl.log("postgres: giving endpoint slots back failed; reconnecting (every slot is given back)", "err", err)
			sl.reset()
		}
		sl.cmu.Unlock()
	}
}

// holding reports whether the process holds a slot, in use or idle.
func (sl *Slots) holding() bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return len(sl.held) > 0
}

// sweep unlocks the slots idle for keepWarm. sl.cmu is held.
func (sl *Slots) sweep(ctx context.Context) error {
	cutoff := time.Now().Add(-keepWarm)
	var keys []int64
	sl.mu.Lock()
	for e, ss := range sl.held {
		kept := ss[:0]
		for _, s := range ss {
			if !s.inUse && s.idleSince.Before(cutoff) {
				keys = append(keys, slotKey(e, s.n))
			} else {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			delete(sl.held, e)
		} else {
			sl.held[e] = kept
		}
	}
	sl.mu.Unlock()
	if len(keys) == 0 || sl.conn == nil {
		return nil
	}
	_, err := sl.conn.Exec(ctx, `SELECT count(pg_advisory_unlock(k)) FROM unnest($1::bigint[]) AS k`, keys)
	return err
}

// connect opens the semaphore's connection if it has none. sl.cmu is
// held.
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
	sl.conn = conn
	return nil
}

// reset closes the connection, which gives back every slot it holds: the
// slots held are forgotten, and those in use, when given back, find
// another epoch. sl.cmu is held.
func (sl *Slots) reset() {
	sl.mu.Lock()
	sl.held, sl.epoch = map[string][]*slot{}, sl.epoch+1
	sl.mu.Unlock()
	if sl.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := sl.conn.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
		sl.log("postgres: closing the slots' connection", "err", err)
	}
	sl.conn = nil
}
