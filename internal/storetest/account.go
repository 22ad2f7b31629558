package storetest

import (
	"bytes"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func testAccounts(t *testing.T, open func(t *testing.T) webhooks.Store) {
	group(t, "CreateAccount", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			a := &webhooks.Account{ID: webhooks.NewID(), Name: "Gestoria Puig", Created: at(time.Second)}
			if err := s.CreateAccount(t.Context(), a); err != nil {
				t.Fatalf("CreateAccount: %v", err)
			}
			got, err := s.FindAccount(t.Context(), a.ID)
			if err != nil {
				t.Fatalf("FindAccount: %v", err)
			}
			if got.ID != a.ID || got.Name != a.Name || got.ProvisionedBy != "" || got.Managed() {
				t.Errorf("FindAccount: got %+v, want %+v", got, a)
			}
			checkTime(t, "created", got.Created, a.Created)
		})

		t.Run("Managed", func(t *testing.T) {
			s := setup(t, open)
			p := MustCreateAccount(t, s, "")
			a := MustCreateAccount(t, s, p.ID)
			got, err := s.FindAccount(t.Context(), a.ID)
			if err != nil {
				t.Fatalf("FindAccount: %v", err)
			}
			if got.ProvisionedBy != p.ID || !got.Managed() {
				t.Errorf("provisioned_by: got %q, want %q", got.ProvisionedBy, p.ID)
			}
		})

		t.Run("ErrInvalidProvisioning", func(t *testing.T) {
			s := setup(t, open)
			p := MustCreateAccount(t, s, "")
			managed := MustCreateAccount(t, s, p.ID)
			for name, by := range map[string]string{
				"unknown provisioner": webhooks.NewID(),
				// One level only: a managed account cannot provision another.
				"managed provisioner": managed.ID,
			} {
				a := &webhooks.Account{ID: webhooks.NewID(), Name: name, ProvisionedBy: by, Created: t0}
				checkCode(t, name, s.CreateAccount(t.Context(), a), webhooks.EINVALIDPROVISIONING)
				_, err := s.FindAccount(t.Context(), a.ID)
				checkCode(t, name+": the refused account", err, webhooks.ENOTFOUND)
			}
		})
	})

	group(t, "FindAccount", func(t *testing.T) {
		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			_, err := s.FindAccount(t.Context(), webhooks.NewID())
			checkCode(t, "FindAccount", err, webhooks.ENOTFOUND)
		})
	})
}

func testAPIKeys(t *testing.T, open func(t *testing.T) webhooks.Store) {
	newKey := func(accountID string) *webhooks.APIKey {
		return &webhooks.APIKey{ID: webhooks.NewID(), AccountID: accountID, Hash: []byte("hash of " + webhooks.NewID()), Created: at(time.Minute)}
	}

	group(t, "CreateAPIKey", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			k := newKey(a.ID)
			if err := s.CreateAPIKey(t.Context(), k, auditBy(admin)); err != nil {
				t.Fatalf("CreateAPIKey: %v", err)
			}
			got, err := s.FindAPIKey(t.Context(), k.Hash)
			if err != nil {
				t.Fatalf("FindAPIKey: %v", err)
			}
			if got.ID != k.ID || got.AccountID != a.ID || !bytes.Equal(got.Hash, k.Hash) {
				t.Errorf("FindAPIKey: got %+v, want %+v", got, k)
			}
			checkTime(t, "created", got.Created, k.Created)
			checkLastAudit(t, s, a.ID, webhooks.AuditAPIKeyCreated, webhooks.TargetAPIKey, k.ID, k.Created)
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			k := newKey(webhooks.NewID())
			checkCode(t, "CreateAPIKey", s.CreateAPIKey(t.Context(), k, auditBy(admin)), webhooks.ENOTFOUND)
			_, err := s.FindAPIKey(t.Context(), k.Hash)
			checkCode(t, "FindAPIKey of the refused key", err, webhooks.ENOTFOUND)
		})
	})

	group(t, "FindAPIKey", func(t *testing.T) {
		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			_, err := s.FindAPIKey(t.Context(), []byte("no such hash"))
			checkCode(t, "FindAPIKey", err, webhooks.ENOTFOUND)
		})
	})

	group(t, "RevokeAPIKey", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			k, kept := newKey(a.ID), newKey(a.ID)
			for _, k := range []*webhooks.APIKey{k, kept} {
				if err := s.CreateAPIKey(t.Context(), k, auditBy(admin)); err != nil {
					t.Fatalf("CreateAPIKey: %v", err)
				}
			}
			now := at(time.Hour)
			if err := s.RevokeAPIKey(t.Context(), a.ID, k.ID, now, auditBy(admin)); err != nil {
				t.Fatalf("RevokeAPIKey: %v", err)
			}
			// The key stops working at once.
			_, err := s.FindAPIKey(t.Context(), k.Hash)
			checkCode(t, "FindAPIKey of the revoked key", err, webhooks.ENOTFOUND)
			if _, err := s.FindAPIKey(t.Context(), kept.Hash); err != nil {
				t.Errorf("FindAPIKey of the other key: %v", err)
			}
			checkLastAudit(t, s, a.ID, webhooks.AuditAPIKeyRevoked, webhooks.TargetAPIKey, k.ID, now)
			checkCode(t, "RevokeAPIKey again", s.RevokeAPIKey(t.Context(), a.ID, k.ID, at(time.Hour), auditBy(admin)), webhooks.ENOTFOUND)
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			a, b := MustCreateAccount(t, s, ""), MustCreateAccount(t, s, "")
			k := newKey(b.ID)
			if err := s.CreateAPIKey(t.Context(), k, auditBy(admin)); err != nil {
				t.Fatalf("CreateAPIKey: %v", err)
			}
			// Another account's key is not found, and keeps working.
			checkCode(t, "RevokeAPIKey of another account's key", s.RevokeAPIKey(t.Context(), a.ID, k.ID, at(time.Hour), auditBy(admin)), webhooks.ENOTFOUND)
			if _, err := s.FindAPIKey(t.Context(), k.Hash); err != nil {
				t.Errorf("FindAPIKey after a refused revoke: %v", err)
			}
			checkCode(t, "RevokeAPIKey of an unknown key", s.RevokeAPIKey(t.Context(), a.ID, webhooks.NewID(), at(time.Hour), auditBy(admin)), webhooks.ENOTFOUND)
			if got := MustListAudit(t, s, a.ID); len(got) != 0 {
				t.Errorf("audit after refused revokes: got %d entries, want 0", len(got))
			}
		})
	})
}
