package app_test

import (
	"path/filepath"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/session"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

var t0 = time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)

// TestCallers: what each caller may do is decided here, once, for the API
// and the portal alike. Another account's objects are "not found" whatever
// the path, the platform's actions are the admin's alone, and only the
// admin key and live account keys authenticate.
func TestCallers(t *testing.T) {
	st := openStack(t)
	a := app.New(app.Config{Store: st, Registrar: st, AdminKey: "the-admin-key", Sessions: session.NewSigner("the-admin-key"),
		PublicURL: "https://hooks.example.com", Now: func() time.Time { return t0.Add(time.Hour) }})
	ctx := t.Context()

	mine, theirs := storetest.MustCreateAccount(t, st, ""), storetest.MustCreateAccount(t, st, "")
	myCompany, theirCompany := storetest.MustCreateCompany(t, st, mine.ID), storetest.MustCreateCompany(t, st, theirs.ID)
	myEP := storetest.MustCreateEndpoint(t, st, storetest.NewAccountEndpoint(mine.ID, nil, "*"))
	theirEP := storetest.MustCreateEndpoint(t, st, storetest.NewCompanyEndpoint(theirCompany.ID, "*"))
	theirEvent := storetest.NewEvent(t, "invoice.sent", theirCompany.ID, t0)
	theirDelivery := storetest.MustRegisterOne(t, st, theirEvent, theirEP.ID)
	_, key, err := a.CreateAPIKey(ctx, app.Admin(), mine.ID)
	if err != nil {
		t.Fatal(err)
	}
	me, err := a.Authenticate(ctx, key)
	if err != nil || me.AccountID != mine.ID || me.IsAdmin() {
		t.Fatalf("Authenticate with the account's key: got %+v, %v", me, err)
	}
	portal := app.PortalCaller(session.Session{AccountID: mine.ID, ID: webhooks.NewID()})

	for _, c := range []app.Caller{me, portal} {
		notFound := func(what string, err error) {
			t.Helper()
			if code := webhooks.ErrorCode(err); code != webhooks.ENOTFOUND {
				t.Errorf("%s as %s: got %v, want not_found", what, c.Actor.Type, err)
			}
		}
		_, err := a.Account(ctx, c, theirs.ID)
		notFound("their account", err)
		_, err = a.Company(ctx, c, theirCompany.ID)
		notFound("their company", err)
		_, err = a.Endpoint(ctx, c, app.EndpointRef{ID: theirEP.ID})
		notFound("their endpoint by id", err)
		// Under one of my owners, their endpoint's id names nothing.
		_, err = a.Endpoint(ctx, c, app.EndpointRef{Owner: app.CompanyOwner(myCompany.ID), ID: theirEP.ID})
		notFound("their endpoint under my company", err)
		_, err = a.Event(ctx, c, theirEvent.ID)
		notFound("their event", err)
		_, _, err = a.Delivery(ctx, c, app.EndpointRef{ID: myEP.ID}, theirDelivery.ID)
		notFound("their delivery under my endpoint", err)
		_, err = a.Resend(ctx, c, app.EndpointRef{ID: theirEP.ID}, theirDelivery.ID, "")
		notFound("a resend of their delivery", err)
		_, err = a.ListAudit(ctx, c, theirs.ID, webhooks.Page{Limit: 10})
		notFound("their audit log", err)

		forbidden := func(what string, err error) {
			t.Helper()
			if code := webhooks.ErrorCode(err); code != webhooks.EFORBIDDEN {
				t.Errorf("%s as %s: got %v, want forbidden", what, c.Actor.Type, err)
			}
		}
		_, err = a.CreateAccount(ctx, c, "Another", "")
		forbidden("CreateAccount", err)
		_, err = a.CreateCompany(ctx, c, mine.ID, storetest.NewNIF(), "Mine too")
		forbidden("CreateCompany", err)
		_, _, err = a.RegisterEvent(ctx, c, app.EventInput{Type: "invoice.sent", CompanyID: myCompany.ID, Object: []byte(`{}`)})
		forbidden("RegisterEvent", err)
		_, _, err = a.CreateAPIKey(ctx, c, mine.ID)
		forbidden("CreateAPIKey", err)
		_, err = a.CreatePortalSession(ctx, c, mine.ID)
		forbidden("CreatePortalSession", err)

		// Their own is theirs to see.
		if _, err := a.Endpoint(ctx, c, app.EndpointRef{ID: myEP.ID}); err != nil {
			t.Errorf("my endpoint as %s: %v", c.Actor.Type, err)
		}
	}

	// The admin sees every account's.
	if _, err := a.Endpoint(ctx, app.Admin(), app.EndpointRef{ID: theirEP.ID}); err != nil {
		t.Errorf("their endpoint as the admin: %v", err)
	}
	if c, err := a.Authenticate(ctx, "the-admin-key"); err != nil || !c.IsAdmin() {
		t.Errorf("Authenticate with the admin key: got %+v, %v", c, err)
	}
	for _, k := range []string{"", "the-admin-key ", key + "x", "fk_unknown"} {
		if _, err := a.Authenticate(ctx, k); webhooks.ErrorCode(err) != webhooks.EUNAUTHORIZED {
			t.Errorf("Authenticate(%q): got %v, want unauthorized", k, err)
		}
	}
	link, err := a.CreatePortalSession(ctx, app.Admin(), mine.ID)
	if err != nil || link.Expires != t0.Add(2*time.Hour) {
		t.Errorf("CreatePortalSession: got %+v, %v, want a link expiring an hour from now", link, err)
	}
}

// migratedSQLite is a SQLite file that Open migrated once for the
// package's tests; each fresh store opens a copy of it (the migrations take
// most of an Open under the race detector).
var migratedSQLite = storetest.NewFileTemplate(sqlite.Migrate)

// openStack opens a SQLite store in a temporary folder, under a queue
// core, as the service runs it.
func openStack(tb testing.TB) storetest.Store {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "app.db")
	migratedSQLite.Copy(tb, path)
	st, err := sqlite.Open(tb.Context(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return storetest.Stack(tb, st)
}
