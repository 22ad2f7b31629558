package storetest

import (
	"bytes"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func testAccounts(t *testing.T, open func(t *testing.T) Store) {
	group(t, "CreateAccount", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			a, err := UseCases(s, at(time.Second)).CreateAccount(t.Context(), admin, "Gestoria Puig", "")
			if err != nil {
				t.Fatalf("CreateAccount: %v", err)
			}
			got, err := s.FindAccount(t.Context(), a.ID)
			if err != nil {
				t.Fatalf("FindAccount: %v", err)
			}
			if got.ID != a.ID || got.Name != "Gestoria Puig" || got.ProvisionedBy != "" || got.Managed() {
				t.Errorf("FindAccount: got %+v, want %+v", got, a)
			}
			checkTime(t, "created", got.Created, at(time.Second))
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
				a, err := UseCases(s, t0).CreateAccount(t.Context(), admin, name, by)
				checkCode(t, name, err, webhooks.EINVALIDPROVISIONING)
				if a != nil {
					t.Errorf("%s: got account %s, want none", name, a.ID)
				}
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

func testAPIKeys(t *testing.T, open func(t *testing.T) Store) {
	newKey := func(t *testing.T, s Store, accountID string) *webhooks.APIKey {
		t.Helper()
		k, _, err := UseCases(s, at(time.Minute)).CreateAPIKey(t.Context(), admin, accountID)
		if err != nil {
			t.Fatalf("CreateAPIKey: %v", err)
		}
		return k
	}
	revoke := func(t *testing.T, s Store, accountID, keyID string, now time.Time) error {
		return UseCases(s, now).RevokeAPIKey(t.Context(), admin, accountID, keyID)
	}

	group(t, "CreateAPIKey", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			uc := UseCases(s, at(time.Minute))
			k, key, err := uc.CreateAPIKey(t.Context(), admin, a.ID)
			if err != nil {
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
			// The key the caller is shown, and only it, authenticates.
			if c, err := uc.Authenticate(t.Context(), key); err != nil || c.AccountID != a.ID || c.Actor.ID != k.ID {
				t.Errorf("Authenticate: got %+v, %v, want the key of account %s", c, err, a.ID)
			}
			_, err = uc.Authenticate(t.Context(), key+"x")
			checkCode(t, "Authenticate with another key", err, webhooks.EUNAUTHORIZED)
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			k, key, err := UseCases(s, t0).CreateAPIKey(t.Context(), admin, webhooks.NewID())
			checkCode(t, "CreateAPIKey", err, webhooks.ENOTFOUND)
			if k != nil || key != "" {
				t.Errorf("CreateAPIKey of an unknown account: got key %+v", k)
			}
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
			k, kept := newKey(t, s, a.ID), newKey(t, s, a.ID)
			now := at(time.Hour)
			if err := revoke(t, s, a.ID, k.ID, now); err != nil {
				t.Fatalf("RevokeAPIKey: %v", err)
			}
			// The key stops working at once.
			_, err := s.FindAPIKey(t.Context(), k.Hash)
			checkCode(t, "FindAPIKey of the revoked key", err, webhooks.ENOTFOUND)
			if _, err := s.FindAPIKey(t.Context(), kept.Hash); err != nil {
				t.Errorf("FindAPIKey of the other key: %v", err)
			}
			checkLastAudit(t, s, a.ID, webhooks.AuditAPIKeyRevoked, webhooks.TargetAPIKey, k.ID, now)
			checkCode(t, "RevokeAPIKey again", revoke(t, s, a.ID, k.ID, at(time.Hour)), webhooks.ENOTFOUND)
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			a, b := MustCreateAccount(t, s, ""), MustCreateAccount(t, s, "")
			k := newKey(t, s, b.ID)
			// Another account's key is not found, and keeps working.
			checkCode(t, "RevokeAPIKey of another account's key", revoke(t, s, a.ID, k.ID, at(time.Hour)), webhooks.ENOTFOUND)
			if _, err := s.FindAPIKey(t.Context(), k.Hash); err != nil {
				t.Errorf("FindAPIKey after a refused revoke: %v", err)
			}
			checkCode(t, "RevokeAPIKey of an unknown key", revoke(t, s, a.ID, webhooks.NewID(), at(time.Hour)), webhooks.ENOTFOUND)
			if got := MustListAudit(t, s, a.ID); len(got) != 0 {
				t.Errorf("audit after refused revokes: got %d entries, want 0", len(got))
			}
		})
	})
}
