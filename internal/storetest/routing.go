package storetest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// network is a managing account with a managed account that owns two
// companies, and an endpoint for each way an event may (or may not) reach
// an endpoint (SPEC section 3).
type network struct {
	manager, managed *webhooks.Account
	company, sibling *webhooks.Company

	companyEP      *webhooks.Endpoint // company, invoice.*
	siblingEP      *webhooks.Endpoint // sibling, *
	ownEP          *webhooks.Endpoint // managed's, own only, *
	managedOnlyEP  *webhooks.Endpoint // managed's, managed only, *
	managerEP      *webhooks.Endpoint // manager's, managed only, *
	managerOwnEP   *webhooks.Endpoint // manager's, own only, *
	companyStarEP  *webhooks.Endpoint // company, *
	managedBothEP  *webhooks.Endpoint // managed's, default relationships, account.*
	managerBothEP  *webhooks.Endpoint // manager's, default relationships, invoice.*
	allEndpointIDs []string
}

func newNetwork(tb testing.TB, s Store) *network {
	tb.Helper()
	n := &network{}
	n.manager = MustCreateAccount(tb, s, "")
	n.managed = MustCreateAccount(tb, s, n.manager.ID)
	n.company = MustCreateCompany(tb, s, n.managed.ID)
	n.sibling = MustCreateCompany(tb, s, n.managed.ID)
	own := []webhooks.Relationship{webhooks.RelationshipOwn}
	managed := []webhooks.Relationship{webhooks.RelationshipManaged}
	for _, ep := range []struct {
		p *(*webhooks.Endpoint)
		e *webhooks.Endpoint
	}{
		{&n.companyEP, NewCompanyEndpoint(n.company.ID, "invoice.*")},
		{&n.siblingEP, NewCompanyEndpoint(n.sibling.ID, "*")},
		{&n.ownEP, NewAccountEndpoint(n.managed.ID, own, "*")},
		{&n.managedOnlyEP, NewAccountEndpoint(n.managed.ID, managed, "*")},
		{&n.managerEP, NewAccountEndpoint(n.manager.ID, managed, "*")},
		{&n.managerOwnEP, NewAccountEndpoint(n.manager.ID, own, "*")},
		{&n.companyStarEP, NewCompanyEndpoint(n.company.ID, "*")},
		{&n.managedBothEP, NewAccountEndpoint(n.managed.ID, nil, "account.*")},
		{&n.managerBothEP, NewAccountEndpoint(n.manager.ID, nil, "invoice.*")},
	} {
		*ep.p = MustCreateEndpoint(tb, s, ep.e)
		n.allEndpointIDs = append(n.allEndpointIDs, ep.e.ID)
	}
	return n
}

func (n *network) endpoint(id string) *webhooks.Endpoint {
	for _, e := range []*webhooks.Endpoint{n.companyEP, n.siblingEP, n.ownEP, n.managedOnlyEP, n.managerEP,
		n.managerOwnEP, n.companyStarEP, n.managedBothEP, n.managerBothEP} {
		if e.ID == id {
			return e
		}
	}
	return nil
}

// checkRoute checks the deliveries RegisterEvent returned for ev against
// want (endpoint id → relationship), as returned and as stored, and that no
// other endpoint of the network got one.
func (n *network) checkRoute(t *testing.T, s Store, ev *webhooks.Event, ds []*webhooks.Delivery, want map[string]webhooks.Relationship) {
	t.Helper()
	got := map[string]webhooks.Relationship{}
	seen := map[string]bool{}
	for _, d := range ds {
		if _, dup := got[d.EndpointID]; dup {
			t.Errorf("two deliveries to endpoint %s", d.EndpointID)
		}
		got[d.EndpointID] = d.Relationship
		if seen[d.ID] || !webhooks.ValidID(d.ID) {
			t.Errorf("delivery id %q: want a distinct UUID per delivery", d.ID)
		}
		seen[d.ID] = true
		stored := MustFindDelivery(t, s, d.ID)
		for name, d := range map[string]*webhooks.Delivery{"returned": d, "stored": stored} {
			if d.EventID != ev.ID || d.EventType != ev.Type || d.EndpointID != stored.EndpointID || d.Relationship != want[d.EndpointID] || d.ReplayOf != "" || d.Manual {
				t.Errorf("%s delivery to %s: got event %s %s relationship %q replay_of %q manual %t, want event %s %s relationship %q, original, automatic",
					name, d.EndpointID, d.EventID, d.EventType, d.Relationship, d.ReplayOf, d.Manual, ev.ID, ev.Type, want[d.EndpointID])
			}
			// The first attempt is due as soon as the delivery exists.
			checkState(t, name+" delivery to "+d.EndpointID, d, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: ev.Created}, 0)
			checkTime(t, name+" delivery: created", d.Created, ev.Created)
			if d.LastResponseStatus != 0 {
				t.Errorf("%s delivery: last response status: got %d, want 0", name, d.LastResponseStatus)
			}
		}
		if string(stored.Body) != string(d.Body) {
			t.Errorf("delivery to %s: stored body differs from the returned one:\n%s\n%s", d.EndpointID, stored.Body, d.Body)
		}
		checkBody(t, s, stored, n.endpoint(d.EndpointID))
	}
	if len(got) != len(want) {
		t.Errorf("deliveries: got %v, want %v", got, want)
	}
	for id, rel := range want {
		if g, ok := got[id]; !ok || g != rel {
			t.Errorf("delivery to endpoint %s: got %q (present %t), want %q", id, g, ok, rel)
		}
	}
	// What RegisterEvent returned is what was stored: no endpoint has
	// another delivery of the event.
	for _, id := range n.allEndpointIDs {
		stored := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: id, EventID: ev.ID})
		_, wanted := want[id]
		if wanted && len(stored) != 1 || !wanted && len(stored) != 0 {
			t.Errorf("stored deliveries of the event to %s: got %d, want %d", id, len(stored), map[bool]int{true: 1}[wanted])
		}
	}
}

func testRouting(t *testing.T, open func(t *testing.T) Store) {
	group(t, "Routing", func(t *testing.T) {
		t.Run("CompanyEvent", func(t *testing.T) {
			s := setup(t, open)
			n := newNetwork(t, s)
			ev := NewEvent(t, "invoice.sent", n.company.ID, at(time.Hour))
			ds := MustRegisterEvent(t, s, ev)
			// 1. the company's endpoints; 2. the owner's account endpoints
			// with own; 3. the provisioning account's with managed.
			n.checkRoute(t, s, ev, ds, map[string]webhooks.Relationship{
				n.companyEP.ID:     "",
				n.companyStarEP.ID: "",
				n.ownEP.ID:         webhooks.RelationshipOwn,
				n.managerEP.ID:     webhooks.RelationshipManaged,
				n.managerBothEP.ID: webhooks.RelationshipManaged,
			})
			// One event: the same id in every copy; the account envelope
			// names the event's account, the relationship and the company.
			for _, d := range ds {
				env, keys := decodeBody(t, d.Body)
				if env.ID != ev.ID || env.Type != ev.Type || env.Test {
					t.Errorf("body to %s: got id %s type %s test %t, want %s %s false", d.EndpointID, env.ID, env.Type, env.Test, ev.ID, ev.Type)
				}
				ep := n.endpoint(d.EndpointID)
				if ep.Scope == webhooks.ScopeCompany {
					for _, k := range []string{"account", "account_relationship", "company_id"} {
						if _, ok := keys[k]; ok {
							t.Errorf("company envelope to %s has %q", d.EndpointID, k)
						}
					}
					continue
				}
				if env.Account == nil || env.Account.ID != n.managed.ID {
					t.Errorf("body to %s: account: got %+v, want %s", d.EndpointID, env.Account, n.managed.ID)
				}
				if env.AccountRelationship == nil || *env.AccountRelationship != string(d.Relationship) {
					t.Errorf("body to %s: account_relationship: got %v, want %q", d.EndpointID, env.AccountRelationship, d.Relationship)
				}
				if env.CompanyID == nil || *env.CompanyID != n.company.ID {
					t.Errorf("body to %s: company_id: got %v, want %s", d.EndpointID, env.CompanyID, n.company.ID)
				}
			}
		})

		t.Run("AccountEvent", func(t *testing.T) {
			s := setup(t, open)
			n := newNetwork(t, s)
			ev := NewAccountEvent(t, "account.updated", n.managed.ID, at(time.Hour))
			ds := MustRegisterEvent(t, s, ev)
			// Never a company endpoint, even one subscribed to *.
			n.checkRoute(t, s, ev, ds, map[string]webhooks.Relationship{
				n.ownEP.ID:         webhooks.RelationshipOwn,
				n.managedBothEP.ID: webhooks.RelationshipOwn,
				n.managerEP.ID:     webhooks.RelationshipManaged,
			})
			for _, d := range ds {
				env, keys := decodeBody(t, d.Body)
				if env.Account == nil || env.Account.ID != n.managed.ID {
					t.Errorf("body to %s: account: got %+v, want %s", d.EndpointID, env.Account, n.managed.ID)
				}
				if env.CompanyID != nil || string(keys["company_id"]) != "null" {
					t.Errorf("body to %s: company_id: got %s, want null", d.EndpointID, keys["company_id"])
				}
			}
		})

		t.Run("AccountEventOfUnmanagedAccount", func(t *testing.T) {
			s := setup(t, open)
			n := newNetwork(t, s)
			ev := NewAccountEvent(t, "account.updated", n.manager.ID, at(time.Hour))
			n.checkRoute(t, s, ev, MustRegisterEvent(t, s, ev), map[string]webhooks.Relationship{
				n.managerOwnEP.ID: webhooks.RelationshipOwn,
			})
		})

		t.Run("AccountEventNamingCompany", func(t *testing.T) {
			s := setup(t, open)
			n := newNetwork(t, s)
			// Only the company is named: the store fills in its account.
			ev := assignEvent(t, &webhooks.Event{
				Type:      "account.company_added",
				CompanyID: n.company.ID,
				Livemode:  true,
				Object:    json.RawMessage(`{"object":"company","id":"` + n.company.ID + `"}`),
			}, at(time.Hour))
			ds := MustRegisterEvent(t, s, ev)
			if ev.AccountID != n.managed.ID {
				t.Errorf("account id: got %q, want the company's owner %s", ev.AccountID, n.managed.ID)
			}
			n.checkRoute(t, s, ev, ds, map[string]webhooks.Relationship{
				n.ownEP.ID:         webhooks.RelationshipOwn,
				n.managedBothEP.ID: webhooks.RelationshipOwn,
				n.managerEP.ID:     webhooks.RelationshipManaged,
			})
			for _, d := range ds {
				if env, _ := decodeBody(t, d.Body); env.CompanyID == nil || *env.CompanyID != n.company.ID {
					t.Errorf("body to %s: company_id: got %v, want %s", d.EndpointID, env.CompanyID, n.company.ID)
				}
			}
		})

		t.Run("Livemode", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			live := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			testEP := NewCompanyEndpoint(c.ID, "*")
			testEP.Livemode = false
			MustCreateEndpoint(t, s, testEP)
			for _, livemode := range []bool{true, false} {
				ev := NewEvent(t, "invoice.sent", c.ID, at(time.Hour))
				ev.Livemode = livemode
				want := map[bool]string{true: live.ID, false: testEP.ID}[livemode]
				if got := deliveryEndpoints(MustRegisterEvent(t, s, ev)); !slices.Equal(got, []string{want}) {
					t.Errorf("livemode %t: got deliveries to %v, want to %s only", livemode, got, want)
				}
			}
		})

		t.Run("EnabledEvents", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			var want []string
			for _, tc := range []struct {
				events []string
				admits bool
			}{
				{[]string{"invoice.sent"}, true},
				{[]string{"invoice.*"}, true},
				{[]string{"*"}, true},
				{[]string{"invoice.paid", "invoice.sent"}, true},
				{[]string{"invoice.paid"}, false},
				{[]string{"customer.*"}, false},
				{[]string{"invoice.sent.late"}, false},
			} {
				e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, tc.events...))
				if tc.admits {
					want = append(want, e.ID)
				}
			}
			got := deliveryEndpoints(MustRegisterEvent(t, s, NewEvent(t, "invoice.sent", c.ID, at(time.Hour))))
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("deliveries to %v, want to %v", got, want)
			}
		})

		t.Run("DisabledEndpoint", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			if _, err := updateEndpoint(t, s, e.ID, &webhooks.EndpointUpdate{Status: ptr(webhooks.EndpointDisabled)}, t0); err != nil {
				t.Fatalf("UpdateEndpoint: %v", err)
			}
			// Nothing is lost while an endpoint is off: the delivery
			// exists, failed, with no attempt scheduled.
			ev := NewEvent(t, "invoice.sent", c.ID, at(time.Hour))
			d := MustRegisterOne(t, s, ev, e.ID)
			ended := webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEndpointDisabled}
			checkState(t, "returned delivery", d, ended, 0)
			stored := MustFindDelivery(t, s, d.ID)
			checkState(t, "stored delivery", stored, ended, 0)
			if len(stored.Attempts) != 0 {
				t.Errorf("attempts: got %d, want 0", len(stored.Attempts))
			}
			checkBody(t, s, stored, MustFindEndpoint(t, s, e.ID))
			if claims := MustClaim(t, s, at(2*time.Hour), 10); len(claims) != 0 {
				t.Errorf("claims: got %v, want none", claimIDs(claims))
			}
		})

		t.Run("DeletedEndpoint", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			ae := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			for _, id := range []string{e.ID, ae.ID} {
				if err := deleteEndpoint(t, s, id, t0); err != nil {
					t.Fatalf("DeleteEndpoint: %v", err)
				}
			}
			if ds := MustRegisterEvent(t, s, NewEvent(t, "invoice.sent", c.ID, at(time.Hour))); len(ds) != 0 {
				t.Errorf("deliveries: got to %v, want none", deliveryEndpoints(ds))
			}
		})

		// An endpoint receives the events registered after it was created.
		// The stores cache what routing reads: every change to it (an
		// endpoint created, its URL, subscriptions, status or secret, its
		// deletion, a company that did not exist) reaches the next
		// registration.
		t.Run("FollowsChanges", func(t *testing.T) {
			s := setup(t, open)
			eng := &engine{room: true}
			s.SetEngine(eng)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			// register registers an event of c, and checks that the
			// endpoints handed with its deliveries, which the engine
			// attempts, are the endpoints as stored now.
			register := func(what string, want int) []*webhooks.Delivery {
				t.Helper()
				eng.mu.Lock()
				eng.handed = nil
				eng.mu.Unlock()
				ds := MustRegisterEvent(t, s, NewEvent(t, "invoice.sent", c.ID, at(time.Hour)))
				if len(ds) != want {
					t.Fatalf("%s: %d deliveries, want %d", what, len(ds), want)
				}
				eng.mu.Lock()
				handed := eng.handed
				eng.mu.Unlock()
				pending := 0
				for _, d := range ds {
					if d.Status == webhooks.DeliveryPending {
						pending++
					}
				}
				if len(handed) != pending {
					t.Fatalf("%s: %d deliveries handed, want the %d pending", what, len(handed), pending)
				}
				for _, h := range handed {
					ep := MustFindEndpoint(t, s, h.Endpoint.ID)
					if h.Endpoint.URL != ep.URL || h.Endpoint.Secret != ep.Secret || h.Endpoint.PreviousSecret != ep.PreviousSecret {
						t.Fatalf("%s: handed with endpoint %s %s (secret %q, previous %q), stored %s (secret %q, previous %q)", what,
							h.Endpoint.ID, h.Endpoint.URL, h.Endpoint.Secret, h.Endpoint.PreviousSecret, ep.URL, ep.Secret, ep.PreviousSecret)
					}
				}
				return ds
			}
			register("no endpoint yet", 0)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			if ds := register("an endpoint created", 1); ds[0].Status != webhooks.DeliveryPending {
				t.Fatalf("an endpoint created: %s, want pending", ds[0].Status)
			}
			url := "https://changed.example.com/hook"
			if _, err := updateEndpoint(t, s, e.ID, &webhooks.EndpointUpdate{URL: &url}, t0); err != nil {
				t.Fatal(err)
			}
			register("its URL changed", 1)
			if _, err := updateEndpoint(t, s, e.ID, &webhooks.EndpointUpdate{EnabledEvents: &[]string{"invoice.paid"}}, t0); err != nil {
				t.Fatal(err)
			}
			register("subscribed to another type", 0)
			if _, err := updateEndpoint(t, s, e.ID, &webhooks.EndpointUpdate{EnabledEvents: &[]string{"*"},
				Status: ptr(webhooks.EndpointDisabled)}, t0); err != nil {
				t.Fatal(err)
			}
			if ds := register("disabled", 1); ds[0].Status != webhooks.DeliveryFailed {
				t.Fatalf("disabled: %s, want failed", ds[0].Status)
			}
			if _, err := updateEndpoint(t, s, e.ID, &webhooks.EndpointUpdate{Status: ptr(webhooks.EndpointEnabled)}, t0); err != nil {
				t.Fatal(err)
			}
			rot, err := rotateSecret(t, s, e.ID, at(time.Hour), t0)
			if err != nil {
				t.Fatal(err)
			}
			ds := register("its secret rotated", 1)
			if ds[0].Status != webhooks.DeliveryPending {
				t.Fatalf("enabled again: %s, want pending", ds[0].Status)
			}
			if ep := MustFindEndpoint(t, s, e.ID); ep.Secret != rot.Secret || ep.PreviousSecret == "" {
				t.Fatalf("the rotated endpoint: secret %q previous %q", ep.Secret, ep.PreviousSecret)
			}
			MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, []webhooks.Relationship{webhooks.RelationshipOwn}, "*"))
			register("an account endpoint created", 2)
			if err := deleteEndpoint(t, s, e.ID, t0); err != nil {
				t.Fatal(err)
			}
			register("the company endpoint deleted", 1)

			// An unknown company refused, and a managed account's: what
			// its manager's endpoints take follows them too.
			if _, _, _, err := s.RegisterEvent(t.Context(), NewEvent(t, "invoice.sent", webhooks.NewID(), at(time.Hour)), nil); webhooks.ErrorCode(err) != webhooks.EUNKNOWNCOMPANY {
				t.Fatalf("an unknown company: %v, want %s", err, webhooks.EUNKNOWNCOMPANY)
			}
			managed := MustCreateAccount(t, s, a.ID)
			c = MustCreateCompany(t, s, managed.ID)
			register("a managed company, whose manager's endpoint takes its own events only", 0)
			MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, []webhooks.Relationship{webhooks.RelationshipManaged}, "*"))
			if ds := register("the manager's endpoint for managed accounts", 1); ds[0].Relationship != webhooks.RelationshipManaged {
				t.Fatalf("the manager's endpoint: relationship %q, want managed", ds[0].Relationship)
			}
		})

		t.Run("NoBackfill", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			first := NewEvent(t, "invoice.created", c.ID, at(time.Minute))
			if ds := MustRegisterEvent(t, s, first); len(ds) != 0 {
				t.Errorf("deliveries with no endpoint: got %d, want 0", len(ds))
			}
			e := NewCompanyEndpoint(c.ID, "*")
			e.Created = at(time.Hour)
			MustCreateEndpoint(t, s, e)
			second := NewEvent(t, "invoice.sent", c.ID, at(2*time.Hour))
			MustRegisterOne(t, s, second, e.ID)
			ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: e.ID})
			if len(ds) != 1 || ds[0].EventID != second.ID {
				t.Errorf("deliveries of the new endpoint: got %d, want only the second event's", len(ds))
			}
		})

		// Each body is rendered for its endpoint's payload version.
		t.Run("PayloadVersion", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			latest := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			e := NewCompanyEndpoint(c.ID, "*")
			e.APIVersion = webhooks.APIVersion20250601
			pinned := MustCreateEndpoint(t, s, e)
			ev := NewEvent(t, "invoice.sent", c.ID, at(time.Hour))
			var bodies = map[string][]byte{}
			for _, d := range MustRegisterEvent(t, s, ev) {
				bodies[d.EndpointID] = d.Body
				checkBody(t, s, MustFindDelivery(t, s, d.ID), map[string]*webhooks.Endpoint{latest.ID: latest, pinned.ID: pinned}[d.EndpointID])
			}
			var old struct {
				APIVersion string `json:"api_version"`
				ID         string `json:"id"`
				Data       struct {
					Type   *string        `json:"type"`
					Object map[string]any `json:"object"`
				} `json:"data"`
			}
			if err := json.Unmarshal(bodies[pinned.ID], &old); err != nil {
				t.Fatalf("pinned body: %v", err)
			}
			if old.APIVersion != webhooks.APIVersion20250601 || old.ID != ev.ID || old.Data.Type != nil || old.Data.Object["total_cents"] != float64(121000) {
				t.Errorf("pinned body: got %s, want version %s, the same id, no data.type, total_cents 121000", bodies[pinned.ID], webhooks.APIVersion20250601)
			}
		})
	})
}

// deliveryEndpoints returns the sorted endpoint ids of ds.
func deliveryEndpoints(ds []*webhooks.Delivery) []string {
	out := mapIDs(ds, func(d *webhooks.Delivery) string { return d.EndpointID })
	slices.Sort(out)
	return out
}
