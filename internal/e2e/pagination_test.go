package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// This file walks every list of the API page by page (SPEC section 7):
// each item exactly once, newest first, has_more right, limit 1 to 100,
// cursors and unknown parameters refused, and the walk unchanged while
// new items keep arriving between pages.

// paginationFixture is an account with data in every list.
type paginationFixture struct {
	ts                              *testService
	acme                            fixture
	companyEvents, accountEvents    []string // oldest first
	companyEPs, accountEPs          []string // oldest first
	sink                            endpoint // receives every invoice event
	deliveredEvents, rejectedEvents []string // oldest first, by what the sink answered
}

func newPaginationFixture(t *testing.T) *paginationFixture {
	ts := startService(t, "")
	f := &paginationFixture{ts: ts, acme: ts.newAccount("Acme", "", "B12345674")}
	s := newSink(t)
	// invoice.rejected gets a 422: failed_permanently at once.
	s.setRespond(func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Factuarea-Event-Type") == "invoice.rejected" {
			w.WriteHeader(http.StatusUnprocessableEntity)
		}
	})
	companyParent, accountParent := "/v1/companies/"+f.acme.companyID, "/v1/accounts/"+f.acme.accountID
	f.sink = ts.newEndpoint(companyParent, f.acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
	f.companyEPs = append(f.companyEPs, f.sink.id)
	for i := range 8 {
		f.companyEPs = append(f.companyEPs, ts.newEndpoint(companyParent, f.acme.key, object{"url": "https://93.184.216.34/c" + fmt.Sprint(i), "enabled_events": []string{"nothing.here"}}).id)
		f.accountEPs = append(f.accountEPs, ts.newEndpoint(accountParent, f.acme.key, object{"url": "https://93.184.216.34/a" + fmt.Sprint(i), "enabled_events": []string{"nothing.here"}}).id)
	}
	// A deleted endpoint is in no list.
	gone := ts.newEndpoint(companyParent, f.acme.key, object{"url": "https://93.184.216.34/gone", "enabled_events": []string{"*"}})
	ts.must(204, "DELETE", gone.path, f.acme.key, nil, nil)

	for i := range 23 {
		typ := "invoice.sent"
		if i%3 == 1 {
			typ = "invoice.rejected"
		}
		id := ts.registerEvent(eventIn(f.acme.companyID, typ))["id"].(string)
		f.companyEvents = append(f.companyEvents, id)
		f.accountEvents = append(f.accountEvents, id)
		if typ == "invoice.rejected" {
			f.rejectedEvents = append(f.rejectedEvents, id)
		} else {
			f.deliveredEvents = append(f.deliveredEvents, id)
		}
		if i%5 == 0 {
			f.accountEvents = append(f.accountEvents, ts.registerEvent(object{"type": "account.updated", "account_id": f.acme.accountID, "data": object{"object": object{"object": "account"}}})["id"].(string))
		}
	}
	s.waitRequests(t, 23, 10*time.Second)
	ts.waitFor("every delivery settled", 10*time.Second, func() bool {
		return len(ts.storeDeliveries(f.sink.id, webhooks.DeliveryPending)) == 0
	})
	return f
}

// lists returns every list of the fixture: its path and its items newest
// first (nil for the audit log, which is checked for order and
// uniqueness only).
func (f *paginationFixture) lists() []struct {
	name, path string
	want       []string
	field      string
} {
	c, a := "/v1/companies/"+f.acme.companyID, "/v1/accounts/"+f.acme.accountID
	return []struct {
		name, path string
		want       []string
		field      string
	}{
		{"company events", c + "/events", reversed(f.companyEvents), "id"},
		{"company events by type", c + "/events?type=invoice.rejected", reversed(f.rejectedEvents), "id"},
		{"account events", a + "/events", reversed(f.accountEvents), "id"},
		{"company endpoints", c + "/webhook_endpoints", reversed(f.companyEPs), "id"},
		{"account endpoints", a + "/webhook_endpoints", reversed(f.accountEPs), "id"},
		{"deliveries", f.sink.path + "/deliveries", reversed(f.companyEvents), "event_id"},
		{"deliveries by status", f.sink.path + "/deliveries?status=failed_permanently", reversed(f.rejectedEvents), "event_id"},
		{"deliveries by status", f.sink.path + "/deliveries?status=delivered", reversed(f.deliveredEvents), "event_id"},
		{"deliveries by event", f.sink.path + "/deliveries?event_id=" + f.companyEvents[4], []string{f.companyEvents[4]}, "event_id"},
		{"audit log", a + "/audit_log", nil, "id"},
	}
}

// checkOrder checks that items are newest first by created, with no id
// twice.
func checkOrder(t *testing.T, name string, items []object) {
	t.Helper()
	seen := map[string]bool{}
	for i, o := range items {
		id := o["id"].(string)
		if seen[id] {
			t.Errorf("%s: %s listed twice", name, id)
		}
		seen[id] = true
		if i > 0 && o["created"].(float64) > items[i-1]["created"].(float64) {
			t.Errorf("%s: item %d (created %v) after an older one (created %v)", name, i, o["created"], items[i-1]["created"])
		}
	}
}

// TestPagination walks every list with several page sizes.
func TestPagination(t *testing.T) {
	f := newPaginationFixture(t)
	ts := f.ts
	for _, l := range f.lists() {
		var first []string
		for _, limit := range []int{1, 2, 7, 20, 100} {
			items := ts.walk(l.path, f.acme.key, limit, nil)
			checkOrder(t, fmt.Sprintf("%s (limit %d)", l.name, limit), items)
			got := ids(items, l.field)
			if l.want != nil && !slices.Equal(got, l.want) {
				t.Errorf("%s, limit %d: got %v, want %v", l.path, limit, got, l.want)
			}
			if first == nil {
				first = got
			} else if !slices.Equal(got, first) {
				t.Errorf("%s: limit %d lists %v, limit 1 listed %v", l.path, limit, got, first)
			}
		}
		if l.want == nil && len(first) < 20 {
			t.Errorf("%s: only %d items", l.path, len(first))
		}
	}
	// The default page is 20.
	var page listPage
	ts.must(200, "GET", "/v1/companies/"+f.acme.companyID+"/events", f.acme.key, nil, &page)
	if len(page.Data) != 20 || !page.HasMore {
		t.Errorf("default page: got %d items, has_more %t, want 20 and true", len(page.Data), page.HasMore)
	}
	// A full last page has has_more false.
	ts.must(200, "GET", "/v1/companies/"+f.acme.companyID+"/events?limit=23", f.acme.key, nil, &page)
	if len(page.Data) != 23 || page.HasMore {
		t.Errorf("limit 23 of 23: got %d items, has_more %t, want 23 and false", len(page.Data), page.HasMore)
	}
}

// TestPaginationErrors: limit outside 1–100 or not a number, a cursor that
// is not an item of the list, and an unknown parameter are refused.
func TestPaginationErrors(t *testing.T) {
	f := newPaginationFixture(t)
	ts := f.ts
	other := ts.newAccount("Other", "", "A58818501")
	otherEvent := ts.registerEvent(eventIn(other.companyID, "invoice.sent"))["id"].(string)
	for _, l := range f.lists() {
		sep := "?"
		if strings.Contains(l.path, "?") {
			sep = "&"
		}
		for _, bad := range []string{"limit=0", "limit=101", "limit=abc", "limit=-1", "limit=1.5"} {
			ts.wantError(400, "invalid_request", "GET", l.path+sep+bad, f.acme.key, nil)
		}
		// limit= (empty) is the default.
		for _, good := range []string{"limit=1", "limit=100", "limit="} {
			ts.must(200, "GET", l.path+sep+good, f.acme.key, nil, nil)
		}
		// Not an id; an id of nothing; an item of another list (another
		// company's event; an endpoint of the other scope).
		foreign := f.accountEPs[0]
		if l.name == "account endpoints" {
			foreign = f.companyEPs[0]
		}
		for _, cursor := range []string{"abc", webhooks.NewID(), otherEvent, foreign} {
			ts.wantError(400, "invalid_request", "GET", l.path+sep+"starting_after="+cursor, f.acme.key, nil)
		}
		ts.wantError(400, "unknown_field", "GET", l.path+sep+"page=2", f.acme.key, nil)
		ts.wantError(400, "unknown_field", "GET", l.path+sep+"ending_before="+webhooks.NewID(), f.acme.key, nil)
	}
}

// TestPaginationWhileEventsArrive walks each list while new items keep
// arriving between pages: the walk lists every item that existed when it
// started, exactly once, and nothing else (new items are newer than the
// cursor).
func TestPaginationWhileEventsArrive(t *testing.T) {
	f := newPaginationFixture(t)
	ts := f.ts
	n := 0
	arrive := func() {
		n++
		ts.registerEvent(eventIn(f.acme.companyID, []string{"invoice.sent", "invoice.rejected"}[n%2]))
		if n%3 == 0 {
			ts.registerEvent(object{"type": "account.updated", "account_id": f.acme.accountID, "data": object{"object": object{"object": "account"}}})
		}
		parent := []string{"/v1/companies/" + f.acme.companyID, "/v1/accounts/" + f.acme.accountID}[n%2]
		ts.newEndpoint(parent, f.acme.key, object{"url": "https://93.184.216.34/new", "enabled_events": []string{"nothing.here"}})
	}
	for i, l := range f.lists() {
		// What the list holds when the walk starts (the walks before this
		// one added items).
		want := ids(ts.walk(l.path, f.acme.key, 100, nil), l.field)
		if i == 0 && !slices.Equal(want, l.want) {
			t.Fatalf("%s: got %v, want %v", l.path, want, l.want)
		}
		items := ts.walk(l.path, f.acme.key, 5, arrive)
		checkOrder(t, l.name, items)
		if got := ids(items, l.field); !slices.Equal(got, want) {
			t.Errorf("%s while events arrive: got %v, want %v", l.path, got, want)
		}
	}
	// The new items are there for a new walk, at the head.
	var page listPage
	ts.must(200, "GET", "/v1/companies/"+f.acme.companyID+"/events?limit=1", f.acme.key, nil, &page)
	if page.Data[0]["id"] == f.companyEvents[len(f.companyEvents)-1] {
		t.Errorf("the newest event is still the fixture's last")
	}
}

// TestPaginationCursorLeavesFilter: the cursor is a position in the list,
// so a walk goes on when the item it names has left the filtered list
// meanwhile (a pending delivery delivered, an endpoint deleted).
func TestPaginationCursorLeavesFilter(t *testing.T) {
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	clock, opt := stepClock(t0)
	ts := startService(t, "", opt)
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSwitchSink(t)
	s.down.Store(true)
	ep := ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
	var events []string
	for i := range 4 {
		clock.Set(t0.Add(time.Duration(i) * 10 * time.Second))
		events = append(events, ts.registerEvent(eventIn(acme.companyID, "invoice.sent"))["id"].(string))
		ts.settle(clock, ep.id)
	}
	// Retries are due at t0+60s, +70s, +80s and +90s (no jitter).
	var page listPage
	ts.must(200, "GET", ep.path+"/deliveries?status=pending&limit=2", acme.key, nil, &page)
	if got := ids(page.Data, "event_id"); !slices.Equal(got, []string{events[3], events[2]}) {
		t.Fatalf("first page: got %v, want the two newest", got)
	}
	cursor := page.Data[1]["id"].(string)
	// The receiver is back; the three oldest are retried and delivered,
	// the cursor's among them.
	s.down.Store(false)
	clock.Set(t0.Add(85 * time.Second))
	ts.settle(clock, ep.id)
	ts.must(200, "GET", ep.path+"/deliveries?status=pending&limit=2&starting_after="+cursor, acme.key, nil, &page)
	if len(page.Data) != 0 || page.HasMore {
		t.Errorf("second page: got %v, want none left pending", page.Data)
	}
	ts.must(200, "GET", ep.path+"/deliveries?status=delivered&limit=2&starting_after="+cursor, acme.key, nil, &page)
	if got := ids(page.Data, "event_id"); !slices.Equal(got, []string{events[1], events[0]}) {
		t.Errorf("delivered after the cursor: got %v, want %v", got, []string{events[1], events[0]})
	}

	// Endpoints: the cursor's endpoint is deleted between pages.
	parent := "/v1/companies/" + acme.companyID
	var eps []string
	for i := range 3 {
		eps = append(eps, ts.newEndpoint(parent, acme.key, object{"url": fmt.Sprintf("https://93.184.216.34/%d", i), "enabled_events": []string{"nothing.here"}}).id)
	}
	ts.must(200, "GET", parent+"/webhook_endpoints?limit=1", acme.key, nil, &page)
	ts.must(204, "DELETE", parent+"/webhook_endpoints/"+eps[2], acme.key, nil, nil)
	ts.must(200, "GET", parent+"/webhook_endpoints?limit=5&starting_after="+eps[2], acme.key, nil, &page)
	if got := ids(page.Data, "id"); !slices.Equal(got, []string{eps[1], eps[0]}) {
		t.Errorf("endpoints after a deleted cursor: got %v, want %v", got, []string{eps[1], eps[0]})
	}
	// A cursor of another list is still refused.
	ts.wantError(400, "invalid_request", "GET", parent+"/webhook_endpoints?starting_after="+ep.id, acme.key, nil)
	ts.wantError(400, "invalid_request", "GET", ep.path+"/deliveries?starting_after="+eps[0], acme.key, nil)
}
