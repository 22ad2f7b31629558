package storetest

import (
	"bytes"
	"slices"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// checkEvent reports the fields of got that differ from want's.
func checkEvent(tb testing.TB, name string, got, want *webhooks.Event) {
	tb.Helper()
	if got.ID != want.ID || got.Type != want.Type || got.APIVersion != want.APIVersion || got.Livemode != want.Livemode || got.Test != want.Test {
		tb.Errorf("%s: got %s %s version %s livemode %t test %t, want %s %s version %s livemode %t test %t", name,
			got.ID, got.Type, got.APIVersion, got.Livemode, got.Test, want.ID, want.Type, want.APIVersion, want.Livemode, want.Test)
	}
	if got.CorrelationID != want.CorrelationID || got.AccountID != want.AccountID || got.CompanyID != want.CompanyID {
		tb.Errorf("%s: got correlation %q account %q company %q, want %q %q %q", name,
			got.CorrelationID, got.AccountID, got.CompanyID, want.CorrelationID, want.AccountID, want.CompanyID)
	}
	if !bytes.Equal(got.Object, want.Object) {
		tb.Errorf("%s: object: got %s, want %s", name, got.Object, want.Object)
	}
	checkTime(tb, name+": created", got.Created, want.Created)
}

func testRegisterEvent(t *testing.T, open func(t *testing.T) Store) {
	group(t, "RegisterEvent", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			ev := NewEvent(t, "invoice.sent", c.ID, at(time.Hour))
			ev.CorrelationID, ev.Livemode = webhooks.NewID(), false
			got, ds, created, err := s.RegisterEvent(t.Context(), ev, nil)
			if err != nil {
				t.Fatalf("RegisterEvent: %v", err)
			}
			if !created || got.ID != ev.ID || len(ds) != 0 {
				t.Errorf("RegisterEvent: got %s created %t with %d deliveries, want %s created with none", got.ID, created, len(ds), ev.ID)
			}
			// The event's account comes from its company.
			if ev.AccountID != a.ID || got.AccountID != a.ID {
				t.Errorf("account id: got %q (returned %q), want %s", ev.AccountID, got.AccountID, a.ID)
			}
			checkEvent(t, "FindEvent", MustFindEvent(t, s, ev.ID), ev)
		})

		t.Run("AccountIDOfTheCompany", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			ev := NewEvent(t, "invoice.sent", c.ID, at(time.Hour))
			ev.AccountID = a.ID
			MustRegisterEvent(t, s, ev)
			checkEvent(t, "FindEvent", MustFindEvent(t, s, ev.ID), ev)
		})

		t.Run("ErrUnknownCompany", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			for name, ev := range map[string]*webhooks.Event{
				"company event": NewEvent(t, "invoice.sent", webhooks.NewID(), t0),
				"account event": NewEvent(t, "account.company_added", webhooks.NewID(), t0),
			} {
				if name == "account event" {
					ev.AccountID = a.ID
				}
				_, _, _, err := s.RegisterEvent(t.Context(), ev, nil)
				checkCode(t, name, err, webhooks.EUNKNOWNCOMPANY)
				_, err = s.FindEvent(t.Context(), ev.ID)
				checkCode(t, name+": FindEvent", err, webhooks.ENOTFOUND)
			}
		})

		t.Run("ErrUnknownAccount", func(t *testing.T) {
			s := setup(t, open)
			ev := NewAccountEvent(t, "account.updated", webhooks.NewID(), t0)
			_, _, _, err := s.RegisterEvent(t.Context(), ev, nil)
			checkCode(t, "RegisterEvent", err, webhooks.EUNKNOWNACCOUNT)
			_, err = s.FindEvent(t.Context(), ev.ID)
			checkCode(t, "FindEvent", err, webhooks.ENOTFOUND)
		})

		t.Run("ErrUnprocessable", func(t *testing.T) {
			s := setup(t, open)
			a, b := MustCreateAccount(t, s, ""), MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			MustCreateEndpoint(t, s, NewAccountEndpoint(b.ID, nil, "*"))
			// account_id names another account than the company's owner.
			ev := NewEvent(t, "invoice.sent", c.ID, t0)
			ev.AccountID = b.ID
			_, _, _, err := s.RegisterEvent(t.Context(), ev, nil)
			checkCode(t, "RegisterEvent", err, webhooks.EUNPROCESSABLE)
			_, err = s.FindEvent(t.Context(), ev.ID)
			checkCode(t, "FindEvent", err, webhooks.ENOTFOUND)
			if claims := MustClaim(t, s, at(time.Hour), 10); len(claims) != 0 {
				t.Errorf("claims: got %d, want 0", len(claims))
			}
		})

		t.Run("Idempotent", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			key := &webhooks.IdempotencyKey{Key: "order-17-sent", RequestHash: []byte("hash 1"), Created: at(time.Hour)}
			first := NewEvent(t, "invoice.sent", c.ID, at(time.Hour))
			got, ds, created, err := s.RegisterEvent(t.Context(), first, key)
			if err != nil || !created || got.ID != first.ID || len(ds) != 1 {
				t.Fatalf("RegisterEvent: got %v created %t with %d deliveries (%v), want the event created with 1", got, created, len(ds), err)
			}
			// The producer retries within the window: the first event, and
			// nothing new.
			for _, after := range []time.Duration{time.Second, webhooks.IdempotencyWindow - time.Minute} {
				again := NewEvent(t, "invoice.sent", c.ID, at(time.Hour+after))
				retry := &webhooks.IdempotencyKey{Key: key.Key, RequestHash: []byte("hash 1"), Created: again.Created}
				got, ds, created, err := s.RegisterEvent(t.Context(), again, retry)
				if err != nil {
					t.Fatalf("RegisterEvent again after %s: %v", after, err)
				}
				if created || len(ds) != 0 {
					t.Errorf("after %s: got created %t with %d deliveries, want not created, none", after, created, len(ds))
				}
				checkEvent(t, "after "+after.String()+": returned event", got, first)
				_, err = s.FindEvent(t.Context(), again.ID)
				checkCode(t, "after "+after.String()+": FindEvent of the repeat", err, webhooks.ENOTFOUND)
			}
			if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: e.ID}); len(ds) != 1 {
				t.Errorf("deliveries: got %d, want 1", len(ds))
			}
		})

		t.Run("ErrIdempotencyKeyReused", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			key := &webhooks.IdempotencyKey{Key: "k1", RequestHash: []byte("hash 1"), Created: t0}
			if _, _, _, err := s.RegisterEvent(t.Context(), NewEvent(t, "invoice.sent", c.ID, t0), key); err != nil {
				t.Fatalf("RegisterEvent: %v", err)
			}
			other := NewEvent(t, "invoice.paid", c.ID, at(time.Minute))
			_, _, _, err := s.RegisterEvent(t.Context(), other, &webhooks.IdempotencyKey{Key: "k1", RequestHash: []byte("hash 2"), Created: other.Created})
			checkCode(t, "RegisterEvent with the key and another request", err, webhooks.EIDEMPOTENCYREUSED)
			_, err = s.FindEvent(t.Context(), other.ID)
			checkCode(t, "FindEvent of the refused event", err, webhooks.ENOTFOUND)
			if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: e.ID}); len(ds) != 1 {
				t.Errorf("deliveries: got %d, want 1", len(ds))
			}
			// Another key is another request.
			MustRegisterOne(t, s, NewEvent(t, "invoice.paid", c.ID, at(time.Minute)), e.ID)
		})

		// A refused request registers nothing, its key included: the
		// producer may fix the request and send it again with the key.
		t.Run("IdempotencyKeyOfRefusedRequest", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			bad := NewEvent(t, "invoice.sent", webhooks.NewID(), t0)
			_, _, _, err := s.RegisterEvent(t.Context(), bad, &webhooks.IdempotencyKey{Key: "k1", RequestHash: []byte("hash 1"), Created: t0})
			checkCode(t, "RegisterEvent", err, webhooks.EUNKNOWNCOMPANY)
			fixed := NewEvent(t, "invoice.sent", c.ID, at(time.Minute))
			got, _, created, err := s.RegisterEvent(t.Context(), fixed, &webhooks.IdempotencyKey{Key: "k1", RequestHash: []byte("hash 2"), Created: fixed.Created})
			if err != nil || !created || got.ID != fixed.ID {
				t.Errorf("RegisterEvent of the fixed request: got %v created %t (%v), want the fixed event created", got, created, err)
			}
		})

		t.Run("IdempotencyKeyExpired", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			first := NewEvent(t, "invoice.sent", c.ID, t0)
			if _, _, _, err := s.RegisterEvent(t.Context(), first, &webhooks.IdempotencyKey{Key: "k1", RequestHash: []byte("hash 1"), Created: t0}); err != nil {
				t.Fatalf("RegisterEvent: %v", err)
			}
			// Past the window the key is forgotten: whatever the request,
			// it registers a new event...
			later := at(webhooks.IdempotencyWindow + time.Minute)
			second := NewEvent(t, "invoice.paid", c.ID, later)
			got, ds, created, err := s.RegisterEvent(t.Context(), second, &webhooks.IdempotencyKey{Key: "k1", RequestHash: []byte("hash 2"), Created: later})
			if err != nil {
				t.Fatalf("RegisterEvent after the window: %v", err)
			}
			if !created || got.ID != second.ID || len(ds) != 1 {
				t.Errorf("after the window: got %s created %t with %d deliveries, want %s created with 1", got.ID, created, len(ds), second.ID)
			}
			// ...which the key now names.
			third := NewEvent(t, "invoice.paid", c.ID, later.Add(time.Minute))
			got, _, created, err = s.RegisterEvent(t.Context(), third, &webhooks.IdempotencyKey{Key: "k1", RequestHash: []byte("hash 2"), Created: third.Created})
			if err != nil || created || got.ID != second.ID {
				t.Errorf("repeat of the second request: got %v created %t (%v), want the second event", got, created, err)
			}
			if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: e.ID}); len(ds) != 2 {
				t.Errorf("deliveries: got %d, want 2", len(ds))
			}
		})
	})

	group(t, "FindEvent", func(t *testing.T) {
		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			_, err := s.FindEvent(t.Context(), webhooks.NewID())
			checkCode(t, "FindEvent", err, webhooks.ENOTFOUND)
		})
	})
}

func testEvents(t *testing.T, open func(t *testing.T) Store) {
	// logs registers events of a managed account's two companies, of the
	// account itself and of its manager, one a minute.
	type logs struct {
		manager, managed   *webhooks.Account
		company, sibling   *webhooks.Company
		companyEvents      []string // newest first
		siblingEvents      []string
		accountEvents      []string // the managed account's account.* events
		managerEvents      []string
		managedLog         []string // the managed account's log, newest first
		created            map[string]time.Time
		typeOf             map[string]string
		lastEventCreatedAt time.Time
	}
	newLogs := func(t *testing.T, s Store) *logs {
		t.Helper()
		l := &logs{created: map[string]time.Time{}, typeOf: map[string]string{}}
		l.manager = MustCreateAccount(t, s, "")
		l.managed = MustCreateAccount(t, s, l.manager.ID)
		l.company = MustCreateCompany(t, s, l.managed.ID)
		l.sibling = MustCreateCompany(t, s, l.managed.ID)
		for i, step := range []struct {
			list *[]string
			ev   func(created time.Time) *webhooks.Event
		}{
			{&l.companyEvents, func(c time.Time) *webhooks.Event { return NewEvent(t, "invoice.created", l.company.ID, c) }},
			{&l.siblingEvents, func(c time.Time) *webhooks.Event { return NewEvent(t, "invoice.created", l.sibling.ID, c) }},
			{&l.companyEvents, func(c time.Time) *webhooks.Event { return NewEvent(t, "invoice.sent", l.company.ID, c) }},
			{&l.accountEvents, func(c time.Time) *webhooks.Event { return NewAccountEvent(t, "account.updated", l.managed.ID, c) }},
			{&l.managerEvents, func(c time.Time) *webhooks.Event { return NewAccountEvent(t, "account.updated", l.manager.ID, c) }},
			{&l.companyEvents, func(c time.Time) *webhooks.Event { return NewEvent(t, "invoice.created", l.company.ID, c) }},
		} {
			ev := step.ev(at(time.Duration(i+1) * time.Minute))
			MustRegisterEvent(t, s, ev)
			*step.list = append([]string{ev.ID}, *step.list...)
			l.created[ev.ID], l.typeOf[ev.ID] = ev.Created, ev.Type
			if step.list != &l.managerEvents {
				l.managedLog = append([]string{ev.ID}, l.managedLog...)
			}
			l.lastEventCreatedAt = ev.Created
		}
		return l
	}
	listFunc := func(t *testing.T, s Store, f webhooks.EventFilter) func(webhooks.Page) (*webhooks.List[*webhooks.Event], error) {
		return func(p webhooks.Page) (*webhooks.List[*webhooks.Event], error) { return s.ListEvents(t.Context(), f, p) }
	}

	group(t, "ListEvents", func(t *testing.T) {
		t.Run("CompanyLog", func(t *testing.T) {
			s := setup(t, open)
			l := newLogs(t, s)
			checkList(t, listFunc(t, s, webhooks.EventFilter{CompanyID: l.company.ID}), eventID, l.companyEvents)
		})

		// An account's log holds its account.* events and its companies'
		// events; a managed account's events are in its own log, not its
		// manager's.
		t.Run("AccountLog", func(t *testing.T) {
			s := setup(t, open)
			l := newLogs(t, s)
			checkList(t, listFunc(t, s, webhooks.EventFilter{AccountID: l.managed.ID}), eventID, l.managedLog)
			t.Run("Manager", func(t *testing.T) {
				checkList(t, listFunc(t, s, webhooks.EventFilter{AccountID: l.manager.ID}), eventID, l.managerEvents)
			})
		})

		t.Run("Filters", func(t *testing.T) {
			s := setup(t, open)
			l := newLogs(t, s)
			filter := func(ids []string, keep func(id string) bool) []string {
				out := []string{}
				for _, id := range ids {
					if keep(id) {
						out = append(out, id)
					}
				}
				return out
			}
			gte, lt := at(2*time.Minute), at(6*time.Minute)
			for _, tc := range []struct {
				name string
				f    webhooks.EventFilter
				want []string
			}{
				{"company type", webhooks.EventFilter{CompanyID: l.company.ID, Type: "invoice.created"},
					filter(l.companyEvents, func(id string) bool { return l.typeOf[id] == "invoice.created" })},
				{"account type", webhooks.EventFilter{AccountID: l.managed.ID, Type: "account.updated"}, l.accountEvents},
				{"unknown type", webhooks.EventFilter{AccountID: l.managed.ID, Type: "customer.created"}, []string{}},
				// created_gte is inclusive, created_lt exclusive.
				{"created_gte", webhooks.EventFilter{AccountID: l.managed.ID, CreatedGTE: gte},
					filter(l.managedLog, func(id string) bool { return !l.created[id].Before(gte) })},
				{"created_lt", webhooks.EventFilter{AccountID: l.managed.ID, CreatedLT: lt},
					filter(l.managedLog, func(id string) bool { return l.created[id].Before(lt) })},
				{"range and type", webhooks.EventFilter{CompanyID: l.company.ID, Type: "invoice.created", CreatedGTE: gte, CreatedLT: lt}, []string{}},
				{"range", webhooks.EventFilter{CompanyID: l.company.ID, CreatedGTE: gte, CreatedLT: lt},
					filter(l.companyEvents, func(id string) bool { return !l.created[id].Before(gte) && l.created[id].Before(lt) })},
			} {
				got, err := s.ListEvents(t.Context(), tc.f, webhooks.Page{Limit: 100})
				if err != nil {
					t.Fatalf("%s: ListEvents: %v", tc.name, err)
				}
				if ids := mapIDs(got.Data, eventID); !slices.Equal(ids, tc.want) {
					t.Errorf("%s: got %v, want %v", tc.name, ids, tc.want)
				}
			}
			// The cursor works within a filter.
			t.Run("Pagination", func(t *testing.T) {
				checkList(t, listFunc(t, s, webhooks.EventFilter{AccountID: l.managed.ID, CreatedGTE: gte}), eventID,
					filter(l.managedLog, func(id string) bool { return !l.created[id].Before(gte) }))
			})
		})

		t.Run("ListedWhole", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			ev := NewEvent(t, "invoice.sent", c.ID, at(time.Hour))
			ev.CorrelationID = "op-1"
			MustRegisterEvent(t, s, ev)
			got, err := s.ListEvents(t.Context(), webhooks.EventFilter{CompanyID: c.ID}, webhooks.Page{Limit: 10})
			if err != nil {
				t.Fatalf("ListEvents: %v", err)
			}
			if len(got.Data) != 1 {
				t.Fatalf("ListEvents: got %d events, want 1", len(got.Data))
			}
			checkEvent(t, "listed event", got.Data[0], ev)
		})

		// Events keep arriving while a client pages: the cursor continues
		// after the last item seen, so every item of the first listing
		// comes exactly once and the new ones do not shift the pages.
		t.Run("PaginationWhileRegistering", func(t *testing.T) {
			s := setup(t, open)
			l := newLogs(t, s)
			f := webhooks.EventFilter{AccountID: l.managed.ID}
			page, err := s.ListEvents(t.Context(), f, webhooks.Page{Limit: 2})
			if err != nil {
				t.Fatalf("ListEvents: %v", err)
			}
			got := mapIDs(page.Data, eventID)
			for i := range 3 {
				MustRegisterEvent(t, s, NewEvent(t, "invoice.paid", l.company.ID, l.lastEventCreatedAt.Add(time.Duration(i+1)*time.Second)))
			}
			for page.HasMore && len(got) <= len(l.managedLog) {
				page, err = s.ListEvents(t.Context(), f, webhooks.Page{Limit: 2, StartingAfter: got[len(got)-1]})
				if err != nil {
					t.Fatalf("ListEvents: %v", err)
				}
				got = append(got, mapIDs(page.Data, eventID)...)
				if len(page.Data) == 0 {
					break
				}
			}
			if !slices.Equal(got, l.managedLog) {
				t.Errorf("pages: got %v, want %v", got, l.managedLog)
			}
		})
	})
}
