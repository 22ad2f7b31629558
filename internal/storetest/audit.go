package storetest

import (
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func testAudit(t *testing.T, open func(t *testing.T) Store) {
	group(t, "ListAudit", func(t *testing.T) {
		t.Run("Pagination", func(t *testing.T) {
			s := setup(t, open)
			a, b := MustCreateAccount(t, s, ""), MustCreateAccount(t, s, "")
			var want []string
			for i := range 5 {
				e := &webhooks.AuditEntry{
					ID: webhooks.NewID(), AccountID: a.ID, Actor: webhooks.Actor{Type: webhooks.ActorPortal, ID: webhooks.NewID()},
					Action: webhooks.AuditEndpointSecretRevealed, TargetType: webhooks.TargetEndpoint, TargetID: webhooks.NewID(),
					Outcome: webhooks.AuditSucceeded, Created: at(time.Duration(i) * time.Minute),
				}
				if err := recordAudit(t, s, e); err != nil {
					t.Fatalf("RecordAudit: %v", err)
				}
				want = append([]string{e.ID}, want...)
			}
			// Another account's entry is not in the list.
			other := &webhooks.AuditEntry{ID: webhooks.NewID(), AccountID: b.ID, Actor: admin.Actor, Action: webhooks.AuditEndpointSecretRevealed,
				TargetType: webhooks.TargetEndpoint, TargetID: webhooks.NewID(), Outcome: webhooks.AuditSucceeded, Created: at(time.Hour)}
			if err := recordAudit(t, s, other); err != nil {
				t.Fatalf("RecordAudit: %v", err)
			}
			checkList(t, func(p webhooks.Page) (*webhooks.List[*webhooks.AuditEntry], error) {
				return s.ListAudit(t.Context(), a.ID, p)
			}, auditID, want)
		})
	})

	group(t, "RecordAudit", func(t *testing.T) {
		// A refused change is recorded on its own, with its error code.
		t.Run("Refused", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := &webhooks.AuditEntry{
				ID: webhooks.NewID(), AccountID: a.ID, Actor: webhooks.Actor{Type: webhooks.ActorAPIKey, ID: webhooks.NewID()},
				Action: webhooks.AuditDeliveryRetried, TargetType: webhooks.TargetDelivery, TargetID: webhooks.NewID(),
				Outcome: webhooks.AuditRefused, ErrorCode: webhooks.EOUTSIDEWINDOW, Created: at(time.Hour),
			}
			if err := recordAudit(t, s, e); err != nil {
				t.Fatalf("RecordAudit: %v", err)
			}
			entries := MustListAudit(t, s, a.ID)
			if len(entries) != 1 {
				t.Fatalf("ListAudit: got %d entries, want 1", len(entries))
			}
			got := entries[0]
			if got.ID != e.ID || got.AccountID != e.AccountID || got.Actor != e.Actor || got.Action != e.Action || got.TargetType != e.TargetType ||
				got.TargetID != e.TargetID || got.Outcome != e.Outcome || got.ErrorCode != e.ErrorCode {
				t.Errorf("entry: got %+v, want %+v", got, e)
			}
			checkTime(t, "created", got.Created, e.Created)
		})
	})

	group(t, "Audit", func(t *testing.T) {
		// Every change writes its entry, under the account the endpoint
		// belongs to (a company endpoint's is the company owner's), with
		// its action and target, and never a secret.
		t.Run("Trail", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			bystander := MustCreateAccount(t, s, "")
			type entry struct {
				action, targetType, targetID string
				created                      time.Time
			}
			var want []entry // oldest first
			var secrets []string
			clock := t0
			next := func() time.Time { clock = clock.Add(time.Minute); return clock }
			record := func(action, targetType, targetID string) {
				want = append(want, entry{action, targetType, targetID, clock})
			}

			ce := NewCompanyEndpoint(c.ID, "*")
			ce.Created = next()
			MustCreateEndpoint(t, s, ce)
			record(webhooks.AuditEndpointCreated, webhooks.TargetEndpoint, ce.ID)
			ae := NewAccountEndpoint(a.ID, nil, "*")
			ae.Created = next()
			MustCreateEndpoint(t, s, ae)
			record(webhooks.AuditEndpointCreated, webhooks.TargetEndpoint, ae.ID)
			secrets = append(secrets, ce.Secret, ae.Secret)

			if _, err := updateEndpoint(t, s, ce.ID, &webhooks.EndpointUpdate{Description: ptr("ERP")}, next()); err != nil {
				t.Fatalf("UpdateEndpoint: %v", err)
			}
			record(webhooks.AuditEndpointUpdated, webhooks.TargetEndpoint, ce.ID)
			rot, err := rotateSecret(t, s, ce.ID, clock.Add(time.Hour), next())
			if err != nil {
				t.Fatalf("RotateSecret: %v", err)
			}
			secrets = append(secrets, rot.Secret)
			record(webhooks.AuditEndpointSecretRotated, webhooks.TargetEndpoint, ce.ID)
			if _, err := sendTestEvent(t, s, ae.ID, next()); err != nil {
				t.Fatalf("SendTestEvent: %v", err)
			}
			record(webhooks.AuditEndpointTestSent, webhooks.TargetEndpoint, ae.ID)

			// Registering and attempting are not changes by a key: no
			// entries.
			ev := NewEvent(t, "invoice.sent", c.ID, next())
			var cd, ad *webhooks.Delivery
			for _, d := range MustRegisterEvent(t, s, ev) {
				switch d.EndpointID {
				case ce.ID:
					cd = d
				case ae.ID:
					ad = d
				}
			}
			if cd == nil || ad == nil {
				t.Fatalf("RegisterEvent: no delivery to one of the endpoints")
			}
			MustFailPermanently(t, s, cd.ID, next())
			MustFailPermanently(t, s, ad.ID, clock)

			r, err := replayDelivery(t, s, cd.ID, next())
			if err != nil {
				t.Fatalf("ReplayDelivery: %v", err)
			}
			record(webhooks.AuditDeliveryReplayed, webhooks.TargetDelivery, r.ID)
			if _, err := retryDelivery(t, s, ad.ID, next()); err != nil {
				t.Fatalf("RetryDelivery: %v", err)
			}
			record(webhooks.AuditDeliveryRetried, webhooks.TargetDelivery, ad.ID)
			disable(t, s, ae.ID, next())
			record(webhooks.AuditEndpointDisabled, webhooks.TargetEndpoint, ae.ID)
			enable(t, s, ae.ID, next())
			record(webhooks.AuditEndpointEnabled, webhooks.TargetEndpoint, ae.ID)
			if _, err := recoverRange(t, s, ae.ID, t0, clock, next()); err != nil {
				t.Fatalf("Recover: %v", err)
			}
			record(webhooks.AuditEndpointRecovered, webhooks.TargetEndpoint, ae.ID)
			if err := deleteEndpoint(t, s, ce.ID, next()); err != nil {
				t.Fatalf("DeleteEndpoint: %v", err)
			}
			record(webhooks.AuditEndpointDeleted, webhooks.TargetEndpoint, ce.ID)

			entries := MustListAudit(t, s, a.ID)
			if len(entries) != len(want) {
				t.Errorf("audit: got %d entries, want %d", len(entries), len(want))
			}
			for i := range min(len(entries), len(want)) {
				w := want[len(want)-1-i]
				checkAudit(t, entries[i], a.ID, w.action, w.targetType, w.targetID, w.created)
			}
			for _, e := range entries {
				for _, field := range []string{e.ID, e.AccountID, e.Actor.Type, e.Actor.ID, e.Action, e.TargetType, e.TargetID, e.Outcome, e.ErrorCode} {
					for _, secret := range secrets {
						if strings.Contains(field, secret) || strings.Contains(field, "whsec_") {
							t.Errorf("audit entry %s holds a secret: %+v", e.Action, e)
						}
					}
				}
			}
			if got := MustListAudit(t, s, bystander.ID); len(got) != 0 {
				t.Errorf("another account's audit: got %d entries, want 0", len(got))
			}
		})

		// A managed account's company endpoint is the managed account's:
		// its manager's log does not show it.
		t.Run("ManagedAccount", func(t *testing.T) {
			s := setup(t, open)
			manager := MustCreateAccount(t, s, "")
			a := MustCreateAccount(t, s, manager.ID)
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			checkLastAudit(t, s, a.ID, webhooks.AuditEndpointCreated, webhooks.TargetEndpoint, e.ID, e.Created)
			if got := MustListAudit(t, s, manager.ID); len(got) != 0 {
				t.Errorf("manager's audit: got %d entries, want 0", len(got))
			}
		})
	})
}
