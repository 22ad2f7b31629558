package postgres

import (
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// TestSlots: two processes' semaphores on one database share an
// endpoint's cap; a slot given back stays idle for its process's next
// attempt, then is unlocked for the other's; and a semaphore that holds
// no slot does not sweep (it woke every 10 ms for nothing before).
func TestSlots(t *testing.T) {
	schema := NewSchema(t)
	a, b := MustOpen(t, schema).Slots(), MustOpen(t, schema).Slots()
	defer a.Close()
	defer b.Close()
	ep := webhooks.NewID()

	time.Sleep(5 * keepWarm)
	if n := a.sweeps.Load(); n != 0 {
		t.Errorf("%d sweeps of a semaphore that never held a slot, want 0", n)
	}

	got, err := a.Acquire(t.Context(), []string{ep, ep}, 2)
	if err != nil || !got[0].OK || !got[1].OK {
		t.Fatalf("first process, two slots of a cap of 2: %+v, %v", got, err)
	}
	other, err := b.Acquire(t.Context(), []string{ep}, 2)
	if err != nil || other[0].OK {
		t.Fatalf("second process, with the cap held: %+v, %v; want no slot", other, err)
	}
	a.Release(got[:1])
	again, err := a.Acquire(t.Context(), []string{ep}, 2)
	if err != nil || !again[0].OK || again[0].N != got[0].N {
		t.Fatalf("first process again at once: %+v, %v; want its idle slot %d", again, err, got[0].N)
	}
	a.Release(again)
	a.Release(got[1:])
	deadline := time.Now().Add(10 * time.Second)
	for {
		other, err = b.Acquire(t.Context(), []string{ep}, 2)
		if err != nil {
			t.Fatal(err)
		}
		if other[0].OK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first process's idle slots were never given back")
		}
		time.Sleep(keepWarm)
	}
	b.Release(other)

	// Once its slots are given back, the first process sleeps again.
	for a.holding() {
		if time.Now().After(deadline) {
			t.Fatal("the first process still holds slots")
		}
		time.Sleep(keepWarm)
	}
	n := a.sweeps.Load()
	time.Sleep(5 * keepWarm)
	if m := a.sweeps.Load(); m != n {
		t.Errorf("%d sweeps while no slot was held, want 0", m-n)
	}
}
