package storetest

import (
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func testSendTestEvent(t *testing.T, open func(t *testing.T) Store) {
	group(t, "SendTestEvent", func(t *testing.T) {
		// On an account endpoint the ping is the endpoint's own: its
		// account, relationship own, no company, the endpoint's livemode.
		// It goes to that endpoint alone and stays out of the event logs.
		t.Run("AccountEndpoint", func(t *testing.T) {
			s := setup(t, open)
			manager := MustCreateAccount(t, s, "")
			a := MustCreateAccount(t, s, manager.ID)
			c := MustCreateCompany(t, s, a.ID)
			e := NewAccountEndpoint(a.ID, []webhooks.Relationship{webhooks.RelationshipManaged}, "invoice.*")
			e.Livemode = false
			MustCreateEndpoint(t, s, e)
			sibling := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			managerEP := MustCreateEndpoint(t, s, NewAccountEndpoint(manager.ID, nil, "*"))
			companyEP := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))

			now := at(time.Hour)
			d, err := sendTestEvent(t, s, e.ID, now)
			if err != nil {
				t.Fatalf("SendTestEvent: %v", err)
			}
			if d.EndpointID != e.ID || d.EventType != webhooks.PingEventType || d.Relationship != webhooks.RelationshipOwn || d.ReplayOf != "" {
				t.Errorf("delivery: got endpoint %s type %s relationship %q, want %s %s own", d.EndpointID, d.EventType, d.Relationship, e.ID, webhooks.PingEventType)
			}
			due := webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: now}
			checkState(t, "returned delivery", d, due, 0)
			stored := MustFindDelivery(t, s, d.ID)
			checkState(t, "stored delivery", stored, due, 0)
			checkBody(t, s, stored, e)

			ev := MustFindEvent(t, s, d.EventID)
			if ev.Type != webhooks.PingEventType || !ev.Test || ev.Livemode || ev.AccountID != a.ID || ev.CompanyID != "" {
				t.Errorf("event: got %+v, want a test ping of account %s, not live, no company", ev, a.ID)
			}
			env, keys := decodeBody(t, stored.Body)
			if !env.Test || env.Livemode || env.ID != ev.ID || env.Type != webhooks.PingEventType {
				t.Errorf("body: got %s, want a test ping with the event's id, not live", stored.Body)
			}
			if env.Account == nil || env.Account.ID != a.ID || env.AccountRelationship == nil || *env.AccountRelationship != "own" || string(keys["company_id"]) != "null" {
				t.Errorf("body: got %s, want account %s, relationship own, company_id null", stored.Body, a.ID)
			}

			for _, other := range []string{sibling.ID, managerEP.ID, companyEP.ID} {
				if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: other}); len(ds) != 0 {
					t.Errorf("deliveries to endpoint %s: got %d, want 0", other, len(ds))
				}
			}
			for name, f := range map[string]webhooks.EventFilter{
				"account log":         {AccountID: a.ID},
				"manager account log": {AccountID: manager.ID},
				"company log":         {CompanyID: c.ID},
				"ping type":           {AccountID: a.ID, Type: webhooks.PingEventType},
			} {
				l, err := s.ListEvents(t.Context(), f, webhooks.Page{Limit: 10})
				if err != nil {
					t.Fatalf("%s: ListEvents: %v", name, err)
				}
				if len(l.Data) != 0 {
					t.Errorf("%s: got %d events, want none", name, len(l.Data))
				}
			}
			checkLastAudit(t, s, a.ID, webhooks.AuditEndpointTestSent, webhooks.TargetEndpoint, e.ID, now)

			// The ping is claimed and attempted like any delivery.
			claims := MustClaim(t, s, now, 10)
			if len(claims) != 1 || claims[0].Delivery.ID != d.ID {
				t.Errorf("claims: got %v, want [%s]", claimIDs(claims), d.ID)
			}
		})

		t.Run("CompanyEndpoint", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "invoice.sent"))
			other := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			now := at(time.Hour)
			d, err := sendTestEvent(t, s, e.ID, now)
			if err != nil {
				t.Fatalf("SendTestEvent: %v", err)
			}
			stored := MustFindDelivery(t, s, d.ID)
			checkState(t, "stored delivery", stored, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: now}, 0)
			if stored.EndpointID != e.ID || stored.Relationship != "" {
				t.Errorf("delivery: got endpoint %s relationship %q, want %s and none", stored.EndpointID, stored.Relationship, e.ID)
			}
			checkBody(t, s, stored, e)
			if env, keys := decodeBody(t, stored.Body); !env.Test || !env.Livemode || keys["account"] != nil {
				t.Errorf("body: got %s, want a live test event in the company envelope", stored.Body)
			}
			if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: other.ID}); len(ds) != 0 {
				t.Errorf("deliveries to the other endpoint: got %d, want 0", len(ds))
			}
			for name, f := range map[string]webhooks.EventFilter{"company log": {CompanyID: c.ID}, "account log": {AccountID: a.ID}} {
				l, err := s.ListEvents(t.Context(), f, webhooks.Page{Limit: 10})
				if err != nil {
					t.Fatalf("%s: ListEvents: %v", name, err)
				}
				if len(l.Data) != 0 {
					t.Errorf("%s: got %d events, want none", name, len(l.Data))
				}
			}
			// A company endpoint's changes are the company owner's.
			checkLastAudit(t, s, a.ID, webhooks.AuditEndpointTestSent, webhooks.TargetEndpoint, e.ID, now)
		})

		t.Run("ErrEndpointDisabled", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			if _, err := updateEndpoint(t, s, e.ID, &webhooks.EndpointUpdate{Status: ptr(webhooks.EndpointDisabled)}, t0); err != nil {
				t.Fatalf("UpdateEndpoint: %v", err)
			}
			_, err := sendTestEvent(t, s, e.ID, at(time.Hour))
			checkCode(t, "SendTestEvent", err, webhooks.EENDPOINTDISABLED)
			if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: e.ID}); len(ds) != 0 {
				t.Errorf("deliveries: got %d, want 0", len(ds))
			}
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			if err := deleteEndpoint(t, s, e.ID, t0); err != nil {
				t.Fatalf("DeleteEndpoint: %v", err)
			}
			for name, id := range map[string]string{"unknown": webhooks.NewID(), "deleted": e.ID} {
				_, err := sendTestEvent(t, s, id, at(time.Hour))
				checkCode(t, name, err, webhooks.ENOTFOUND)
			}
		})
	})

	group(t, "SendRehearsal", func(t *testing.T) {
		// A rehearsal's delivery is stored as one (SPEC 17), whatever its
		// factor: here the suite's schedule, which fits in ten minutes
		// already (factor 1). Every read of it says so (found, listed,
		// claimed, after an attempt, re-armed by recover), and a plain
		// test event's says not.
		t.Run("StoredFlag", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			now := at(time.Hour)
			r, err := UseCases(s, now).SendRehearsal(t.Context(), admin, ref(e.ID))
			if err != nil {
				t.Fatalf("SendRehearsal: %v", err)
			}
			test, err := sendTestEvent(t, s, e.ID, now)
			if err != nil {
				t.Fatalf("SendTestEvent: %v", err)
			}
			if !r.Rehearsal || test.Rehearsal {
				t.Errorf("returned deliveries: rehearsal's %v, test event's %v, want true and false", r.Rehearsal, test.Rehearsal)
			}
			checkLastAudit(t, s, a.ID, webhooks.AuditEndpointTestSent, webhooks.TargetEndpoint, e.ID, now)
			check := func(when string) {
				t.Helper()
				if got := MustFindDelivery(t, s, r.ID); !got.Rehearsal {
					t.Errorf("%s: the rehearsal's delivery, found: rehearsal false, want true", when)
				}
				if got := MustFindDelivery(t, s, test.ID); got.Rehearsal {
					t.Errorf("%s: the test event's delivery, found: rehearsal true, want false", when)
				}
				for _, d := range MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: e.ID}) {
					if want := d.ID == r.ID; d.Rehearsal != want {
						t.Errorf("%s: listed delivery %s: rehearsal %v, want %v", when, d.ID, d.Rehearsal, want)
					}
				}
			}
			check("created")
			claims := MustClaim(t, s, now, 10)
			if len(claims) != 2 {
				t.Fatalf("claims: got %v, want the two pings", claimIDs(claims))
			}
			for _, c := range claims {
				if want := c.Delivery.ID == r.ID; c.Delivery.Rehearsal != want {
					t.Errorf("claimed delivery %s: rehearsal %v, want %v", c.Delivery.ID, c.Delivery.Rehearsal, want)
				}
				MustRecord(t, s, NewRecord(c, now, 422, failedPermanently))
			}
			check("after an attempt")
			// Recover takes the rehearsal's, whose recovery it rehearses,
			// and not the plain test event's.
			n, err := recoverRange(t, s, e.ID, t0, now.Add(time.Second), now.Add(time.Minute))
			if err != nil || n != 1 {
				t.Errorf("Recover: got %d, %v, want the rehearsal's delivery alone", n, err)
			}
			if got := MustFindDelivery(t, s, r.ID); got.Status != webhooks.DeliveryPending {
				t.Errorf("the rehearsal's delivery after recover: %s, want pending", got.Status)
			}
			check("after recover")
		})
	})
}
