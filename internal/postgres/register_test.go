package postgres

import (
	"context"
	"sync"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// TestRegisterEvent_Groups sends many registrations at once, so that they
// commit in groups, with bad ones among them: an unknown company (refused
// by the domain), text PostgreSQL refuses (which fails a group's
// statement), and one Idempotency-Key sent many times. Each good one is
// registered once with its delivery; each bad one gets its own error and
// takes no other down; the key registers one event, which every caller
// gets.
func TestRegisterEvent_Groups(t *testing.T) {
	s := stackOf(t, MustOpenFresh(t))
	a := mustAccount(t, s)
	c := mustCompany(t, s, a.ID)
	mustEndpoint(t, s, c.ID)

	const n = 256
	type result struct {
		ev         *webhooks.Event
		ds         []*webhooks.Delivery
		created    bool
		err        error
		kind       string
		registered *webhooks.Event
	}
	results := make([]result, n)
	key := &webhooks.IdempotencyKey{Key: "retry-1", RequestHash: []byte("hash"), Created: t0}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ev := newEvent(c.ID, t0.Add(time.Duration(i)*time.Millisecond))
			var k *webhooks.IdempotencyKey
			kind := "good"
			switch i % 8 {
			case 1:
				kind, ev.CompanyID = "unknown company", webhooks.NewID()
			case 2:
				kind, ev.Object = "invalid text", []byte("{\"object\":\"invoice\",\"note\":\"\xff\"}")
			case 3:
				kind, k = "repeated key", key
			}
			first, ds, created, err := s.RegisterEvent(context.Background(), ev, k)
			results[i] = result{ev: ev, ds: ds, created: created, err: err, kind: kind, registered: first}
		})
	}
	wg.Wait()

	keyEvents := map[string]bool{}
	createdWithKey := 0
	good := 0
	for i, r := range results {
		switch r.kind {
		case "good":
			if r.err != nil || !r.created || len(r.ds) != 1 {
				t.Errorf("registration %d: created %t, %d deliveries, %v; want created with 1 delivery", i, r.created, len(r.ds), r.err)
			}
			good++
		case "unknown company":
			if webhooks.ErrorCode(r.err) != webhooks.EUNKNOWNCOMPANY {
				t.Errorf("registration %d with an unknown company: %v, want %s", i, r.err, webhooks.EUNKNOWNCOMPANY)
			}
		case "invalid text":
			if webhooks.ErrorCode(r.err) != webhooks.EINVALID {
				t.Errorf("registration %d with invalid text: %v, want %s", i, r.err, webhooks.EINVALID)
			}
		case "repeated key":
			if r.err != nil {
				t.Errorf("registration %d with the repeated key: %v", i, r.err)
				continue
			}
			if r.created {
				createdWithKey++
			}
			keyEvents[r.registered.ID] = true
		}
	}
	if createdWithKey != 1 || len(keyEvents) != 1 {
		t.Errorf("the repeated key: %d registrations created an event, callers got %d events; want 1 and 1", createdWithKey, len(keyEvents))
	}
	list, err := s.ListEvents(t.Context(), webhooks.EventFilter{CompanyID: c.ID}, webhooks.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	total := len(list.Data)
	for list.HasMore {
		if list, err = s.ListEvents(t.Context(), webhooks.EventFilter{CompanyID: c.ID}, webhooks.Page{Limit: 100, StartingAfter: list.Data[len(list.Data)-1].ID}); err != nil {
			t.Fatal(err)
		}
		total += len(list.Data)
	}
	if total != good+1 {
		t.Errorf("events stored: %d, want %d (the good ones and the key's)", total, good+1)
	}
}
