package postgres

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestStore_CountProcesses: the processes listening on a schema count
// each other, a store on another schema of the database counts only its
// own, and a process that stops listening leaves the count. The windows
// of group commit scale with the count (GroupCommit.Scaled).
func TestStore_CountProcesses(t *testing.T) {
	schema := NewSchema(t)
	a, b := MustOpen(t, schema), MustOpen(t, schema)
	other := MustOpen(t, NewSchema(t))
	if got := a.Processes(); got != 1 {
		t.Fatalf("before counting: %d processes, want 1", got)
	}
	listening(t, a)
	listening(t, other)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { b.Listen(ctx, func() {}) })
	defer func() { stop(); wg.Wait() }()

	waitCount(t, a, 2)
	waitCount(t, other, 1)
	if got, want := a.GroupCommit().Scaled(a.GroupCommit().Window), 2*a.GroupCommit().Window; got != want {
		t.Errorf("the registration window with two processes: %v, want %v", got, want)
	}
	if got, want := a.GroupCommit().Scaled(a.GroupCommit().RecordWindow), 2*a.GroupCommit().RecordWindow; got != want {
		t.Errorf("the records' window with two processes: %v, want %v", got, want)
	}
	stop()
	wg.Wait()
	waitCount(t, a, 1)
}

// waitCount counts s's processes until there are want, for 10 s at most
// (a listener takes its lock once it has connected).
func waitCount(t *testing.T, s *Store, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := s.CountProcesses(t.Context()); err != nil {
			t.Fatal(err)
		}
		got := s.Processes()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes on the schema, want %d", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
