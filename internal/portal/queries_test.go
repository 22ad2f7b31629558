package portal_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/portal"
	"github.com/factuarea/webhooks/internal/session"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

// countingStore counts the reads the portal's pages make.
type countingStore struct {
	app.Store
	reads atomic.Int64
}

func (s *countingStore) read() { s.reads.Add(1) }

func (s *countingStore) FindAccount(ctx context.Context, id string) (*webhooks.Account, error) {
	s.read()
	return s.Store.FindAccount(ctx, id)
}

func (s *countingStore) FindCompany(ctx context.Context, id string) (*webhooks.Company, error) {
	s.read()
	return s.Store.FindCompany(ctx, id)
}

func (s *countingStore) FindEndpoint(ctx context.Context, id string) (*webhooks.Endpoint, error) {
	s.read()
	return s.Store.FindEndpoint(ctx, id)
}

func (s *countingStore) ListEndpoints(ctx context.Context, f webhooks.EndpointFilter, p webhooks.Page) (*webhooks.List[*webhooks.Endpoint], error) {
	s.read()
	return s.Store.ListEndpoints(ctx, f, p)
}

func (s *countingStore) ListEvents(ctx context.Context, f webhooks.EventFilter, p webhooks.Page) (*webhooks.List[*webhooks.Event], error) {
	s.read()
	return s.Store.ListEvents(ctx, f, p)
}

func (s *countingStore) ListDeliveries(ctx context.Context, f webhooks.DeliveryFilter, p webhooks.Page) (*webhooks.List[*webhooks.Delivery], error) {
	s.read()
	return s.Store.ListDeliveries(ctx, f, p)
}

func (s *countingStore) ListAccountCompanies(ctx context.Context, accountID string) ([]*webhooks.Company, error) {
	s.read()
	return s.Store.ListAccountCompanies(ctx, accountID)
}

func (s *countingStore) ListAccountEndpoints(ctx context.Context, accountID string) ([]*webhooks.Endpoint, error) {
	s.read()
	return s.Store.ListAccountEndpoints(ctx, accountID)
}

func (s *countingStore) CountDeliveries(ctx context.Context, ids []string, since time.Time, bucket time.Duration, f driver.CountFilter) ([]webhooks.DeliveryCount, error) {
	s.read()
	return s.Store.CountDeliveries(ctx, ids, since, bucket, f)
}

func (s *countingStore) LastAttempts(ctx context.Context, ids []string) ([]*webhooks.Attempt, error) {
	s.read()
	return s.Store.LastAttempts(ctx, ids)
}

func (s *countingStore) FindEvent(ctx context.Context, id string) (*webhooks.Event, error) {
	s.read()
	return s.Store.FindEvent(ctx, id)
}

func (s *countingStore) FindDelivery(ctx context.Context, id string) (*webhooks.Delivery, error) {
	s.read()
	return s.Store.FindDelivery(ctx, id)
}

func (s *countingStore) ListEventDeliveries(ctx context.Context, events, endpoints []string) ([]*webhooks.Delivery, error) {
	s.read()
	return s.Store.ListEventDeliveries(ctx, events, endpoints)
}

// TestPages_Queries: the endpoints page and the events log read the store
// a fixed number of times, however many companies and endpoints the
// account has (they used to make one query per company, and walk each
// endpoint's deliveries, bodies included, to count them); an endpoint's
// page, however many of its deliveries failed without an answer.
func TestPages_Queries(t *testing.T) {
	reads := func(companies int) map[string]int64 {
		path := filepath.Join(t.TempDir(), "portal.db")
		migratedSQLite.Copy(t, path)
		db, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		st := storetest.Stack(t, db)
		a := storetest.MustCreateAccount(t, st, "")
		storetest.MustCreateEndpoint(t, st, storetest.NewAccountEndpoint(a.ID, nil, "*"))
		var failing *webhooks.Endpoint
		var failed []*webhooks.Delivery
		for ci := range companies {
			c := storetest.MustCreateCompany(t, st, a.ID)
			eps := []*webhooks.Endpoint{
				storetest.MustCreateEndpoint(t, st, storetest.NewCompanyEndpoint(c.ID, "*")),
				storetest.MustCreateEndpoint(t, st, storetest.NewCompanyEndpoint(c.ID, "*")),
			}
			for i := range 3 {
				storetest.MustRegisterEvent(t, st, storetest.NewEvent(t, "invoice.sent", c.ID, t0.Add(time.Duration(i)*time.Minute)))
			}
			if ci > 0 {
				continue
			}
			// The first endpoint's page lists as many deliveries as there
			// are companies, each failed without an answer, so that each
			// row needs its last attempt and its replays.
			failing = eps[0]
			for i := range companies {
				at := t0.Add(10*time.Minute + time.Duration(i)*time.Second)
				d := storetest.MustRegisterOne(t, st, storetest.NewEvent(t, "invoice.paid", c.ID, at), failing.ID)
				r := storetest.NewRecord(storetest.MustClaimOne(t, st, d.ID, at), at, 0,
					webhooks.Transition{Status: webhooks.DeliveryFailedPermanently, Reason: webhooks.ReasonAddressNotAllowed})
				r.Attempt.Error = "connection failed: netguard: address not allowed"
				storetest.MustRecord(t, st, r)
				failed = append(failed, d)
			}
		}
		counted := &countingStore{Store: st}
		now := func() time.Time { return t0.Add(time.Hour) }
		sessions := session.NewSigner("test-admin-key")
		h, err := portal.New(portal.Config{App: app.New(app.Config{Store: counted, Now: now}), Sessions: sessions, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		b := &bundle{store: st, sessions: sessions, clock: &clock{now: now()}, server: srv}
		c := b.signIn(t, a.ID)
		out := map[string]int64{}
		for name, path := range map[string]string{
			"/portal/": "/portal/", "/portal/events": "/portal/events", "/portal/endpoints/new": "/portal/endpoints/new",
			"an endpoint": "/portal/endpoints/" + failing.ID,
			"a delivery":  "/portal/endpoints/" + failing.ID + "/deliveries/" + failed[0].ID,
		} {
			before := counted.reads.Load()
			c.get(path, 200)
			out[name] = counted.reads.Load() - before
		}
		return out
	}
	few, many := reads(1), reads(25)
	// The session's account is read once a page: the use cases that take
	// it (Holdings) do not read it again. An endpoint's page reads it and
	// its company, its health, a page of deliveries, and the last attempts
	// and the replays of the page's (and the endpoint and its company
	// again: ListDeliveries checks the caller's reference itself; its
	// backlog is read from the queue, which this store does not count); a
	// delivery's the endpoint and its company, the delivery, its event and
	// its replays.
	want := map[string]int64{"/portal/": 5, "/portal/events": 6, "/portal/endpoints/new": 3, "an endpoint": 9, "a delivery": 6}
	for path, n := range few {
		if many[path] != n {
			t.Errorf("GET %s: %d store reads with 1 company, %d with 25; want the same", path, n, many[path])
		}
		if n > want[path] {
			t.Errorf("GET %s: %d store reads, want at most %d", path, n, want[path])
		}
	}
}

// downStore is a store whose database does not answer.
type downStore struct{ app.Store }

func (downStore) FindAccount(context.Context, string) (*webhooks.Account, error) {
	return nil, fmt.Errorf("%w: connection refused", webhooks.ErrUnavailable)
}

// TestPages_Unavailable: while the database does not answer, a page says
// so with 503 and Retry-After, not that something went wrong.
func TestPages_Unavailable(t *testing.T) {
	b := setup(t)
	c := b.signIn(t, b.a.account.ID)
	now := func() time.Time { return b.clock.Now() }
	h, err := portal.New(portal.Config{App: app.New(app.Config{Store: downStore{b.store}, Now: now}), Sessions: b.sessions, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c.b = &bundle{store: b.store, sessions: b.sessions, clock: b.clock, server: srv}
	r := c.do("GET", "/portal/", nil)
	if r.status != 503 || r.header.Get("Retry-After") != "5" || !strings.Contains(r.body, "cannot reach its database") {
		t.Errorf("GET /portal/ with the database down: got %d, Retry-After %q, want 503 saying the database is unreachable", r.status, r.header.Get("Retry-After"))
	}
}
