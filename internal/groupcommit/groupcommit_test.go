package groupcommit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type req struct {
	n      int
	result int
}

// TestGroups: concurrent requests are answered, each once, in groups of
// max at most, and with one worker whose commits are slow they share
// groups instead of each making one.
func TestGroups(t *testing.T) {
	var groups, biggest atomic.Int64
	c := Start(1, 8, func(group []*req) {
		groups.Add(1)
		if n := int64(len(group)); n > biggest.Load() {
			biggest.Store(n)
		}
		time.Sleep(5 * time.Millisecond)
		for _, r := range group {
			r.result = r.n * 2
		}
	})
	defer c.Close()
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := &req{n: i}
			if err := c.Do(context.Background(), r); err != nil || r.result != 2*i {
				t.Errorf("request %d: result %d, %v; want %d", i, r.result, err, 2*i)
			}
		})
	}
	wg.Wait()
	if b := biggest.Load(); b > 8 {
		t.Errorf("a group of %d, more than the max of 8", b)
	}
	if g := groups.Load(); g >= n {
		t.Errorf("%d groups for %d requests: none were shared", g, n)
	}
}

// TestGaveUp: a request whose caller's context ended while it waited to be
// taken is not committed, and Do says why; after Close, Do refuses.
func TestGaveUp(t *testing.T) {
	release := make(chan struct{})
	var committed sync.Map
	c := Start(1, 8, func(group []*req) {
		<-release
		for _, r := range group {
			committed.Store(r.n, true)
		}
	})
	// The first request holds the only worker; the second waits in the
	// channel while its caller gives up.
	first := make(chan error, 1)
	go func() { first <- c.Do(context.Background(), &req{n: 1}) }()
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() { second <- c.Do(ctx, &req{n: 2}) }()
	time.Sleep(20 * time.Millisecond)
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
}
