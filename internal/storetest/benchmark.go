package storetest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/bodycodec"
	"github.com/factuarea/webhooks/internal/driver"
)

// BulkLoader is implemented by a store under benchmark that can store many
// events and deliveries at once, as given (no routing, no audit): loading a
// million rows through RegisterEvent would take longer than everything
// measured. Benchmark uses it when the store has it.
type BulkLoader interface {
	BulkLoad(ctx context.Context, events []*webhooks.Event, deliveries []*webhooks.Delivery) error
}

// ListFixture is what Benchmark loads: a company with rows events, each
// delivered to one company endpoint.
type ListFixture struct {
	Company  *webhooks.Company
	Endpoint *webhooks.Endpoint
	Events   []string // ids, oldest first
	Rare     []int    // indexes of the events of the rare type
	// Settled is set when the deliveries have their final states (bulk
	// loaded): the rare events' failed_permanently, the others delivered.
	// Otherwise they are all pending.
	Settled bool
}

// rareEvery is how often an event is of the rare type (invoice.paid) and
// its delivery failed_permanently: the filtered lists' matches are that
// sparse.
const rareEvery = 100

// Benchmark measures the list queries on a store of rows events of one
// company, each with one delivery to one endpoint: the first page, a deep
// page (starting_after near the end of the list), and filtered pages
// (status, event_id, type, a time range; also a status and a type that
// nothing has), 20 items each. A list served by
// an index takes the same time per page at any size: compare the
// ns/op of rows=10000 and rows=1000000. open returns a fresh, empty store.
//
// Run it with a fixed count, and not under -race:
//
//	go test -run '^$' -bench Lists -benchtime 200x ./internal/sqlite
func Benchmark(b *testing.B, open func(b *testing.B) driver.Driver, rows int) {
	s := Stack(b, open(b))
	start := time.Now()
	f := LoadLists(b, s, rows)
	b.Logf("loaded %d events and %d deliveries in %s", rows, rows, time.Since(start).Round(time.Millisecond))
	ctx := context.Background()

	// The cursors: the item 100 from the end of each list (the lists are
	// newest first, so near the oldest).
	deepEvent := f.Events[min(100, rows-1)]
	deepRare := f.Events[f.Rare[min(5, len(f.Rare)-1)]]
	deepDelivery := firstDelivery(b, s, f, deepEvent)
	deepRareDelivery := firstDelivery(b, s, f, deepRare)
	oldEvent := f.Events[min(50, rows-1)]
	windowStart := t0.Add(time.Duration(rows/2) * time.Second) // 1000 events in [start, start+1000s)
	page := func(after string) webhooks.Page { return webhooks.Page{Limit: 20, StartingAfter: after} }

	run := func(name string, want int, list func() (int, error)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				n, err := list()
				took = append(took, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				if n != want {
					b.Fatalf("got %d items, want %d", n, want)
				}
			}
			// The API's promise is about the slow pages too.
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
		})
	}
	deliveries := func(f webhooks.DeliveryFilter, p webhooks.Page) func() (int, error) {
		return func() (int, error) {
			l, err := s.ListDeliveries(ctx, f, p)
			if err != nil {
				return 0, err
			}
			return len(l.Data), nil
		}
	}
	events := func(f webhooks.EventFilter, p webhooks.Page) func() (int, error) {
		return func() (int, error) {
			l, err := s.ListEvents(ctx, f, p)
			if err != nil {
				return 0, err
			}
			return len(l.Data), nil
		}
	}
	ep := webhooks.DeliveryFilter{EndpointID: f.Endpoint.ID}
	failed := webhooks.DeliveryFilter{EndpointID: f.Endpoint.ID, Status: webhooks.DeliveryFailedPermanently}
	company := webhooks.EventFilter{CompanyID: f.Company.ID}
	account := webhooks.EventFilter{AccountID: f.Company.AccountID}
	rare := webhooks.EventFilter{CompanyID: f.Company.ID, Type: "invoice.paid"}
	window := webhooks.EventFilter{CompanyID: f.Company.ID, CreatedGTE: windowStart, CreatedLT: windowStart.Add(1000 * time.Second)}
	nRare := min(20, len(f.Rare))

	run("ListDeliveries/first", 20, deliveries(ep, page("")))
	run("ListDeliveries/deep", 20, deliveries(ep, page(deepDelivery)))
	if f.Settled {
		run("ListDeliveries/status", nRare, deliveries(failed, page("")))
		run("ListDeliveries/status_deep", 5, deliveries(failed, page(deepRareDelivery)))
		// A status no delivery has: the worst case of a filter the index
		// does not serve (every row read).
		run("ListDeliveries/status_none", 0, deliveries(webhooks.DeliveryFilter{EndpointID: f.Endpoint.ID, Status: webhooks.DeliveryFailed}, page("")))
		// The pending ones, none in a settled history: a store that finds
		// them elsewhere than in the history (PostgreSQL: its queue) must
		// not read the history either.
		run("ListDeliveries/status_pending", 0, deliveries(webhooks.DeliveryFilter{EndpointID: f.Endpoint.ID, Status: webhooks.DeliveryPending}, page("")))
		// The common status, which a store may serve by the endpoint's
		// index rather than by a status index.
		run("ListDeliveries/status_delivered", 20, deliveries(webhooks.DeliveryFilter{EndpointID: f.Endpoint.ID, Status: webhooks.DeliveryDelivered}, page("")))
	}
	run("ListDeliveries/event_id", 1, deliveries(webhooks.DeliveryFilter{EndpointID: f.Endpoint.ID, EventID: oldEvent}, page("")))
	run("ListEvents/first", 20, events(company, page("")))
	run("ListEvents/deep", 20, events(company, page(deepEvent)))
	run("ListEvents/account_deep", 20, events(account, page(deepEvent)))
	run("ListEvents/type", nRare, events(rare, page("")))
	run("ListEvents/type_deep", 5, events(rare, page(deepRare)))
	run("ListEvents/type_none", 0, events(webhooks.EventFilter{CompanyID: f.Company.ID, Type: "invoice.voided"}, page("")))
	run("ListEvents/created_range", 20, events(window, page("")))
}

// BenchmarkRows are the sizes the list benchmarks load: 10 thousand and a
// million events, or those WEBHOOKS_BENCH_ROWS lists (comma-separated),
// such as 2000000 for the two million deliveries.
func BenchmarkRows(tb testing.TB) []int {
	v := os.Getenv("WEBHOOKS_BENCH_ROWS")
	if v == "" {
		return []int{10_000, 1_000_000}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			tb.Fatalf("WEBHOOKS_BENCH_ROWS=%q: want sizes such as 10000,2000000", v)
		}
		out = append(out, n)
	}
	return out
}

// firstDelivery returns the endpoint's delivery of an event.
func firstDelivery(b *testing.B, s Store, f *ListFixture, eventID string) string {
	b.Helper()
	l, err := s.ListDeliveries(context.Background(), webhooks.DeliveryFilter{EndpointID: f.Endpoint.ID, EventID: eventID}, webhooks.Page{Limit: 1})
	if err != nil {
		b.Fatalf("the delivery of event %s: %v", eventID, err)
	}
	if len(l.Data) != 1 {
		b.Fatalf("the delivery of event %s: %d found, want 1", eventID, len(l.Data))
	}
	return l.Data[0].ID
}

// LoadLists creates a company and an endpoint of it and loads rows events
// of the company, one second apart from t0, each with its delivery to the
// endpoint: every rareEvery-th event is an invoice.paid whose delivery
// failed permanently, the others invoice.sent, delivered.
func LoadLists(tb testing.TB, s Store, rows int) *ListFixture {
	tb.Helper()
	ctx := context.Background()
	a := MustCreateAccount(tb, s, "")
	c := MustCreateCompany(tb, s, a.ID)
	ep := MustCreateEndpoint(tb, s, NewCompanyEndpoint(c.ID, "invoice.*"))
	f := &ListFixture{Company: c, Endpoint: ep, Events: make([]string, rows)}
	event := func(i int) *webhooks.Event {
		typ := "invoice.sent"
		if i%rareEvery == rareEvery/2 {
			typ = "invoice.paid"
			f.Rare = append(f.Rare, i)
		}
		ev := &webhooks.Event{
			ID: webhooks.NewID(), Type: typ, APIVersion: webhooks.LatestAPIVersion, Created: t0.Add(time.Duration(i) * time.Second),
			Livemode: true, AccountID: a.ID, CompanyID: c.ID,
			Object: []byte(fmt.Sprintf(`{"object":"invoice","id":"inv_%08d","number":"FAC-2026-%08d","status":"sent","total":"1210.00","currency":"EUR"}`, i, i)),
		}
		f.Events[i] = ev.ID
		return ev
	}

	bulk, ok := s.(BulkLoader)
	if st, isStack := s.(*stack); isStack && !ok {
		bulk, ok = st.Driver.(BulkLoader)
	}
	if !ok {
		// Through the interface: registrations in parallel (a store may
		// commit them in groups); the deliveries stay pending.
		evs := make([]*webhooks.Event, rows)
		for i := range rows {
			evs[i] = event(i)
		}
		var wg sync.WaitGroup
		next := make(chan int)
		for range 16 {
			wg.Go(func() {
				for i := range next {
					if _, _, _, err := s.RegisterEvent(ctx, evs[i], nil); err != nil {
						tb.Errorf("RegisterEvent: %v", err)
					}
				}
			})
		}
		for i := range rows {
			next <- i
		}
		close(next)
		wg.Wait()
		return f
	}

	f.Settled = true
	const batch = 10_000
	for lo := 0; lo < rows; lo += batch {
		hi := min(lo+batch, rows)
		evs := make([]*webhooks.Event, 0, hi-lo)
		ds := make([]*webhooks.Delivery, 0, hi-lo)
		for i := lo; i < hi; i++ {
			ev := event(i)
			d, err := webhooks.NewDelivery(ev, ep, ev.Created)
			if err != nil {
				tb.Fatal(err)
			}
			d.AttemptCount, d.NextAttemptAt = 1, time.Time{}
			if ev.Type == "invoice.paid" {
				d.Status, d.Reason, d.LastResponseStatus = webhooks.DeliveryFailedPermanently, webhooks.ReasonNonRetryableStatus, 410
			} else {
				d.Status, d.LastResponseStatus = webhooks.DeliveryDelivered, 200
			}
			evs, ds = append(evs, ev), append(ds, d)
		}
		if err := bulk.BulkLoad(ctx, evs, ds); err != nil {
			tb.Fatalf("BulkLoad: %v", err)
		}
	}
	return f
}

// BodyNumbers numbers each event's distinct bodies from 1, as the drivers
// store them (one row per event and rendering), for the benchmarks that
// bulk-load a history: n[i] is ds[i]'s number, 0 for a delivery without a
// body; rows are each body once, (event id, number, stored bytes: bodycodec), in the order
// first used.
func BodyNumbers(ds []*webhooks.Delivery) (n []int, rows [][]any) {
	type key struct{ event, body string }
	numbers, counts := map[key]int{}, map[string]int{}
	n = make([]int, len(ds))
	for i, d := range ds {
		if len(d.Body) == 0 {
			continue
		}
		k := key{d.EventID, string(d.Body)}
		num, ok := numbers[k]
		if !ok {
			counts[d.EventID]++
			num = counts[d.EventID]
			numbers[k] = num
			rows = append(rows, []any{d.EventID, num, bodycodec.Encode(d.Body)})
		}
		n[i] = num
	}
	return n, rows
}
