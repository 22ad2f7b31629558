package sqlite

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	msqlite "modernc.org/sqlite"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/storetest"
)

// onInsert, when set, runs inside SQLite as a delivery is inserted (see
// the trigger of TestCommitGroup_CallerGivesUp).
var onInsert atomic.Pointer[func()]

func init() {
	msqlite.MustRegisterScalarFunction("test_on_insert", 0, func(*msqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		if f := onInsert.Load(); f != nil {
			(*f)()
		}
		return int64(0), nil
	})
}

// TestCommitGroup_CallerGivesUp: a producer that disconnects while its
// registration is being written must not undo the others of its group.
// The group's statements used to run with each caller's context: one
// cancelled mid-statement interrupted SQLite, which rolls back the whole
// transaction, and every other registration of the group failed with it.
func TestCommitGroup_CallerGivesUp(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	a := storetest.MustCreateAccount(t, s, "")
	busy, quiet := storetest.MustCreateCompany(t, s, a.ID), storetest.MustCreateCompany(t, s, a.ID)
	storetest.MustCreateEndpoint(t, s, storetest.NewCompanyEndpoint(busy.ID, "*"))
	quietEP := storetest.MustCreateEndpoint(t, s, storetest.NewCompanyEndpoint(quiet.ID, "*"))
	// The caller gives up while SQLite inserts its delivery, as a producer
	// whose request timed out does; the insert goes on a while after that
	// (a busy disk), so that the interruption lands in it.
	if _, err := s.write.Exec(`CREATE TEMP TRIGGER slow AFTER INSERT ON main.deliveries BEGIN
		SELECT test_on_insert();
		SELECT count(*) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) SELECT i FROM n);
		END`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { onInsert.Store(nil) })
	event := func(companyID string) *webhooks.Event {
		return &webhooks.Event{ID: webhooks.NewID(), Type: "invoice.sent", APIVersion: webhooks.LatestAPIVersion, Created: time.Now(),
			Livemode: true, CompanyID: companyID, Object: json.RawMessage(`{"object":"invoice"}`)}
	}
	for round := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		gone := &registration{ctx: ctx, ev: event(busy.ID)}
		other := &registration{ctx: context.Background(), ev: event(quiet.ID)}
		var once sync.Once
		giveUp := func() { once.Do(cancel) }
		onInsert.Store(&giveUp)
		s.commitGroup([]*registration{gone, other})
		onInsert.Store(nil)
		cancel()
		if other.err != nil {
			t.Fatalf("round %d: the other registration of the group failed: %v", round, other.err)
		}
		ds := storetest.MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: quietEP.ID, EventID: other.ev.ID})
		if len(ds) != 1 {
			t.Fatalf("round %d: the other registration's delivery: got %d, want 1", round, len(ds))
		}
		// The registration whose caller gave up is written anyway (its
		// caller was told it gave up, not whether it committed).
		if gone.err != nil {
			t.Errorf("round %d: the registration whose caller gave up: %v", round, gone.err)
		}
	}
}
