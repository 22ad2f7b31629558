package groupcommit

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

type req struct {
	n      int
	result int
}

// TestGroups: requests made while the one worker commits wait, and the
// next commits take them in groups of max at most; each request is
// answered once. synctest.Wait, not a sleep, says when every request is
// waiting.
func TestGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var mu sync.Mutex
		var sizes []int
		c := Start(1, 8, func(group []*req) {
			mu.Lock()
			first := len(sizes) == 0
			sizes = append(sizes, len(group))
			mu.Unlock()
			if first {
				<-release
			}
			for _, r := range group {
				r.result = r.n * 2
			}
		})
		defer c.Close()
		do := func(i int) {
			r := &req{n: i}
			if err := c.Do(context.Background(), r); err != nil || r.result != 2*i {
				t.Errorf("request %d: result %d, %v; want %d", i, r.result, err, 2*i)
			}
		}
		var wg sync.WaitGroup
		wg.Go(func() { do(0) })
		synctest.Wait() // the first group is committing
		const n = 64
		for i := 1; i < n; i++ {
			wg.Go(func() { do(i) })
		}
		synctest.Wait() // the 63 others wait for the worker
		close(release)
		wg.Wait()
		if want := []int{1, 8, 8, 8, 8, 8, 8, 8, 7}; !slices.Equal(sizes, want) {
			t.Errorf("group sizes: got %v, want %v", sizes, want)
		}
	})
}

// TestGaveUp: a request whose caller's context ended while it waited to be
// taken is not committed, and Do says why; after Close, Do refuses.
func TestGaveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var committed sync.Map
		c := Start(1, 8, func(group []*req) {
			<-release
			for _, r := range group {
				committed.Store(r.n, true)
			}
		})
		// The first request holds the only worker; the second waits to be
		// taken while its caller gives up.
		first := make(chan error, 1)
		go func() { first <- c.Do(context.Background(), &req{n: 1}) }()
		synctest.Wait()
		ctx, cancel := context.WithCancel(context.Background())
		second := make(chan error, 1)
		go func() { second <- c.Do(ctx, &req{n: 2}) }()
		synctest.Wait()
		cancel()
		if err := <-second; !errors.Is(err, context.Canceled) {
			t.Errorf("the request given up: %v, want %v", err, context.Canceled)
		}
		close(release)
		if err := <-first; err != nil {
			t.Errorf("the first request: %v", err)
		}
		c.Close()
		if _, ok := committed.Load(2); ok {
			t.Error("the request given up before its group began was committed")
		}
		if err := c.Do(context.Background(), &req{n: 3}); !errors.Is(err, ErrClosed) {
			t.Errorf("Do after Close: %v, want %v", err, ErrClosed)
		}
	})
}

// TestWindowAskedPerGroup: under load a group waits window() for more,
// asked anew for each group, so that the window can follow what the
// caller learns (how many processes share the database, say): a request
// 20 ms after its group began joins it with a window of 30 ms, and not
// with one of 10 ms.
func TestWindowAskedPerGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var window atomic.Int64
		window.Store(int64(10 * time.Millisecond))
		var mu sync.Mutex
		var sizes []int
		hold := map[int]chan struct{}{0: make(chan struct{}), 5: make(chan struct{})}
		c := StartWindow(1, 8, func() time.Duration { return time.Duration(window.Load()) }, func(group []*req) {
			mu.Lock()
			sizes = append(sizes, len(group))
			mu.Unlock()
			for _, r := range group {
				if ch := hold[r.n]; ch != nil {
					<-ch
				}
			}
		})
		defer c.Close()
		var wg sync.WaitGroup
		do := func(ns ...int) {
			for _, n := range ns {
				wg.Go(func() {
					if err := c.Do(context.Background(), &req{n: n}); err != nil {
						t.Errorf("request %d: %v", n, err)
					}
				})
			}
			synctest.Wait()
		}
		do(0)    // held: 1 and 2 wait, and make a group of two: the load
		do(1, 2) //
		close(hold[0])
		synctest.Wait()
		do(3, 4) // a window of 10 ms…
		time.Sleep(20 * time.Millisecond)
		do(5) // …which 5 missed; held, once its own window is over…
		time.Sleep(15 * time.Millisecond)
		do(6, 7) // …while 6 and 7 wait
		window.Store(int64(30 * time.Millisecond))
		close(hold[5])
		synctest.Wait()
		do(8, 9) // a window of 30 ms…
		time.Sleep(20 * time.Millisecond)
		do(10) // …which 10 joins
		wg.Wait()
		if want := []int{1, 2, 2, 1, 2, 3}; !slices.Equal(sizes, want) {
			t.Errorf("group sizes: got %v, want %v", sizes, want)
		}
	})
}
