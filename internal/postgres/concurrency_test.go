package postgres

import (
	"context"
	"io/fs"
	"sync"
	"testing"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// TestOpen_Concurrent opens one empty schema from several processes' worth
// of stores at once: the migrations take turns under their advisory lock,
// and each runs once.
func TestOpen_Concurrent(t *testing.T) {
	schema := NewSchema(t)
	var wg sync.WaitGroup
	stores := make([]*Store, 8)
	errs := make([]error, len(stores))
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = Open(t.Context(), testURL(), WithSearchPath(schema)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
			continue
		}
		stores[i].Close()
	}
	conn := connect(t)
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM `+schema+`.schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(migrations, "migration/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if n != len(files) {
		t.Errorf("schema_migrations: got %d rows, want one per migration (%d)", n, len(files))
	}
}

// TestStore_RegisterEvent_ConcurrentKey sends one new Idempotency-Key from
// several stores at once: one event is registered, and every caller gets
// it; with another request hash, the callers that lose get
// idempotency_key_reused, never a unique violation.
func TestStore_RegisterEvent_ConcurrentKey(t *testing.T) {
	stores := openStacks(t, 2)
	a := mustAccount(t, stores[0])
	c := mustCompany(t, stores[0], a.ID)
	mustEndpoint(t, stores[0], c.ID)

	for _, sameHash := range []bool{true, false} {
		key := "key-" + webhooks.NewID()
		const n = 12
		type result struct {
			ev      *webhooks.Event
			ds      []*webhooks.Delivery
			created bool
			err     error
		}
		results := make([]result, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				hash := []byte("hash")
				if !sameHash {
					hash = []byte{byte(i)}
				}
				<-start
				var r result
				r.ev, r.ds, r.created, r.err = stores[i%len(stores)].RegisterEvent(t.Context(), newEvent(c.ID, t0),
					&webhooks.IdempotencyKey{Key: key, RequestHash: hash, Created: t0})
				results[i] = r
			})
		}
		close(start)
		wg.Wait()
		var created []string
		var firstID string
		for i, r := range results {
			switch {
			case r.err == nil && r.created:
				created = append(created, r.ev.ID)
				if len(r.ds) != 1 {
					t.Errorf("sameHash=%t: the registering call got %d deliveries, want 1", sameHash, len(r.ds))
				}
			case r.err == nil:
				if !sameHash {
					t.Errorf("sameHash=%t: call %d: got event %s, want idempotency_key_reused", sameHash, i, r.ev.ID)
				}
				if firstID == "" {
					firstID = r.ev.ID
				} else if firstID != r.ev.ID {
					t.Errorf("sameHash=%t: repeats got events %s and %s", sameHash, firstID, r.ev.ID)
				}
			case webhooks.ErrorCode(r.err) == webhooks.EIDEMPOTENCYREUSED && !sameHash:
			default:
				t.Errorf("sameHash=%t: call %d: %v", sameHash, i, r.err)
			}
		}
		if len(created) != 1 {
			t.Fatalf("sameHash=%t: got %d registrations, want 1", sameHash, len(created))
		}
		if firstID != "" && firstID != created[0] {
			t.Errorf("sameHash=%t: repeats got %s, want the registered %s", sameHash, firstID, created[0])
		}
	}
	list, err := stores[0].ListEvents(t.Context(), webhooks.EventFilter{CompanyID: c.ID}, webhooks.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 2 {
		t.Errorf("events: got %d, want 2 (one per key)", len(list.Data))
	}
}

// TestStore_CreateCompany_ConcurrentNIF creates companies with one NIF at
// once: one succeeds, the others get nif_taken from the unique violation.
func TestStore_CreateCompany_ConcurrentNIF(t *testing.T) {
	s := stackOf(t, MustOpenFresh(t))
	a := mustAccount(t, s)
	const n = 6
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = useCases(s).CreateCompany(t.Context(), app.Admin(), a.ID, "B12345674", "Twin")
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch webhooks.ErrorCode(err) {
		case "":
			ok++
		case webhooks.ENIFTAKEN:
		default:
			t.Errorf("CreateCompany: %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("companies created: got %d, want 1", ok)
	}
}

// TestStore_UpdateEndpoint_DisableRacesRegister registers events while the
// endpoint is disabled: whichever commits first, no delivery is left
// pending on the disabled endpoint.
func TestStore_UpdateEndpoint_DisableRacesRegister(t *testing.T) {
	stores := openStacks(t, 2)
	s1, s2 := stores[0], stores[1]
	a := mustAccount(t, s1)
	c := mustCompany(t, s1, a.ID)
	for range 5 {
		ep := mustEndpoint(t, s1, c.ID)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if _, _, _, err := s2.RegisterEvent(t.Context(), newEvent(c.ID, t0), nil); err != nil {
					t.Error(err)
				}
			})
		}
		disabled := webhooks.EndpointDisabled
		if _, err := useCases(s1).UpdateEndpoint(t.Context(), app.Admin(), app.EndpointRef{ID: ep.ID}, webhooks.EndpointUpdate{Status: &disabled}); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		list, err := s1.ListDeliveries(t.Context(), webhooks.DeliveryFilter{EndpointID: ep.ID, Status: webhooks.DeliveryPending}, webhooks.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Data) != 0 {
			t.Errorf("pending deliveries of the disabled endpoint: got %d, want 0", len(list.Data))
		}
	}
}

// TestStore_RegisterEvent_InvalidUTF8 checks that a data.object PostgreSQL
// cannot store as text is refused as the request's fault. (Event.Validate
// refuses it first; this is the store's own line.)
func TestStore_RegisterEvent_InvalidUTF8(t *testing.T) {
	s := stackOf(t, MustOpenFresh(t))
	a := mustAccount(t, s)
	c := mustCompany(t, s, a.ID)
	ev := newEvent(c.ID, t0)
	ev.Object = []byte("{\"object\":\"invoice\",\"note\":\"\xff\"}")
	_, _, _, err := s.RegisterEvent(t.Context(), ev, nil)
	if got := webhooks.ErrorCode(err); got != webhooks.EINVALID {
		t.Errorf("RegisterEvent: got %v (%s), want %s", err, got, webhooks.EINVALID)
	}
}
