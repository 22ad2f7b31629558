package postgres

import (
	"context"
	"sync"
	"testing"
	"time"
)

// listening runs Listen on s until the test ends and returns its wakes.
func listening(t *testing.T, s *Store) <-chan struct{} {
	t.Helper()
	wakes := make(chan struct{}, 100)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		s.Listen(ctx, func() { wakes <- struct{}{} })
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return wakes
}

func waitWake(t *testing.T, wakes <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-wakes:
	case <-time.After(10 * time.Second):
		t.Fatalf("no wake %s", what)
	}
}

// noWake fails if a wake arrives within a while. A NOTIFY arrives within
// milliseconds; the notifications of tests on other schemas are ignored.
func noWake(t *testing.T, wakes <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-wakes:
		t.Fatalf("woken %s", what)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestStore_Listen wakes a store's listener when another store (another
// process) notifies, and again after the listener's connection is lost
// and reopened; a store on another schema of the database wakes nobody
// here.
func TestStore_Listen(t *testing.T) {
	schema := NewSchema(t)
	app := "webhooks_listen_" + schema
	listener, err := Open(t.Context(), testURL()+"&application_name="+app, WithSearchPath(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close() })
	producer := MustOpen(t, schema)

	wakes := listening(t, listener)
	waitWake(t, wakes, "once listening")
	noWake(t, wakes, "before anyone notifies")
	if err := producer.Notify(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wakes, "for a notification")
	if err := MustOpen(t, NewSchema(t)).Notify(t.Context()); err != nil {
		t.Fatal(err)
	}
	noWake(t, wakes, "for a notification on another schema")

	// Kill the listening connection: Listen reconnects and wakes, since it
	// may have missed notifications meanwhile.
	conn := connect(t)
	defer conn.Close(context.Background())
	var killed int
	if err := conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`, app).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d listening connections, want 1", killed)
	}
	waitWake(t, wakes, "after reconnecting")
	if err := producer.Notify(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wakes, "for a notification after reconnecting")
}

// TestStore_Listen_Close checks that Close stops Listen.
func TestStore_Listen_Close(t *testing.T) {
	s, err := Open(t.Context(), testURL(), WithSearchPath(NewSchema(t)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	ready := make(chan struct{}, 1)
	go func() {
		defer close(done)
		s.Listen(context.Background(), func() {
			select {
			case ready <- struct{}{}:
			default:
			}
		})
	}()
	<-ready
	s.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Listen still running after Close")
	}
}
