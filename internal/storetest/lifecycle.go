package storetest

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// testLifecycle checks SPEC 19: renames, the erasure of an event, and the
// deletion of a company or an account, with its chunked erasure job.
func testLifecycle(t *testing.T, open func(t *testing.T) Store) {
	group(t, "Rename", func(t *testing.T) {
		t.Run("Account", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			uc := UseCases(s, at(time.Minute))
			got, err := uc.UpdateAccount(t.Context(), admin, a.ID, ptr("  Gestoria Puig SL "))
			if err != nil {
				t.Fatalf("UpdateAccount: %v", err)
			}
			if got.Name != "Gestoria Puig SL" {
				t.Errorf("UpdateAccount: name: got %q, want %q", got.Name, "Gestoria Puig SL")
			}
			if found, _ := s.FindAccount(t.Context(), a.ID); found == nil || found.Name != "Gestoria Puig SL" || !found.Created.Equal(a.Created) {
				t.Errorf("FindAccount after rename: got %+v, want the new name and the old created", found)
			}
			checkLastAudit(t, s, a.ID, webhooks.AuditAccountUpdated, webhooks.TargetAccount, a.ID, at(time.Minute))
		})

		t.Run("Company", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			co := MustCreateCompany(t, s, a.ID)
			got, err := UseCases(s, at(time.Minute)).UpdateCompany(t.Context(), admin, co.ID, ptr("Fusteria Vila i Fills SL"))
			if err != nil {
				t.Fatalf("UpdateCompany: %v", err)
			}
			found, err := s.FindCompany(t.Context(), co.ID)
			if err != nil {
				t.Fatalf("FindCompany: %v", err)
			}
			for _, c := range []*webhooks.Company{got, found} {
				if c.Name != "Fusteria Vila i Fills SL" || c.NIF != co.NIF || c.AccountID != a.ID {
					t.Errorf("company after rename: got %+v, want the new name, NIF %s and account %s", c, co.NIF, a.ID)
				}
			}
			checkLastAudit(t, s, a.ID, webhooks.AuditCompanyUpdated, webhooks.TargetCompany, co.ID, at(time.Minute))
		})

		t.Run("Refused", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			co := MustCreateCompany(t, s, a.ID)
			uc := UseCases(s, at(time.Minute))
			for _, name := range []*string{nil, ptr(""), ptr("   "), ptr(strings.Repeat("x", webhooks.MaxNameLength+1))} {
				_, err := uc.UpdateAccount(t.Context(), admin, a.ID, name)
				checkCode(t, "UpdateAccount with a bad name", err, webhooks.EINVALID)
				_, err = uc.UpdateCompany(t.Context(), admin, co.ID, name)
				checkCode(t, "UpdateCompany with a bad name", err, webhooks.EINVALID)
			}
			key, _, err := uc.CreateAPIKey(t.Context(), admin, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			owner := app.Caller{Actor: webhooks.Actor{Type: webhooks.ActorAPIKey, ID: key.ID}, AccountID: a.ID}
			_, err = uc.UpdateAccount(t.Context(), owner, a.ID, ptr("Mine"))
			checkCode(t, "UpdateAccount with an account key", err, webhooks.EFORBIDDEN)
			_, err = uc.UpdateCompany(t.Context(), owner, co.ID, ptr("Mine"))
			checkCode(t, "UpdateCompany with an account key", err, webhooks.EFORBIDDEN)
			_, err = uc.UpdateAccount(t.Context(), admin, webhooks.NewID(), ptr("Nobody"))
			checkCode(t, "UpdateAccount of no account", err, webhooks.ENOTFOUND)
			_, err = uc.UpdateCompany(t.Context(), admin, "not-an-id", ptr("Nobody"))
			checkCode(t, "UpdateCompany of no company", err, webhooks.ENOTFOUND)
			if got, _ := s.FindAccount(t.Context(), a.ID); got.Name != a.Name {
				t.Errorf("account after refused renames: name %q, want %q", got.Name, a.Name)
			}
			if got, _ := s.FindCompany(t.Context(), co.ID); got.Name != co.Name || got.NIF != co.NIF {
				t.Errorf("company after refused renames: got %+v, want %+v", got, co)
			}
			// The refusals are in the log, as refusals.
			for _, e := range MustListAudit(t, s, a.ID) {
				if (e.Action == webhooks.AuditAccountUpdated || e.Action == webhooks.AuditCompanyUpdated) && e.Outcome != webhooks.AuditRefused {
					t.Errorf("audit %s: outcome %q, want refused", e.Action, e.Outcome)
				}
			}
		})
	})

	group(t, "EraseEvent", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			f := newLifecycleFixture(t, s)
			ev, ds := f.register(t, s, at(time.Minute), "order-1")
			delivered, pending := ds[0], ds[1] // the company endpoint's, the account endpoint's
			MustAttempt(t, s, delivered.ID, at(time.Minute), 200, webhooks.Transition{Status: webhooks.DeliveryDelivered})
			got, err := UseCases(s, at(time.Hour)).EraseEvent(t.Context(), admin, ev.ID)
			if err != nil {
				t.Fatalf("EraseEvent: %v", err)
			}
			for name, e := range map[string]*webhooks.Event{"EraseEvent": got, "FindEvent": MustFindEvent(t, s, ev.ID)} {
				checkErased(t, name, e, ev, at(time.Hour))
			}
			checkErasedDelivery(t, s, delivered.ID, webhooks.Transition{Status: webhooks.DeliveryDelivered}, 1)
			checkErasedDelivery(t, s, pending.ID, webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEventErased}, 0)
			checkLastAudit(t, s, f.account.ID, webhooks.AuditEventErased, webhooks.TargetEvent, ev.ID, at(time.Hour))

			// Its id still deduplicates: the key answers the erased event.
			again := NewEvent(t, "invoice.sent", f.company.ID, at(2*time.Hour))
			first, _, created, err := s.RegisterEvent(t.Context(), again, f.key("order-1", at(2*time.Hour)))
			if err != nil || created || first.ID != ev.ID || !first.Erased() {
				t.Errorf("RegisterEvent with the erased event's key: got %v created %t erased %t (%v), want %s, not created, erased", first, created, first != nil && first.Erased(), err, ev.ID)
			}
			// Erasing again changes nothing: the first erased_at stays.
			got, err = UseCases(s, at(3*time.Hour)).EraseEvent(t.Context(), admin, ev.ID)
			if err != nil {
				t.Fatalf("EraseEvent again: %v", err)
			}
			checkTime(t, "erased_at after a second erase", got.ErasedAt, at(time.Hour))
			checkTime(t, "stored erased_at after a second erase", MustFindEvent(t, s, ev.ID).ErasedAt, at(time.Hour))
		})

		t.Run("InFlight", func(t *testing.T) {
			// An attempt under way when the event is erased records its
			// outcome, without the receiver's answer.
			s := setup(t, open)
			f := newLifecycleFixture(t, s)
			ev, ds := f.register(t, s, at(time.Minute), "")
			claim := MustClaimOne(t, s, ds[1].ID, at(time.Minute))
			if _, err := UseCases(s, at(time.Minute+10*time.Second)).EraseEvent(t.Context(), admin, ev.ID); err != nil {
				t.Fatal(err)
			}
			MustRecord(t, s, NewRecord(claim, at(time.Minute+20*time.Second), 503, retryAt(at(time.Hour))))
			d := MustFindDelivery(t, s, ds[1].ID)
			if len(d.Attempts) != 1 {
				t.Fatalf("the attempt in flight at the erasure: got %d attempts, want 1", len(d.Attempts))
			}
			if a := d.Attempts[0]; a.ResponseBody != "" || a.ResponseStatus != 503 {
				t.Errorf("the attempt in flight at the erasure: got status %d, response body %q; want 503 without its response body", a.ResponseStatus, a.ResponseBody)
			}
			checkState(t, "the delivery in flight at the erasure", d, webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEventErased}, 1)
			if len(d.Body) != 0 {
				t.Errorf("the delivery in flight at the erasure: body %q, want none", d.Body)
			}
		})

		t.Run("Resend", func(t *testing.T) {
			s := setup(t, open)
			f := newLifecycleFixture(t, s)
			ev, ds := f.register(t, s, at(time.Minute), "")
			MustFailPermanently(t, s, ds[0].ID, at(time.Minute))
			MustFailPermanently(t, s, ds[1].ID, at(time.Minute))
			if _, err := UseCases(s, at(time.Hour)).EraseEvent(t.Context(), admin, ev.ID); err != nil {
				t.Fatal(err)
			}
			_, err := replayDelivery(t, s, ds[0].ID, at(2*time.Hour))
			checkCode(t, "replay of an erased event", err, webhooks.EEVENTERASED)
			_, err = retryDelivery(t, s, ds[1].ID, at(2*time.Hour))
			checkCode(t, "retry of an erased event", err, webhooks.EEVENTERASED)
			for _, id := range []string{f.companyEP.ID, f.accountEP.ID} {
				n, err := recoverRange(t, s, id, t0, at(time.Hour), at(2*time.Hour))
				if err != nil || n != 0 {
					t.Errorf("recover of an erased event: got %d (%v), want 0", n, err)
				}
			}
			for _, d := range ds {
				checkState(t, "delivery after refused resends", MustFindDelivery(t, s, d.ID), failedPermanently, 1)
			}
			if n := len(MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: f.companyEP.ID})); n != 1 {
				t.Errorf("company endpoint's deliveries after a refused replay: got %d, want 1", n)
			}
		})

		t.Run("Refused", func(t *testing.T) {
			s := setup(t, open)
			f := newLifecycleFixture(t, s)
			ev, ds := f.register(t, s, at(time.Minute), "")
			uc := UseCases(s, at(time.Hour))
			_, err := uc.EraseEvent(t.Context(), admin, webhooks.NewID())
			checkCode(t, "EraseEvent of no event", err, webhooks.ENOTFOUND)
			_, err = uc.EraseEvent(t.Context(), admin, "nope")
			checkCode(t, "EraseEvent of a bad id", err, webhooks.ENOTFOUND)
			owner := app.Caller{Actor: webhooks.Actor{Type: webhooks.ActorAPIKey, ID: webhooks.NewID()}, AccountID: f.account.ID}
			_, err = uc.EraseEvent(t.Context(), owner, ev.ID)
			checkCode(t, "EraseEvent with an account key", err, webhooks.EFORBIDDEN)
			got := MustFindEvent(t, s, ev.ID)
			if got.Erased() || !bytes.Equal(got.Object, ev.Object) {
				t.Errorf("event after refused erasures: erased %t object %s, want not erased, %s", got.Erased(), got.Object, ev.Object)
			}
			for _, d := range ds {
				if got := MustFindDelivery(t, s, d.ID); got.Status != webhooks.DeliveryPending || len(got.Body) == 0 {
					t.Errorf("delivery after refused erasures: status %s, %d body bytes; want pending with its body", got.Status, len(got.Body))
				}
			}
		})
	})

	group(t, "DeleteCompany", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			f := newLifecycleFixture(t, s)
			other := MustCreateCompany(t, s, f.account.ID)
			otherEv := NewEvent(t, "invoice.sent", other.ID, at(time.Minute))
			otherDs := MustRegisterEvent(t, s, otherEv)
			var evs []*webhooks.Event
			var deliveries [][]*webhooks.Delivery
			for i := range 5 {
				ev, ds := f.register(t, s, at(time.Minute+time.Duration(i)*time.Second), "")
				evs, deliveries = append(evs, ev), append(deliveries, ds)
			}
			MustAttempt(t, s, deliveries[0][1].ID, at(2*time.Minute), 200, delivered)
			uc := UseCases(s, at(time.Hour))
			if err := uc.DeleteCompany(t.Context(), admin, f.company.ID); err != nil {
				t.Fatalf("DeleteCompany: %v", err)
			}
			_, err := s.FindCompany(t.Context(), f.company.ID)
			checkCode(t, "FindCompany of a deleted company", err, webhooks.ENOTFOUND)
			_, err = s.FindEndpoint(t.Context(), f.companyEP.ID)
			checkCode(t, "FindEndpoint of a deleted company's endpoint", err, webhooks.ENOTFOUND)
			if l, _ := s.ListCompanies(t.Context(), f.account.ID, webhooks.Page{Limit: 10}); len(l.Data) != 1 || l.Data[0].ID != other.ID {
				t.Errorf("ListCompanies after the delete: got %v, want only %s", mapIDs(l.Data, func(c *webhooks.Company) string { return c.ID }), other.ID)
			}
			// At once, before the job ran: the events read erased, and
			// nothing pending is left to send.
			for i, ev := range evs {
				checkErased(t, "event before the job", MustFindEvent(t, s, ev.ID), ev, at(time.Hour))
				checkState(t, "company endpoint's delivery", MustFindDelivery(t, s, deliveries[i][0].ID),
					webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEndpointDeleted}, 0)
				if i > 0 {
					checkState(t, "account endpoint's delivery", MustFindDelivery(t, s, deliveries[i][1].ID),
						webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEventErased}, 0)
				}
			}
			if claims := MustClaim(t, s, at(time.Hour), 100); len(claims) != 1 || claims[0].Delivery.EventID != otherEv.ID {
				t.Errorf("claims after the delete: got %d (%v), want only the other company's event's", len(claims), claimIDs(claims))
			}
			// The job, two events a chunk: three chunks, then none left.
			chunks := 0
			for {
				more, err := uc.EraseNext(t.Context(), 2)
				if err != nil {
					t.Fatalf("EraseNext: %v", err)
				}
				if !more {
					break
				}
				if chunks++; chunks > 10 {
					t.Fatal("EraseNext: still more after 10 chunks of 2 events")
				}
			}
			if chunks != 3 {
				t.Errorf("EraseNext: got %d chunks of 2 for 5 events, want 3", chunks)
			}
			// What makes the bytes leave the disk runs on every backend.
			if err := s.Scrub(t.Context()); err != nil {
				t.Errorf("Scrub: %v", err)
			}
			for i, ev := range evs {
				checkErased(t, "event after the job", MustFindEvent(t, s, ev.ID), ev, at(time.Hour))
				checkErasedDelivery(t, s, deliveries[i][0].ID, webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEndpointDeleted}, 0)
				if i == 0 {
					checkErasedDelivery(t, s, deliveries[i][1].ID, delivered, 1)
				} else {
					checkErasedDelivery(t, s, deliveries[i][1].ID, webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEventErased}, 0)
				}
			}
			// The account endpoint keeps its (erased) deliveries; the other
			// company's event is untouched.
			if n := len(MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: f.accountEP.ID})); n != 6 {
				t.Errorf("account endpoint's deliveries: got %d, want 6", n)
			}
			if got := MustFindEvent(t, s, otherEv.ID); got.Erased() || !bytes.Equal(got.Object, otherEv.Object) {
				t.Errorf("the other company's event: erased %t object %s, want untouched", got.Erased(), got.Object)
			}
			for _, d := range otherDs {
				if got := MustFindDelivery(t, s, d.ID); len(got.Body) == 0 || got.Reason != "" {
					t.Errorf("the other company's delivery: %d body bytes, reason %q; want untouched", len(got.Body), got.Reason)
				}
			}
			// Its NIF is free; an event naming it is refused.
			if _, err := UseCases(s, at(2*time.Hour)).CreateCompany(t.Context(), admin, f.account.ID, f.company.NIF, "Nova SL"); err != nil {
				t.Errorf("CreateCompany with the deleted company's NIF: %v", err)
			}
			_, _, _, err = s.RegisterEvent(t.Context(), NewEvent(t, "invoice.sent", f.company.ID, at(2*time.Hour)), nil)
			checkCode(t, "RegisterEvent naming a deleted company", err, webhooks.EUNKNOWNCOMPANY)
			entries := MustListAudit(t, s, f.account.ID)
			var deleted, endpointDeleted bool
			for _, e := range entries {
				deleted = deleted || (e.Action == webhooks.AuditCompanyDeleted && e.TargetID == f.company.ID)
				endpointDeleted = endpointDeleted || (e.Action == webhooks.AuditEndpointDeleted && e.TargetID == f.companyEP.ID)
			}
			if !deleted || !endpointDeleted {
				t.Errorf("audit after the delete: company.deleted %t, webhook_endpoint.deleted %t; want both", deleted, endpointDeleted)
			}
		})

		t.Run("Refused", func(t *testing.T) {
			s := setup(t, open)
			f := newLifecycleFixture(t, s)
			ev, _ := f.register(t, s, at(time.Minute), "")
			uc := UseCases(s, at(time.Hour))
			checkCode(t, "DeleteCompany of no company", uc.DeleteCompany(t.Context(), admin, webhooks.NewID()), webhooks.ENOTFOUND)
			owner := app.Caller{Actor: webhooks.Actor{Type: webhooks.ActorAPIKey, ID: webhooks.NewID()}, AccountID: f.account.ID}
			checkCode(t, "DeleteCompany with an account key", uc.DeleteCompany(t.Context(), owner, f.company.ID), webhooks.EFORBIDDEN)
			if _, err := s.FindCompany(t.Context(), f.company.ID); err != nil {
				t.Errorf("FindCompany after refused deletes: %v", err)
			}
			MustFindEndpoint(t, s, f.companyEP.ID)
			if got := MustFindEvent(t, s, ev.ID); got.Erased() {
				t.Error("event after refused deletes: erased")
			}
			if more, err := uc.EraseNext(t.Context(), 10); more || err != nil {
				t.Errorf("EraseNext after refused deletes: got more %t (%v), want no job", more, err)
			}
		})
	})

	group(t, "DeleteAccount", func(t *testing.T) {
		t.Run("RacesCreations", func(t *testing.T) {
			// A deletion and the creation of a managed account or a
			// company of the account take turns: the account is not deleted
			// while an account it provisioned exists, and a company
			// created first is deleted with it.
			s := setup(t, open)
			uc := UseCases(s, at(time.Hour))
			for i := range 8 {
				p := MustCreateAccount(t, s, "")
				var delErr, accErr, coErr error
				var wg sync.WaitGroup
				wg.Go(func() { delErr = uc.DeleteAccount(t.Context(), admin, p.ID) })
				wg.Go(func() { _, accErr = uc.CreateAccount(t.Context(), admin, "Client", p.ID) })
				wg.Go(func() { _, coErr = uc.CreateCompany(t.Context(), admin, p.ID, NewNIF(), "Late SL") })
				wg.Wait()
				if delErr == nil && accErr == nil {
					t.Errorf("round %d: the account was deleted, and a managed account of it was created", i)
				}
				if delErr != nil && coErr != nil {
					t.Errorf("round %d: the deletion was refused (%v), and the company's creation too (%v)", i, delErr, coErr)
				}
				if delErr != nil {
					checkCode(t, "the deletion that lost", delErr, webhooks.EHASMANAGEDACCOUNTS)
				}
				if delErr == nil {
					if l, _ := s.ListCompanies(t.Context(), p.ID, webhooks.Page{Limit: 10}); len(l.Data) != 0 {
						t.Errorf("round %d: a deleted account has %d companies", i, len(l.Data))
					}
				}
			}
		})

		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			p := MustCreateAccount(t, s, "")
			managedEP := MustCreateEndpoint(t, s, NewAccountEndpoint(p.ID, []webhooks.Relationship{webhooks.RelationshipManaged}, "*"))
			f := newLifecycleFixtureOf(t, s, p.ID)
			uc := UseCases(s, at(time.Hour))
			_, raw, err := uc.CreateAPIKey(t.Context(), admin, f.account.ID)
			if err != nil {
				t.Fatal(err)
			}
			ev, ds := f.register(t, s, at(time.Minute), "")
			accountEv := NewAccountEvent(t, "account.updated", f.account.ID, at(2*time.Minute))
			accountDs := MustRegisterEvent(t, s, accountEv)
			if len(ds) != 3 || len(accountDs) != 2 {
				t.Fatalf("deliveries: got %d and %d, want 3 (company, own, managed) and 2 (own, managed)", len(ds), len(accountDs))
			}
			// The provisioning account cannot go first.
			err = uc.DeleteAccount(t.Context(), admin, p.ID)
			checkCode(t, "DeleteAccount of an account that provisioned one", err, webhooks.EHASMANAGEDACCOUNTS)
			if _, err := s.FindAccount(t.Context(), p.ID); err != nil {
				t.Errorf("FindAccount after the refused delete: %v", err)
			}
			MustFindEndpoint(t, s, managedEP.ID)

			if err := uc.DeleteAccount(t.Context(), admin, f.account.ID); err != nil {
				t.Fatalf("DeleteAccount: %v", err)
			}
			_, err = s.FindAccount(t.Context(), f.account.ID)
			checkCode(t, "FindAccount of a deleted account", err, webhooks.ENOTFOUND)
			_, err = s.FindCompany(t.Context(), f.company.ID)
			checkCode(t, "FindCompany of a deleted account's company", err, webhooks.ENOTFOUND)
			_, err = uc.Authenticate(t.Context(), raw)
			checkCode(t, "Authenticate with a deleted account's key", err, webhooks.EUNAUTHORIZED)
			for _, id := range []string{f.companyEP.ID, f.accountEP.ID} {
				_, err = s.FindEndpoint(t.Context(), id)
				checkCode(t, "FindEndpoint of a deleted account's endpoint", err, webhooks.ENOTFOUND)
			}
			// The managed endpoint stays, its pending deliveries of the
			// account's events ended.
			MustFindEndpoint(t, s, managedEP.ID)
			for _, d := range append(ds, accountDs...) {
				if d.EndpointID == managedEP.ID {
					checkState(t, "provisioning account's delivery", MustFindDelivery(t, s, d.ID),
						webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEventErased}, 0)
				}
			}
			for more := true; more; {
				if more, err = uc.EraseNext(t.Context(), webhooks.ErasureChunk); err != nil {
					t.Fatal(err)
				}
			}
			for _, e := range []*webhooks.Event{ev, accountEv} {
				checkErased(t, "a deleted account's event", MustFindEvent(t, s, e.ID), e, at(time.Hour))
			}
			for _, d := range append(ds, accountDs...) {
				if got := MustFindDelivery(t, s, d.ID); len(got.Body) != 0 {
					t.Errorf("delivery %s after the job: %d body bytes, want 0", d.ID, len(got.Body))
				}
			}
			// Its audit log stays, and the admin reads it.
			l, err := uc.ListAudit(t.Context(), admin, f.account.ID, webhooks.Page{Limit: 100})
			if err != nil {
				t.Fatalf("ListAudit of a deleted account: %v", err)
			}
			if len(l.Data) == 0 {
				t.Fatal("ListAudit of a deleted account: no entries")
			}
			checkAudit(t, l.Data[0], f.account.ID, webhooks.AuditAccountDeleted, webhooks.TargetAccount, f.account.ID, at(time.Hour))
			if da, err := s.FindDeletedAccount(t.Context(), f.account.ID); err != nil || da.Name != "" {
				t.Errorf("FindDeletedAccount: got %+v (%v), want its tombstone, name erased", da, err)
			}
			// Now the provisioning account can go.
			if err := uc.DeleteAccount(t.Context(), admin, p.ID); err != nil {
				t.Errorf("DeleteAccount of the provisioning account after its managed one: %v", err)
			}
			if l, _ := s.ListAccounts(t.Context(), webhooks.Page{Limit: 10}); len(l.Data) != 0 {
				t.Errorf("ListAccounts after both deletes: got %d accounts, want 0", len(l.Data))
			}
		})

		t.Run("Refused", func(t *testing.T) {
			s := setup(t, open)
			uc := UseCases(s, at(time.Hour))
			checkCode(t, "DeleteAccount of no account", uc.DeleteAccount(t.Context(), admin, webhooks.NewID()), webhooks.ENOTFOUND)
			a := MustCreateAccount(t, s, "")
			owner := app.Caller{Actor: webhooks.Actor{Type: webhooks.ActorAPIKey, ID: webhooks.NewID()}, AccountID: a.ID}
			checkCode(t, "DeleteAccount with an account key", uc.DeleteAccount(t.Context(), owner, a.ID), webhooks.EFORBIDDEN)
			if _, err := s.FindAccount(t.Context(), a.ID); err != nil {
				t.Errorf("FindAccount after refused deletes: %v", err)
			}
			_, err := uc.ListAudit(t.Context(), admin, webhooks.NewID(), webhooks.Page{Limit: 10})
			checkCode(t, "ListAudit of no account", err, webhooks.ENOTFOUND)
		})
	})
}

// lifecycleFixture is an account with a company, a company endpoint and
// an account endpoint, each subscribed to everything.
type lifecycleFixture struct {
	account              *webhooks.Account
	company              *webhooks.Company
	companyEP, accountEP *webhooks.Endpoint
}

func newLifecycleFixture(t *testing.T, s Store) *lifecycleFixture {
	return newLifecycleFixtureOf(t, s, "")
}

// newLifecycleFixtureOf makes the fixture's account managed by
// provisionedBy, when set.
func newLifecycleFixtureOf(t *testing.T, s Store, provisionedBy string) *lifecycleFixture {
	t.Helper()
	f := &lifecycleFixture{account: MustCreateAccount(t, s, provisionedBy)}
	f.company = MustCreateCompany(t, s, f.account.ID)
	f.companyEP = MustCreateEndpoint(t, s, NewCompanyEndpoint(f.company.ID, "*"))
	f.accountEP = MustCreateEndpoint(t, s, NewAccountEndpoint(f.account.ID, nil, "*"))
	return f
}

func (f *lifecycleFixture) key(k string, now time.Time) *webhooks.IdempotencyKey {
	if k == "" {
		return nil
	}
	return &webhooks.IdempotencyKey{Key: k, RequestHash: []byte(k), Created: now}
}

// register registers an invoice.sent event of the company at now (with
// the idempotency key k, if set) and returns it with its deliveries: the
// company endpoint's first, then the account endpoint's, then any other.
func (f *lifecycleFixture) register(t *testing.T, s Store, now time.Time, k string) (*webhooks.Event, []*webhooks.Delivery) {
	t.Helper()
	ev := NewEvent(t, "invoice.sent", f.company.ID, now)
	_, ds, created, err := s.RegisterEvent(t.Context(), ev, f.key(k, now))
	if err != nil || !created {
		t.Fatalf("RegisterEvent: created %t, %v", created, err)
	}
	out := make([]*webhooks.Delivery, 2)
	for _, d := range ds {
		switch d.EndpointID {
		case f.companyEP.ID:
			out[0] = d
		case f.accountEP.ID:
			out[1] = d
		default:
			out = append(out, d)
		}
	}
	if out[0] == nil || out[1] == nil {
		t.Fatalf("RegisterEvent: deliveries %v, want one to each of the fixture's endpoints", deliveryIDs(ds))
	}
	return ev, out
}

// checkErased reports an event that is not ev erased at erasedAt: the
// payload gone, what deduplication and reconciliation need kept.
func checkErased(tb testing.TB, name string, got, ev *webhooks.Event, erasedAt time.Time) {
	tb.Helper()
	if !got.Erased() || got.Object != nil || got.Traceparent != "" {
		tb.Errorf("%s: erased %t, object %q, traceparent %q; want erased, no object, no traceparent", name, got.Erased(), got.Object, got.Traceparent)
	}
	checkTime(tb, name+": erased_at", got.ErasedAt, erasedAt)
	if got.ID != ev.ID || got.Type != ev.Type || got.AccountID != ev.AccountID || got.CompanyID != ev.CompanyID ||
		got.Livemode != ev.Livemode || got.CorrelationID != ev.CorrelationID {
		tb.Errorf("%s: got %+v, want the id, type, owners and flags of %+v", name, got, ev)
	}
	checkTime(tb, name+": created", got.Created, ev.Created)
}

// checkErasedDelivery reports a delivery that is not in state want with
// attempts attempts, or that kept its body or a response body.
func checkErasedDelivery(tb testing.TB, s Store, id string, want webhooks.Transition, attempts int) {
	tb.Helper()
	d := MustFindDelivery(tb, s, id)
	checkState(tb, "erased event's delivery", d, want, attempts)
	if len(d.Body) != 0 {
		tb.Errorf("erased event's delivery %s: body %q, want none", id, d.Body)
	}
	if len(d.Attempts) != attempts {
		tb.Errorf("erased event's delivery %s: %d attempts, want %d", id, len(d.Attempts), attempts)
	}
	for _, a := range d.Attempts {
		if a.ResponseBody != "" {
			tb.Errorf("erased event's delivery %s: attempt %d keeps its response body %q", id, a.Number, a.ResponseBody)
		}
		if a.ResponseStatus == 0 && a.Error == "" {
			tb.Errorf("erased event's delivery %s: attempt %d lost its outcome", id, a.Number)
		}
	}
}
