package storetest

import (
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func testCompanies(t *testing.T, open func(t *testing.T) webhooks.Store) {
	group(t, "CreateCompany", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := &webhooks.Company{ID: webhooks.NewID(), AccountID: a.ID, NIF: NewNIF(), Name: "Fusteria Vila SL", Created: at(time.Second)}
			if err := s.CreateCompany(t.Context(), c); err != nil {
				t.Fatalf("CreateCompany: %v", err)
			}
			got, err := s.FindCompany(t.Context(), c.ID)
			if err != nil {
				t.Fatalf("FindCompany: %v", err)
			}
			if got.ID != c.ID || got.AccountID != a.ID || got.NIF != c.NIF || got.Name != c.Name {
				t.Errorf("FindCompany: got %+v, want %+v", got, c)
			}
			checkTime(t, "created", got.Created, c.Created)
		})

		t.Run("ErrNIFTaken", func(t *testing.T) {
			s := setup(t, open)
			a, b := MustCreateAccount(t, s, ""), MustCreateAccount(t, s, "")
			first := MustCreateCompany(t, s, a.ID)
			// A NIF is unique on the platform, not per account.
			for _, accountID := range []string{a.ID, b.ID} {
				c := &webhooks.Company{ID: webhooks.NewID(), AccountID: accountID, NIF: first.NIF, Name: "Again", Created: t0}
				checkCode(t, "CreateCompany with a taken NIF", s.CreateCompany(t.Context(), c), webhooks.ENIFTAKEN)
				_, err := s.FindCompany(t.Context(), c.ID)
				checkCode(t, "FindCompany of the refused company", err, webhooks.ENOTFOUND)
			}
		})

		t.Run("ErrUnknownAccount", func(t *testing.T) {
			s := setup(t, open)
			c := &webhooks.Company{ID: webhooks.NewID(), AccountID: webhooks.NewID(), NIF: NewNIF(), Name: "Orphan", Created: t0}
			checkCode(t, "CreateCompany", s.CreateCompany(t.Context(), c), webhooks.EUNKNOWNACCOUNT)
		})
	})

	group(t, "FindCompany", func(t *testing.T) {
		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			_, err := s.FindCompany(t.Context(), webhooks.NewID())
			checkCode(t, "FindCompany", err, webhooks.ENOTFOUND)
		})
	})
}
