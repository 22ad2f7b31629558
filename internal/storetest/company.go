package storetest

import (
	"slices"
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

	group(t, "ListCompanies", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			a, b := MustCreateAccount(t, s, ""), MustCreateAccount(t, s, "")
			var mine []*webhooks.Company
			for i := range 5 {
				c := &webhooks.Company{ID: webhooks.NewID(), AccountID: a.ID, NIF: NewNIF(), Name: "Company", Created: at(time.Duration(i) * time.Second)}
				if err := s.CreateCompany(t.Context(), c); err != nil {
					t.Fatal(err)
				}
				mine = append(mine, c)
			}
			MustCreateCompany(t, s, b.ID)
			var got []string
			p := webhooks.Page{Limit: 2}
			for {
				l, err := s.ListCompanies(t.Context(), a.ID, p)
				if err != nil {
					t.Fatalf("ListCompanies: %v", err)
				}
				for _, c := range l.Data {
					got = append(got, c.ID)
				}
				if !l.HasMore {
					break
				}
				p.StartingAfter = l.Data[len(l.Data)-1].ID
			}
			var want []string
			for i := len(mine) - 1; i >= 0; i-- {
				want = append(want, mine[i].ID)
			}
			if !slices.Equal(got, want) {
				t.Errorf("ListCompanies: got %v, want %v (newest first, only the account's)", got, want)
			}
		})
	})
}
