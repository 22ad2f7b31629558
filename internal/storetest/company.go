package storetest

import (
	"slices"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func testCompanies(t *testing.T, open func(t *testing.T) Store) {
	group(t, "CreateCompany", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			nif := NewNIF()
			c, err := UseCases(s, at(time.Second)).CreateCompany(t.Context(), admin, a.ID, nif, "Fusteria Vila SL")
			if err != nil {
				t.Fatalf("CreateCompany: %v", err)
			}
			got, err := s.FindCompany(t.Context(), c.ID)
			if err != nil {
				t.Fatalf("FindCompany: %v", err)
			}
			if got.ID != c.ID || got.AccountID != a.ID || got.NIF != nif || got.Name != "Fusteria Vila SL" {
				t.Errorf("FindCompany: got %+v, want %+v", got, c)
			}
			checkTime(t, "created", got.Created, at(time.Second))
		})

		t.Run("ErrNIFTaken", func(t *testing.T) {
			s := setup(t, open)
			a, b := MustCreateAccount(t, s, ""), MustCreateAccount(t, s, "")
			first := MustCreateCompany(t, s, a.ID)
			// A NIF is unique on the platform, not per account.
			for _, accountID := range []string{a.ID, b.ID} {
				c, err := UseCases(s, t0).CreateCompany(t.Context(), admin, accountID, first.NIF, "Again")
				checkCode(t, "CreateCompany with a taken NIF", err, webhooks.ENIFTAKEN)
				if c != nil {
					t.Errorf("CreateCompany with a taken NIF: got company %s, want none", c.ID)
				}
			}
		})

		t.Run("ErrUnknownAccount", func(t *testing.T) {
			s := setup(t, open)
			_, err := UseCases(s, t0).CreateCompany(t.Context(), admin, webhooks.NewID(), NewNIF(), "Orphan")
			checkCode(t, "CreateCompany", err, webhooks.EUNKNOWNACCOUNT)
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
				c, err := UseCases(s, at(time.Duration(i)*time.Second)).CreateCompany(t.Context(), admin, a.ID, NewNIF(), "Company")
				if err != nil {
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

		t.Run("UseCase", func(t *testing.T) {
			s := setup(t, open)
			a, b := MustCreateAccount(t, s, ""), MustCreateAccount(t, s, "")
			var want []string
			for i := range 3 {
				c, err := UseCases(s, at(time.Duration(i)*time.Second)).CreateCompany(t.Context(), admin, a.ID, NewNIF(), "Company")
				if err != nil {
					t.Fatal(err)
				}
				want = append([]string{c.ID}, want...)
			}
			other := MustCreateCompany(t, s, b.ID)
			uc := UseCases(s, at(time.Minute))
			checkList(t, func(p webhooks.Page) (*webhooks.List[*webhooks.Company], error) {
				return uc.ListCompanies(t.Context(), admin, a.ID, p)
			}, func(c *webhooks.Company) string { return c.ID }, want)
			// Another account's company is no cursor of this list.
			_, err := uc.ListCompanies(t.Context(), admin, a.ID, webhooks.Page{Limit: 10, StartingAfter: other.ID})
			checkCode(t, "ListCompanies after another account's company", err, webhooks.EINVALID)
		})
	})
}
