package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/queue"
	"github.com/factuarea/webhooks/internal/storetest"
)

// batchFixture is a use-case layer on a fresh store with a company whose
// endpoint takes every event, counting the events it reports registered.
type batchFixture struct {
	app        *app.App
	store      storetest.Store
	company    *webhooks.Company
	registered atomic.Int64
}

// newBatchFixture opens the fixture; wrap, if set, stands between the use
// cases and the registrar.
func newBatchFixture(t *testing.T, wrap func(app.Registrar) app.Registrar) *batchFixture {
	t.Helper()
	st := openStack(t)
	acc := storetest.MustCreateAccount(t, st, "")
	f := &batchFixture{store: st, company: storetest.MustCreateCompany(t, st, acc.ID)}
	storetest.MustCreateEndpoint(t, st, storetest.NewCompanyEndpoint(f.company.ID, "*"))
	var r app.Registrar = st
	if wrap != nil {
		r = wrap(st)
	}
	f.app = app.New(app.Config{Store: st, Registrar: r, AdminKey: "the-admin-key", Now: func() time.Time { return t0.Add(time.Hour) },
		Registered: func() { f.registered.Add(1) }})
	return f
}

// event returns an input of the fixture's company.
func (f *batchFixture) event(typ, key string) app.EventInput {
	return app.EventInput{Type: typ, CompanyID: f.company.ID, Object: json.RawMessage(`{"object": "invoice", "number": "` + typ + `"}`), IdempotencyKey: key}
}

// TestRegisterEvents: each event of a batch is validated and registered on
// its own, as RegisterEvent would, and its outcome is at its place; a key
// used twice in the batch registers once.
func TestRegisterEvents(t *testing.T) {
	f := newBatchFixture(t, nil)
	ctx := t.Context()
	// A key of an earlier request, repeated by the batch.
	earlier, created, err := f.app.RegisterEvent(ctx, app.Admin(), f.event("invoice.sent", "earlier"))
	if err != nil || !created {
		t.Fatalf("RegisterEvent: %v, %v", created, err)
	}
	f.registered.Store(0)

	in := []app.EventInput{
		0: f.event("invoice.created", ""),
		1: f.event("Invoice Sent", ""), // not a type
		2: f.event("invoice.paid", "k1"),
		3: {Type: "invoice.sent", CompanyID: webhooks.NewID(), Object: json.RawMessage(`{}`)},
		4: f.event("invoice.paid", "k1"),   // the same request again: item 2's event
		5: f.event("invoice.voided", "k1"), // another request with k1
		6: f.event("invoice.sent", strings.Repeat("k", webhooks.MaxIdempotencyKeyLen+1)),
		7: {Type: "invoice.sent", Object: json.RawMessage(`{}`)}, // no company
		8: f.event("invoice.sent", "earlier"),
		9: f.event("invoice.created", ""), // the same as item 0, without a key: another event
		// The first use of k2 is refused before it reaches the store, so the
		// second registers.
		10: {Type: "invoice.sent", IdempotencyKey: "k2", Object: json.RawMessage(`{}`)},
		11: f.event("invoice.sent", "k2"),
	}
	out, err := f.app.RegisterEvents(ctx, app.Admin(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("got %d outcomes for %d events", len(out), len(in))
	}
	wantErr := map[int]string{
		1: webhooks.EINVALID, 3: webhooks.EUNKNOWNCOMPANY, 5: webhooks.EIDEMPOTENCYREUSED,
		6: webhooks.EINVALID, 7: webhooks.ECOMPANYREQUIRED, 10: webhooks.ECOMPANYREQUIRED,
	}
	wantCreated := map[int]bool{0: true, 2: true, 9: true, 11: true}
	for i, o := range out {
		if code := wantErr[i]; code != "" {
			if webhooks.ErrorCode(o.Err) != code || o.Event != nil {
				t.Errorf("item %d: got %+v, want %s", i, o, code)
			}
			continue
		}
		if o.Err != nil || o.Event == nil || o.Created != wantCreated[i] {
			t.Errorf("item %d: got %+v, want an event created %v", i, o, wantCreated[i])
			continue
		}
		if o.Created && (o.Event.Type != in[i].Type || o.Event.CompanyID != f.company.ID) {
			t.Errorf("item %d: got a %s event of %s, want %s of %s", i, o.Event.Type, o.Event.CompanyID, in[i].Type, f.company.ID)
		}
		// Every event answered is committed.
		if _, err := f.store.FindEvent(ctx, o.Event.ID); err != nil {
			t.Errorf("item %d: FindEvent(%s): %v", i, o.Event.ID, err)
		}
	}
	if out[4].Event != nil && out[2].Event != nil && out[4].Event.ID != out[2].Event.ID {
		t.Errorf("the repeated k1: got event %s, want item 2's %s", out[4].Event.ID, out[2].Event.ID)
	}
	if out[8].Event != nil && out[8].Event.ID != earlier.ID {
		t.Errorf("the earlier key: got event %s, want %s", out[8].Event.ID, earlier.ID)
	}
	if out[0].Event != nil && out[9].Event != nil && out[0].Event.ID == out[9].Event.ID {
		t.Error("two events without a key are one")
	}
	if !strings.Contains(webhooks.ErrorMessage(out[6].Err), "idempotency_key") {
		t.Errorf("a long key: message %q does not name idempotency_key", webhooks.ErrorMessage(out[6].Err))
	}
	if n := f.registered.Load(); n != int64(len(wantCreated)) {
		t.Errorf("Registered called %d times, want %d (once per event created)", n, len(wantCreated))
	}
	l, err := f.store.ListEvents(ctx, webhooks.EventFilter{CompanyID: f.company.ID}, webhooks.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Data) != 1+len(wantCreated) {
		t.Errorf("the company has %d events, want %d (the earlier one and the batch's created ones)", len(l.Data), 1+len(wantCreated))
	}
}

// TestRegisterEventsRefused: a batch is the admin's, as RegisterEvent is;
// an empty one registers nothing, and one over the bound is refused whole.
func TestRegisterEventsRefused(t *testing.T) {
	f := newBatchFixture(t, nil)
	ctx := t.Context()
	for _, c := range []app.Caller{
		{Actor: webhooks.Actor{Type: webhooks.ActorAPIKey, ID: webhooks.NewID()}, AccountID: f.company.AccountID},
		{Actor: webhooks.Actor{Type: webhooks.ActorPortal, ID: webhooks.NewID()}, AccountID: f.company.AccountID},
	} {
		if _, err := f.app.RegisterEvents(ctx, c, []app.EventInput{f.event("invoice.sent", "")}); webhooks.ErrorCode(err) != webhooks.EFORBIDDEN {
			t.Errorf("as %s: got %v, want forbidden", c.Actor.Type, err)
		}
		// Also when no event would be registered.
		if _, err := f.app.RegisterEvents(ctx, c, nil); webhooks.ErrorCode(err) != webhooks.EFORBIDDEN {
			t.Errorf("an empty batch as %s: got %v, want forbidden", c.Actor.Type, err)
		}
	}
	if out, err := f.app.RegisterEvents(ctx, app.Admin(), nil); err != nil || len(out) != 0 {
		t.Errorf("an empty batch: got %v, %v", out, err)
	}
	many := make([]app.EventInput, app.MaxBatchEvents+1)
	for i := range many {
		many[i] = f.event("invoice.sent", "")
	}
	if _, err := f.app.RegisterEvents(ctx, app.Admin(), many); webhooks.ErrorCode(err) != webhooks.EINVALID {
		t.Errorf("%d events: got %v, want invalid_request", len(many), err)
	}
	l, err := f.store.ListEvents(ctx, webhooks.EventFilter{CompanyID: f.company.ID}, webhooks.Page{Limit: 100})
	if err != nil || len(l.Data) != 0 || f.registered.Load() != 0 {
		t.Errorf("refused batches registered %d events (%v), Registered %d; want nothing", len(l.Data), err, f.registered.Load())
	}
}

// barrierStore holds each RegisterEvent until n are in flight at once: a
// batch that registered its events one after the other would never get
// there.
type barrierStore struct {
	app.Registrar
	n       int
	mu      sync.Mutex
	waiting int
	all     chan struct{}
}

func (s *barrierStore) Register(ctx context.Context, r queue.Registration) (*webhooks.Event, []*webhooks.Delivery, bool, error) {
	s.mu.Lock()
	if s.waiting++; s.waiting == s.n {
		close(s.all)
	}
	s.mu.Unlock()
	select {
	case <-s.all:
	case <-time.After(5 * time.Second):
		return nil, nil, false, webhooks.Errorf(webhooks.EINTERNAL, "RegisterEvent: the other registrations of the batch never came")
	}
	return s.Registrar.Register(ctx, r)
}

// TestRegisterEventsConcurrently: the events of a batch reach the store
// together, so that its group commit can write them in one transaction.
func TestRegisterEventsConcurrently(t *testing.T) {
	const n = 20
	f := newBatchFixture(t, func(r app.Registrar) app.Registrar {
		return &barrierStore{Registrar: r, n: n, all: make(chan struct{})}
	})
	in := make([]app.EventInput, n)
	for i := range in {
		in[i] = f.event("invoice.sent", "")
	}
	out, err := f.app.RegisterEvents(t.Context(), app.Admin(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if o.Err != nil || !o.Created {
			t.Errorf("item %d: got %+v, want created", i, o)
		}
	}
}

// unavailableStore answers RegisterEvent as a database that does not
// answer, for the events down says.
type unavailableStore struct {
	app.Registrar
	down func(ev *webhooks.Event) bool
}

func (s *unavailableStore) Register(ctx context.Context, r queue.Registration) (*webhooks.Event, []*webhooks.Delivery, bool, error) {
	if s.down(r.Event) {
		return nil, nil, false, webhooks.ErrUnavailable
	}
	return s.Registrar.Register(ctx, r)
}

// TestRegisterEventsUnavailable: when the database answers for no event,
// the batch fails as a whole with service_unavailable, so that the
// producer sends it again as it would a single event; when it fails for
// some only, those are the outcomes that say so, and the others are
// registered (sending the whole batch again would register them twice).
func TestRegisterEventsUnavailable(t *testing.T) {
	f := newBatchFixture(t, func(r app.Registrar) app.Registrar {
		return &unavailableStore{Registrar: r, down: func(ev *webhooks.Event) bool { return ev.Type != "invoice.sent" }}
	})
	ctx := t.Context()
	if _, err := f.app.RegisterEvents(ctx, app.Admin(), []app.EventInput{f.event("invoice.paid", ""), f.event("invoice.voided", "")}); webhooks.ErrorCode(err) != webhooks.EUNAVAILABLE {
		t.Errorf("every event unavailable: got %v, want service_unavailable", err)
	}
	// An event refused by validation registers nothing either.
	if _, err := f.app.RegisterEvents(ctx, app.Admin(), []app.EventInput{f.event("Not A Type", ""), f.event("invoice.paid", "")}); webhooks.ErrorCode(err) != webhooks.EUNAVAILABLE {
		t.Errorf("an invalid event and an unavailable one: got %v, want service_unavailable", err)
	}
	out, err := f.app.RegisterEvents(ctx, app.Admin(), []app.EventInput{f.event("invoice.paid", ""), f.event("invoice.sent", ""), f.event("invoice.voided", "")})
	if err != nil {
		t.Fatal(err)
	}
	if webhooks.ErrorCode(out[0].Err) != webhooks.EUNAVAILABLE || !out[1].Created || webhooks.ErrorCode(out[2].Err) != webhooks.EUNAVAILABLE {
		t.Errorf("some events unavailable: got %+v, want unavailable, created, unavailable", out)
	}
	if f.registered.Load() != 1 {
		t.Errorf("Registered %d; want 1", f.registered.Load())
	}
}
