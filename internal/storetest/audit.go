package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
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

	// The platform's own log (SPEC 8): the changes to platform endpoints,
	// which belong to no account, are stored with no account and listed by
	// ListAudit with accountID "", in no account's list.
	group(t, "PlatformAudit", func(t *testing.T) {
		t.Run("Pagination", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			var want []string
			var first *webhooks.AuditEntry
			for i := range 5 {
				e := &webhooks.AuditEntry{
					ID: webhooks.NewID(), Actor: admin.Actor, Action: webhooks.AuditEndpointUpdated,
					TargetType: webhooks.TargetEndpoint, TargetID: webhooks.NewID(), Outcome: webhooks.AuditSucceeded,
					Created: at(time.Duration(i) * time.Minute),
				}
				if i == 0 {
					e.Actor, e.Outcome, e.ErrorCode = webhooks.Actor{Type: webhooks.ActorSystem}, webhooks.AuditRefused, webhooks.EURLNOTALLOWED
					first = e
				}
				if err := recordAudit(t, s, e); err != nil {
					t.Fatalf("RecordAudit: %v", err)
				}
				want = append([]string{e.ID}, want...)
			}
			// An account's entry is not in the platform's list, and no
			// platform entry is in the account's.
			acct := &webhooks.AuditEntry{ID: webhooks.NewID(), AccountID: a.ID, Actor: admin.Actor, Action: webhooks.AuditEndpointSecretRevealed,
				TargetType: webhooks.TargetEndpoint, TargetID: webhooks.NewID(), Outcome: webhooks.AuditSucceeded, Created: at(time.Hour)}
			if err := recordAudit(t, s, acct); err != nil {
				t.Fatalf("RecordAudit: %v", err)
			}
			checkList(t, func(p webhooks.Page) (*webhooks.List[*webhooks.AuditEntry], error) {
				return s.ListAudit(t.Context(), "", p)
			}, auditID, want)
			if got := mapIDs(MustListAudit(t, s, a.ID), auditID); !slices.Equal(got, []string{acct.ID}) {
				t.Errorf("the account's audit: got %v, want [%s]", got, acct.ID)
			}
			// Round trip: no account, every other field as stored.
			got := MustListAudit(t, s, "")
			last := got[len(got)-1]
			if last.ID != first.ID || last.AccountID != "" || last.Actor != first.Actor || last.Action != first.Action || last.TargetType != first.TargetType ||
				last.TargetID != first.TargetID || last.Outcome != first.Outcome || last.ErrorCode != first.ErrorCode {
				t.Errorf("platform entry: got %+v, want %+v", last, first)
			}
			checkTime(t, "created", last.Created, first.Created)
		})

		// Every change to a platform endpoint by the admin writes its
		// entry in the platform's log, with no account, and none in an
		// account's.
		t.Run("Trail", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			type entry struct {
				action string
				at     time.Time
			}
			var want []entry // oldest first
			clock := t0
			next := func() time.Time { clock = clock.Add(time.Minute); return clock }
			record := func(action string) { want = append(want, entry{action, clock}) }

			e := &webhooks.Endpoint{Scope: webhooks.ScopePlatform, URL: "https://ops.example.com/hooks", EnabledEvents: []string{"*"}, Livemode: true, Created: next()}
			MustCreateEndpoint(t, s, e)
			record(webhooks.AuditEndpointCreated)
			pe := platformRef(e.ID)
			for _, step := range []struct {
				action string
				do     func(uc *app.App) error
			}{
				{webhooks.AuditEndpointUpdated, func(uc *app.App) error {
					_, err := uc.UpdateEndpoint(t.Context(), admin, pe, webhooks.EndpointUpdate{Description: ptr("ops")})
					return err
				}},
				{webhooks.AuditEndpointDisabled, func(uc *app.App) error {
					_, err := uc.UpdateEndpoint(t.Context(), admin, pe, webhooks.EndpointUpdate{Status: ptr(webhooks.EndpointDisabled)})
					return err
				}},
				{webhooks.AuditEndpointEnabled, func(uc *app.App) error {
					_, err := uc.UpdateEndpoint(t.Context(), admin, pe, webhooks.EndpointUpdate{Status: ptr(webhooks.EndpointEnabled)})
					return err
				}},
				{webhooks.AuditEndpointSecretRotated, func(uc *app.App) error {
					_, err := uc.RotateSecret(t.Context(), admin, pe, nil)
					return err
				}},
				{webhooks.AuditEndpointSecretRevealed, func(uc *app.App) error {
					_, err := uc.RevealSecret(t.Context(), admin, pe)
					return err
				}},
				{webhooks.AuditEndpointTestSent, func(uc *app.App) error {
					_, err := uc.SendTestEvent(t.Context(), admin, pe)
					return err
				}},
				{webhooks.AuditEndpointRehearsal, func(uc *app.App) error {
					_, err := uc.SendRehearsal(t.Context(), admin, pe)
					return err
				}},
				{webhooks.AuditEndpointDeleted, func(uc *app.App) error { return uc.DeleteEndpoint(t.Context(), admin, pe) }},
			} {
				if err := step.do(UseCases(s, next())); err != nil {
					t.Fatalf("%s: %v", step.action, err)
				}
				record(step.action)
			}

			entries := MustListAudit(t, s, "")
			if len(entries) != len(want) {
				t.Errorf("platform audit: got %d entries, want %d", len(entries), len(want))
			}
			for i := range min(len(entries), len(want)) {
				w := want[len(want)-1-i]
				checkAudit(t, entries[i], "", w.action, webhooks.TargetEndpoint, e.ID, w.at)
			}
			if got := MustListAudit(t, s, a.ID); len(got) != 0 {
				t.Errorf("an account's audit: got %d entries, want 0", len(got))
			}
		})

		// The service's own disable of a dead platform endpoint (a 410)
		// is the system's, in the platform's log.
		t.Run("SystemDisable", func(t *testing.T) {
			s := setup(t, open)
			e := mustPlatformEndpoint(t, s)
			now := at(time.Hour)
			d, err := UseCases(s, now).SendTestEvent(t.Context(), admin, platformRef(e.ID))
			if err != nil {
				t.Fatalf("SendTestEvent: %v", err)
			}
			MustFailPermanently(t, s, d.ID, now)
			mustDrain(t, s, now.Add(time.Second))
			if ep := MustFindEndpoint(t, s, e.ID); ep.Enabled() {
				t.Fatalf("the platform endpoint after a 410 and the drain: %s, want disabled", ep.Status)
			}
			entries := MustListAudit(t, s, "")
			if len(entries) == 0 {
				t.Fatalf("platform audit: no entries")
			}
			got := entries[0]
			if got.Action != webhooks.AuditEndpointDisabled || got.Actor.Type != webhooks.ActorSystem || got.TargetID != e.ID || got.AccountID != "" {
				t.Errorf("platform audit's newest entry: got %+v, want %s by the system on %s", got, webhooks.AuditEndpointDisabled, e.ID)
			}
		})
	})
}

// platformRef names a platform endpoint by its owner, the platform, as
// the API's /v1/webhook_endpoints routes do.
func platformRef(endpointID string) app.EndpointRef {
	return app.EndpointRef{Owner: app.PlatformOwner(), ID: endpointID}
}
