package app_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/storetest"
)

// healthFixture is an App on a SQLite store with a platform endpoint,
// which the operational events are routed to, and a company endpoint whose
// attempts the tests record and observe as the engine would.
type healthFixture struct {
	t        *testing.T
	st       storetest.Store
	a        *app.App
	company  *webhooks.Company
	ep       *webhooks.Endpoint
	platform *webhooks.Endpoint
	seen     int // operational events returned by opEvents so far
}

func newHealthFixture(t *testing.T) *healthFixture {
	st := openStack(t)
	f := &healthFixture{t: t, st: st, a: app.New(app.Config{Store: st, Registrar: st, AdminKey: "the-admin-key", Now: func() time.Time { return t0 }})}
	f.company = storetest.MustCreateCompany(t, st, storetest.MustCreateAccount(t, st, "").ID)
	f.ep = storetest.MustCreateEndpoint(t, st, storetest.NewCompanyEndpoint(f.company.ID, "invoice.*"))
	f.platform = storetest.MustCreateEndpoint(t, st, &webhooks.Endpoint{Scope: webhooks.ScopePlatform,
		URL: "https://ops.example.com/hooks", EnabledEvents: []string{"*"}, Livemode: true})
	return f
}

// delivery registers an event and returns its delivery to the endpoint.
func (f *healthFixture) delivery() *webhooks.Delivery {
	return storetest.MustRegisterOne(f.t, f.st, storetest.NewEvent(f.t, "invoice.sent", f.company.ID, t0), f.ep.ID)
}

// attempts makes one attempt on a new delivery per status, records them
// as one batch in that order, as the engine stores them, and hands the
// stored records to the observer.
func (f *healthFixture) attempts(statuses ...int) {
	f.t.Helper()
	var records []*webhooks.AttemptRecord
	for _, status := range statuses {
		c := storetest.MustClaimOne(f.t, f.st, f.delivery().ID, t0)
		// A failure's retry is far off: no later claim takes it.
		tr := webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: t0.Add(24 * time.Hour)}
		if status == http.StatusOK {
			tr = webhooks.Transition{Status: webhooks.DeliveryDelivered}
		}
		records = append(records, storetest.NewRecord(c, t0, status, tr))
	}
	f.record(records...)
}

// record stores a batch of records, as the engine does, and drains the
// outbox its transaction filled.
func (f *healthFixture) record(records ...*webhooks.AttemptRecord) {
	f.t.Helper()
	if err := f.st.RecordAttempts(f.t.Context(), records); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.a.DrainOutbox(f.t.Context(), 100); err != nil {
		f.t.Fatal(err)
	}
}

// opEvents returns the types of the operational events registered since
// the last call, in the order they were registered.
func (f *healthFixture) opEvents() []string {
	f.t.Helper()
	ds := storetest.MustListDeliveries(f.t, f.st, webhooks.DeliveryFilter{EndpointID: f.platform.ID})
	// Their ids are UUIDv7s: they sort in the order they were made.
	slices.SortFunc(ds, func(a, b *webhooks.Delivery) int { return strings.Compare(a.ID, b.ID) })
	var types []string
	for _, d := range ds[f.seen:] {
		types = append(types, d.EventType)
	}
	f.seen = len(ds)
	return types
}

// TestHealth_Order: when one batch of attempts both starts an
// episode and ends one, webhook_endpoint.failing and .recovered are
// registered in the order the attempts made them. Ending a failing
// endpoint's episode and starting a new one leaves it failing (recovered,
// then failing); starting one and ending it leaves it healthy (failing,
// then recovered). The batch's attempts all start at the same moment, as
// on a coarse or fake clock, so their times cannot tell the order.
func TestHealth_Order(t *testing.T) {
	const F, S = http.StatusServiceUnavailable, http.StatusOK
	recoveredThenFailing := []string{webhooks.EventEndpointRecovered, webhooks.EventEndpointFailing}
	failingThenRecovered := []string{webhooks.EventEndpointFailing, webhooks.EventEndpointRecovered}
	for _, tc := range []struct {
		name     string
		before   []int // a batch before, whose events are not checked
		statuses []int
		want     []string
	}{
		{name: "a failing endpoint recovers, then fails again", before: []int{F, F, F, F}, statuses: []int{S, F, F, F, F}, want: recoveredThenFailing},
		{name: "an episode begins and ends", before: []int{F, F, F}, statuses: []int{F, S}, want: failingThenRecovered},
		{name: "two episodes, the second still on", statuses: []int{F, F, F, F, S, F, F, F, F}, want: recoveredThenFailing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newHealthFixture(t)
			if tc.before != nil {
				f.attempts(tc.before...)
				f.opEvents()
			}
			f.attempts(tc.statuses...)
			if got := f.opEvents(); !slices.Equal(got, tc.want) {
				t.Errorf("operational events: got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestHealth_Exhausted: webhook_delivery.exhausted fires for a
// delivery the store ended failed_permanently, and not for one whose
// record asked for that but was not stored so (SPEC 14): its endpoint was
// disabled while the attempt was in flight (the delivery stays failed,
// endpoint_disabled), or its claim lapsed and another worker has it
// (pending). The observer gets every record of the batch either way.
func TestHealth_Exhausted(t *testing.T) {
	exhaust := webhooks.Transition{Status: webhooks.DeliveryFailedPermanently, Reason: webhooks.ReasonNonRetryableStatus}
	for _, tc := range []struct {
		name string
		// attempt makes the attempt on d, due at t0, and returns its
		// record, which says failed_permanently.
		attempt func(f *healthFixture, d *webhooks.Delivery) *webhooks.AttemptRecord
		status  string // the delivery's, as stored
		want    int    // exhausted events
	}{
		{name: "failed permanently", status: webhooks.DeliveryFailedPermanently, want: 1,
			attempt: func(f *healthFixture, d *webhooks.Delivery) *webhooks.AttemptRecord {
				return storetest.NewRecord(storetest.MustClaimOne(f.t, f.st, d.ID, t0), t0, 422, exhaust)
			}},
		{name: "disabled during the attempt", status: webhooks.DeliveryFailed,
			attempt: func(f *healthFixture, d *webhooks.Delivery) *webhooks.AttemptRecord {
				c := storetest.MustClaimOne(f.t, f.st, d.ID, t0)
				off := webhooks.EndpointDisabled
				if _, err := f.a.UpdateEndpoint(f.t.Context(), app.Admin(), app.EndpointRef{ID: f.ep.ID}, webhooks.EndpointUpdate{Status: &off}); err != nil {
					f.t.Fatal(err)
				}
				return storetest.NewRecord(c, t0, 422, exhaust)
			}},
		{name: "claim lapsed", status: webhooks.DeliveryPending,
			attempt: func(f *healthFixture, d *webhooks.Delivery) *webhooks.AttemptRecord {
				c := storetest.MustClaimOne(f.t, f.st, d.ID, t0)
				storetest.MustClaimOne(f.t, f.st, d.ID, t0.Add(2*time.Minute)) // after the lease
				return storetest.NewRecord(c, t0, 422, exhaust)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newHealthFixture(t)
			d := f.delivery()
			f.record(tc.attempt(f, d))
			if got := storetest.MustFindDelivery(t, f.st, d.ID).Status; got != tc.status {
				t.Fatalf("delivery status: got %s, want %s", got, tc.status)
			}
			var n int
			for _, typ := range f.opEvents() {
				if typ == webhooks.EventDeliveryExhausted {
					n++
				}
			}
			if n != tc.want {
				t.Errorf("exhausted events: got %d, want %d", n, tc.want)
			}
		})
	}
}
