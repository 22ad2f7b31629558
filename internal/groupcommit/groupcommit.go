// Package groupcommit gathers concurrent requests into groups, so that one
// transaction, and one wait for the disk, serves many: both stores commit
// event registrations so.
package groupcommit

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrClosed is Do's error once Close was called.
var ErrClosed = errors.New("groupcommit: closed")

// Committer hands groups of requests to its commit function.
type Committer[T any] struct {
	commit  func(group []T)
	max     int
	window  func() time.Duration
	in      chan *call[T]
	closing chan struct{}
	once    sync.Once
	workers sync.WaitGroup
}

// call is one Do waiting for its group.
type call[T any] struct {
	v    T
	done chan struct{}
}

// Start runs workers goroutines, each taking every request waiting, max at
// most, and passing them to commit, which answers each through its T (a
// pointer, typically) before it returns. A lone request goes at once, and
// under load the groups grow instead of the commits multiplying. A worker
// takes a request from its caller's hand (the channel has no buffer), so
// one whose caller gave up while waiting to be taken is never committed.
func Start[T any](workers, max int, commit func(group []T)) *Committer[T] {
	return StartWindow(workers, max, nil, commit)
}

// StartWindow is Start with a window: under load (the last group had more
// than one request), a worker that took the waiting requests waits up to
// window() for more before it commits, so that the groups grow and the
// commits, each a wait for the disk, become fewer. A lone request still
// goes at once. window is asked before each group (nil or 0: no window).
func StartWindow[T any](workers, max int, window func() time.Duration, commit func(group []T)) *Committer[T] {
	c := &Committer[T]{commit: commit, max: max, window: window, in: make(chan *call[T]), closing: make(chan struct{})}
	for range workers {
		c.workers.Go(c.work)
	}
	return c
}

// Do hands v to a group and waits for its commit. It returns ctx's error
// if the caller gives up first (v may still commit then: the caller was
// not told it did), and ErrClosed once Close was called.
func (c *Committer[T]) Do(ctx context.Context, v T) error {
	k := &call[T]{v: v, done: make(chan struct{})}
	select {
	case c.in <- k:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closing:
		return ErrClosed
	}
	select {
	case <-k.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the workers, once the groups they are committing are done.
func (c *Committer[T]) Close() {
	c.once.Do(func() { close(c.closing) })
	c.workers.Wait()
}

func (c *Committer[T]) windowNow() time.Duration {
	if c.window == nil {
		return 0
	}
	return c.window()
}

func (c *Committer[T]) work() {
	group := make([]*call[T], 0, c.max)
	timer := time.NewTimer(0)
	<-timer.C
	loaded := false // the last group had more than one request
	for {
		select {
		case k := <-c.in:
			group = append(group[:0], k)
		case <-c.closing:
			return
		}
	more:
		for len(group) < c.max {
			select {
			case k := <-c.in:
				group = append(group, k)
			default:
				break more
			}
		}
		if w := c.windowNow(); loaded && w > 0 && len(group) < c.max {
			timer.Reset(w)
		window:
			for len(group) < c.max {
				select {
				case k := <-c.in:
					group = append(group, k)
				case <-timer.C:
					break window
				}
			}
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
		loaded = len(group) > 1
		vs := make([]T, len(group))
		for i, k := range group {
			vs[i] = k.v
		}
		c.commit(vs)
		for _, k := range group {
			close(k.done)
		}
	}
}
