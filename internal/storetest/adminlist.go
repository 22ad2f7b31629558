package storetest

import (
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// testAdminLists: the admin's lists of SPEC 13 (every account, an
// account's API keys, and, with the companies, an account's companies),
// through the use cases: newest first, page by page, only the account's,
// the admin's alone.
func testAdminLists(t *testing.T, open func(t *testing.T) Store) {
	group(t, "ListAccounts", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			var want []string
			for i := range 5 {
				a, err := UseCases(s, at(time.Duration(i)*time.Second)).CreateAccount(t.Context(), admin, "Account", "")
				if err != nil {
					t.Fatal(err)
				}
				want = append([]string{a.ID}, want...)
			}
			uc := UseCases(s, at(time.Minute))
			checkList(t, func(p webhooks.Page) (*webhooks.List[*webhooks.Account], error) {
				return uc.ListAccounts(t.Context(), admin, p)
			}, func(a *webhooks.Account) string { return a.ID }, want)
		})
	})

	group(t, "ListAPIKeys", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			a, b := MustCreateAccount(t, s, ""), MustCreateAccount(t, s, "")
			var want []string
			var revoked string
			for i := range 4 {
				k, _, err := UseCases(s, at(time.Duration(i)*time.Second)).CreateAPIKey(t.Context(), admin, a.ID)
				if err != nil {
					t.Fatal(err)
				}
				if i == 1 {
					revoked = k.ID
					continue
				}
				want = append([]string{k.ID}, want...)
			}
			if err := UseCases(s, at(time.Minute)).RevokeAPIKey(t.Context(), admin, a.ID, revoked); err != nil {
				t.Fatal(err)
			}
			otherKey, _, err := UseCases(s, t0).CreateAPIKey(t.Context(), admin, b.ID)
			if err != nil {
				t.Fatal(err)
			}
			uc := UseCases(s, at(time.Hour))
			// A revoked key is no longer listed; another account's never is.
			checkList(t, func(p webhooks.Page) (*webhooks.List[*webhooks.APIKey], error) {
				return uc.ListAPIKeys(t.Context(), admin, a.ID, p)
			}, func(k *webhooks.APIKey) string { return k.ID }, want)
			l, err := uc.ListAPIKeys(t.Context(), admin, a.ID, webhooks.Page{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if k := l.Data[0]; k.AccountID != a.ID || len(k.Hash) == 0 {
				t.Errorf("listed key: got %+v, want account %s and its hash", k, a.ID)
			}
			checkTime(t, "created", l.Data[0].Created, at(3*time.Second))
			_, err = uc.ListAPIKeys(t.Context(), admin, a.ID, webhooks.Page{Limit: 10, StartingAfter: otherKey.ID})
			checkCode(t, "ListAPIKeys after another account's key", err, webhooks.EINVALID)
		})
	})

	group(t, "AdminLists", func(t *testing.T) {
		t.Run("ErrForbidden", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			uc := UseCases(s, t0)
			_, key, err := uc.CreateAPIKey(t.Context(), admin, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			own, err := uc.Authenticate(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			p := webhooks.Page{Limit: 10}
			for _, c := range []app.Caller{own, app.Caller{Actor: webhooks.Actor{Type: webhooks.ActorPortal, ID: webhooks.NewID()}, AccountID: a.ID}} {
				_, err := uc.ListAccounts(t.Context(), c, p)
				checkCode(t, "ListAccounts by "+c.Actor.Type, err, webhooks.EFORBIDDEN)
				_, err = uc.ListCompanies(t.Context(), c, a.ID, p)
				checkCode(t, "ListCompanies of its own account by "+c.Actor.Type, err, webhooks.EFORBIDDEN)
				_, err = uc.ListAPIKeys(t.Context(), c, a.ID, p)
				checkCode(t, "ListAPIKeys of its own account by "+c.Actor.Type, err, webhooks.EFORBIDDEN)
			}
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			uc := UseCases(s, t0)
			p := webhooks.Page{Limit: 10}
			for _, id := range []string{webhooks.NewID(), "not-an-id"} {
				_, err := uc.ListCompanies(t.Context(), admin, id, p)
				checkCode(t, "ListCompanies of "+id, err, webhooks.ENOTFOUND)
				_, err = uc.ListAPIKeys(t.Context(), admin, id, p)
				checkCode(t, "ListAPIKeys of "+id, err, webhooks.ENOTFOUND)
			}
		})

		t.Run("ErrInvalid", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			uc := UseCases(s, t0)
			for _, p := range []webhooks.Page{{Limit: 0}, {Limit: 101}, {Limit: 10, StartingAfter: "x"}} {
				_, err := uc.ListAccounts(t.Context(), admin, p)
				checkCode(t, "ListAccounts", err, webhooks.EINVALID)
				_, err = uc.ListCompanies(t.Context(), admin, a.ID, p)
				checkCode(t, "ListCompanies", err, webhooks.EINVALID)
				_, err = uc.ListAPIKeys(t.Context(), admin, a.ID, p)
				checkCode(t, "ListAPIKeys", err, webhooks.EINVALID)
			}
		})
	})
}
