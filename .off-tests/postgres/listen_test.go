package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
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
// process) registers an event with a due delivery, and again after the
// listener's connection is lost and reopened.
func TestStore_Listen(t *testing.T) {
	schema := NewSchema(t)
	app := "webhooks_listen_" + schema
	listener, err := Open(t.Context(), testURL()+"&application_name="+app, WithSearchPath(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close() })
	producer := MustOpen(t, schema)
	a := mustAccount(t, producer)
	c := mustCompany(t, producer, a.ID)

	wakes := listening(t, listener)
	waitWake(t, wakes, "once listening")

	mustRegister(t, producer, newEvent(c.ID, t0))
	noWake(t, wakes, "for an event with no delivery")
	mustEndpoint(t, producer, c.ID)
	mustRegister(t, producer, newEvent(c.ID, t0))
	waitWake(t, wakes, "for an event with a delivery")

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
	mustRegister(t, producer, newEvent(c.ID, t0))
	waitWake(t, wakes, "for an event after reconnecting")
}

// TestStore_Listen_LocalWorkers: a process whose own workers have room
// for new work takes it without waking the others; one whose workers are
// full, or that has none, wakes them. A store on another schema of the
// database wakes nobody here.
func TestStore_Listen_LocalWorkers(t *testing.T) {
	schema := NewSchema(t)
	listener := MustOpen(t, schema)
	producer := MustOpen(t, schema)
	a := mustAccount(t, producer)
	c := mustCompany(t, producer, a.ID)
	mustEndpoint(t, producer, c.ID)
	wakes := listening(t, listener)
	waitWake(t, wakes, "once listening")

	var room atomic.Bool
	room.Store(true)
	producer.SetEngine(roomEngine{&room})
	mustRegister(t, producer, newEvent(c.ID, t0))
	noWake(t, wakes, "for an event the producer's workers had room for")
	room.Store(false)
	mustRegister(t, producer, newEvent(c.ID, t0))
	waitWake(t, wakes, "for an event the producer's workers had no room for")

	other := MustOpen(t, NewSchema(t))
	oc := mustCompany(t, other, mustAccount(t, other).ID)
	mustEndpoint(t, other, oc.ID)
	mustRegister(t, other, newEvent(oc.ID, t0))
	noWake(t, wakes, "for an event on another schema")
}

// roomEngine is an engine that leases nothing (every delivery waits for a
// claim) and has room while room is set.
type roomEngine struct{ room *atomic.Bool }

func (e roomEngine) Lease(string, time.Time) (string, time.Time, bool) { return "", time.Time{}, false }
func (e roomEngine) Hand([]*webhooks.Claim)                            {}
func (e roomEngine) Unlease([]string)                                  {}
func (e roomEngine) Wake()                                             {}
func (e roomEngine) PerEndpoint() int                                  { return 0 }
func (e roomEngine) HasRoom() bool                                     { return e.room.Load() }
func (e roomEngine) Pace(context.Context, bool, time.Duration)         {}

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
