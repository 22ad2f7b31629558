package queue_test

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"encoding/json"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	msqlite "modernc.org/sqlite"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/queue"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

// migratedSQLite is a SQLite file that Open migrated once for the
// package's tests; each fresh store opens a copy of it (the migrations take
// most of an Open under the race detector).
var migratedSQLite = storetest.NewFileTemplate(sqlite.Migrate)

// openSQLite opens a SQLite backend in a temporary folder, and the path
// of its file.
func openSQLite(t *testing.T) (*sqlite.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	migratedSQLite.Copy(t, path)
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func newEvent(companyID string) *webhooks.Event {
	return &webhooks.Event{ID: webhooks.NewID(), Type: "invoice.sent", APIVersion: webhooks.LatestAPIVersion, Created: time.Now(),
		Livemode: true, CompanyID: companyID, Object: json.RawMessage(`{"object":"invoice"}`)}
}

// onInsert, when set, runs inside SQLite as a delivery is inserted (see
// the trigger of TestRegistrar_CallerGivesUp).
var onInsert atomic.Pointer[func()]

func init() {
	msqlite.MustRegisterScalarFunction("test_on_insert", 0, func(*msqlite.FunctionContext, []sqldriver.Value) (sqldriver.Value, error) {
		if f := onInsert.Load(); f != nil {
			(*f)()
		}
		return int64(0), nil
	})
}

// TestRegistrar_CallerGivesUp: a producer that disconnects while its
// registration is being written must not undo the others of its group.
// The group's statements once ran with each caller's context: one
// cancelled mid-statement interrupted SQLite, which rolls back the whole
// transaction, and every other registration of the group failed with it.
func TestRegistrar_CallerGivesUp(t *testing.T) {
	db, path := openSQLite(t)
	s := storetest.Stack(t, db)
	a := storetest.MustCreateAccount(t, s, "")
	busy, quiet := storetest.MustCreateCompany(t, s, a.ID), storetest.MustCreateCompany(t, s, a.ID)
	storetest.MustCreateEndpoint(t, s, storetest.NewCompanyEndpoint(busy.ID, "*"))
	quietEP := storetest.MustCreateEndpoint(t, s, storetest.NewCompanyEndpoint(quiet.ID, "*"))
	// The caller gives up while SQLite inserts its delivery, as a producer
	// whose request timed out does; the insert goes on a while after that
	// (a busy disk), so that the interruption lands in it.
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(`CREATE TRIGGER slow AFTER INSERT ON deliveries BEGIN
		SELECT test_on_insert();
		SELECT count(*) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) SELECT i FROM n);
		END`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { onInsert.Store(nil) })
	r := queue.NewRegistrar(db, nil)
	defer r.Close()
	for round := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		gone, kept := newEvent(busy.ID), newEvent(quiet.ID)
		var once sync.Once
		giveUp := func() { once.Do(cancel) }
		onInsert.Store(&giveUp)
		errs := queue.CommitGroup(r, []context.Context{ctx, context.Background()},
			[]queue.Registration{{Event: gone}, {Event: kept}})
		onInsert.Store(nil)
		cancel()
		if errs[1] != nil {
			t.Fatalf("round %d: the other registration of the group failed: %v", round, errs[1])
		}
		if ds := storetest.MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: quietEP.ID, EventID: kept.ID}); len(ds) != 1 {
			t.Fatalf("round %d: the other registration's delivery: got %d, want 1", round, len(ds))
		}
		// The registration whose caller gave up is written anyway (its
		// caller was told it gave up, not whether it committed).
		if errs[0] != nil {
			t.Errorf("round %d: the registration whose caller gave up: %v", round, errs[0])
		}
	}
}

// TestRegistrar_RefusedLeavesOthers: a refused registration (an unknown
// company) writes nothing and refuses no other of its group.
func TestRegistrar_RefusedLeavesOthers(t *testing.T) {
	db, _ := openSQLite(t)
	s := storetest.Stack(t, db)
	a := storetest.MustCreateAccount(t, s, "")
	c := storetest.MustCreateCompany(t, s, a.ID)
	ep := storetest.MustCreateEndpoint(t, s, storetest.NewCompanyEndpoint(c.ID, "*"))
	r := queue.NewRegistrar(db, nil)
	defer r.Close()
	ok1, bad, ok2 := newEvent(c.ID), newEvent(webhooks.NewID()), newEvent(c.ID)
	bg := context.Background()
	errs := queue.CommitGroup(r, []context.Context{bg, bg, bg}, []queue.Registration{{Event: ok1}, {Event: bad}, {Event: ok2}})
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("the accepted registrations: %v, %v", errs[0], errs[2])
	}
	if webhooks.ErrorCode(errs[1]) != webhooks.EUNKNOWNCOMPANY {
		t.Fatalf("the refused registration: %v, want %s", errs[1], webhooks.EUNKNOWNCOMPANY)
	}
	for _, ev := range []*webhooks.Event{ok1, ok2} {
		if ds := storetest.MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: ep.ID, EventID: ev.ID}); len(ds) != 1 {
			t.Errorf("event %s: %d deliveries, want 1", ev.ID, len(ds))
		}
	}
	if _, err := s.FindEvent(bg, bad.ID); webhooks.ErrorCode(err) != webhooks.ENOTFOUND {
		t.Errorf("the refused event: %v, want not found", err)
	}
}

// countingDriver counts the owners each registration group reads.
type countingDriver struct {
	driver.Driver
	reads [][]webhooks.OwnersKey
}

func (d *countingDriver) RegisterGroup(ctx context.Context, fn func(tx driver.RegisterTx) (*driver.GroupWrites, error)) (*driver.GroupWritten, error) {
	return d.Driver.RegisterGroup(ctx, func(tx driver.RegisterTx) (*driver.GroupWrites, error) {
		return fn(countingTx{tx, d})
	})
}

type countingTx struct {
	driver.RegisterTx
	d *countingDriver
}

func (t countingTx) Begin(ctx context.Context, r driver.GroupReads) (*driver.GroupFacts, error) {
	t.d.reads = append(t.d.reads, r.Owners)
	return t.RegisterTx.Begin(ctx, r)
}

func (t countingTx) ReadOwners(ctx context.Context, keys []webhooks.OwnersKey) ([]*webhooks.Owners, error) {
	t.d.reads = append(t.d.reads, keys)
	return t.RegisterTx.ReadOwners(ctx, keys)
}

// TestRegistrar_ReadsEachOwnerOnce: a group whose owners are not cached
// reads the owners of each key once, however many of its events share it,
// and each event is still routed by its own key's; the next group of the
// same keys reads none (they are cached).
func TestRegistrar_ReadsEachOwnerOnce(t *testing.T) {
	db, _ := openSQLite(t)
	s := storetest.Stack(t, db)
	a := storetest.MustCreateAccount(t, s, "")
	c, other := storetest.MustCreateCompany(t, s, a.ID), storetest.MustCreateCompany(t, s, a.ID)
	ep, otherEp := storetest.MustCreateEndpoint(t, s, storetest.NewCompanyEndpoint(c.ID, "*")), storetest.MustCreateEndpoint(t, s, storetest.NewCompanyEndpoint(other.ID, "*"))
	unknown := webhooks.NewID()
	counting := &countingDriver{Driver: db}
	r := queue.NewRegistrar(counting, nil)
	defer r.Close()
	companies := []string{c.ID, other.ID, c.ID, unknown, c.ID, other.ID, unknown, c.ID}
	for round := range 2 {
		var regs []queue.Registration
		var ctxs []context.Context
		for _, company := range companies {
			regs = append(regs, queue.Registration{Event: newEvent(company)})
			ctxs = append(ctxs, context.Background())
		}
		counting.reads = nil
		errs := queue.CommitGroup(r, ctxs, regs)
		read := 0
		for _, keys := range counting.reads {
			read += len(keys)
		}
		if want := []int{3, 0}[round]; read != want {
			t.Errorf("round %d: the group read the owners of %d keys, want %d", round, read, want)
		}
		for i, reg := range regs {
			switch reg.Event.CompanyID {
			case unknown:
				if webhooks.ErrorCode(errs[i]) != webhooks.EUNKNOWNCOMPANY {
					t.Errorf("registration %d of an unknown company: %v, want %s", i, errs[i], webhooks.EUNKNOWNCOMPANY)
				}
			default:
				want := map[string]string{c.ID: ep.ID, other.ID: otherEp.ID}[reg.Event.CompanyID]
				if ds := storetest.MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: want, EventID: reg.Event.ID}); errs[i] != nil || len(ds) != 1 {
					t.Errorf("registration %d: %d deliveries, %v; want one to %s", i, len(ds), errs[i], want)
				}
			}
		}
	}
}
