package portal_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/browsertest"
	"github.com/factuarea/webhooks/internal/portal"
	"github.com/factuarea/webhooks/internal/session"
	"github.com/factuarea/webhooks/internal/storetest"
)

// orderedDemo is a second account, in the demo's store: a wholesaler whose
// ERP takes each invoice's events in order (SPEC 18), on an endpoint that
// recovers by itself once disabled (SPEC 14). One invoice's first event is
// being retried, so its next two wait behind it; a nightly import's 36
// invoices have waited 14 minutes for the service, which alerted the
// platform. Its old ERP's endpoint was disabled for failing and is probed.
type orderedDemo struct {
	account         *webhooks.Account
	company         *webhooks.Company
	erp, oldERP     *webhooks.Endpoint
	head, waiting   *webhooks.Delivery // the retried invoice.created, and its invoice.paid two behind
	waitingFor      string             // the invoice.sent the invoice.paid waits for
	backlog         int
	backloggedSince time.Time
	probedAt        time.Time
}

func newOrderedDemo(t *testing.T, d *demo) *orderedDemo {
	t.Helper()
	ctx := t.Context()
	st := d.store
	o := &orderedDemo{backlog: 36}
	created := demoNow.Add(-40 * 24 * time.Hour)
	uc := app.New(app.Config{Store: st, Registrar: st, Now: func() time.Time { return created }})
	admin := app.Admin()
	var err error
	o.account, err = uc.CreateAccount(ctx, admin, "Mercados Levante", "")
	must(t, err)
	o.company, err = uc.CreateCompany(ctx, admin, o.account.ID, storetest.NewNIF(), "Mercados Levante SL")
	must(t, err)
	ep, err := uc.CreateEndpoint(ctx, admin, app.CompanyOwner(o.company.ID), app.EndpointInput{
		URL: "https://erp.mercadoslevante.es/webhooks/factuarea", EnabledEvents: []string{"invoice.*"},
		Description: "ERP: each invoice's events in order", Ordered: true, AutoRecover: true,
	})
	must(t, err)
	o.erp = ep.Endpoint
	ep, err = uc.CreateEndpoint(ctx, admin, app.CompanyOwner(o.company.ID), app.EndpointInput{
		URL: "https://old-erp.mercadoslevante.es/hooks", EnabledEvents: []string{"invoice.paid"},
		Description: "Old ERP", AutoRecover: true,
	})
	must(t, err)
	o.oldERP = ep.Endpoint
	// The service disabled the old ERP yesterday, after five days of
	// failures, and probed it 25 minutes ago.
	disabledAt := demoNow.Add(-30 * time.Hour)
	o.probedAt = demoNow.Add(-25 * time.Minute)
	must(t, st.InTx(ctx, func(tx app.Tx) error {
		e, err := tx.LockEndpoint(ctx, o.oldERP.ID)
		if err != nil {
			return err
		}
		e.Disable(webhooks.DisabledFailing, disabledAt)
		e.FailingSince, e.ProbedAt = disabledAt.Add(-webhooks.DefaultDisableAfter), o.probedAt
		return tx.UpdateEndpoint(ctx, e)
	}))

	register := func(typ, invoice string, at time.Time) *webhooks.Delivery {
		t.Helper()
		ev := &webhooks.Event{
			ID: webhooks.NewID(), Type: typ, APIVersion: webhooks.LatestAPIVersion, Created: at, Livemode: true,
			CompanyID: o.company.ID, OrderingKey: invoice,
			Object: json.RawMessage(fmt.Sprintf(`{"object":"invoice","id":%q,"number":"ML-2026-%s","currency":"EUR"}`, invoice, invoice[len(invoice)-4:])),
		}
		must(t, ev.Validate())
		_, ds, _, err := st.RegisterEvent(ctx, ev, nil)
		must(t, err)
		for _, dl := range ds {
			if dl.EndpointID == o.erp.ID {
				return dl
			}
		}
		t.Fatalf("%s of %s did not reach the ERP", typ, invoice)
		return nil
	}
	attempt := func(dl *webhooks.Delivery, at time.Time, status int, then webhooks.Transition) {
		t.Helper()
		claim := storetest.MustClaimOne(t, st, dl.ID, at)
		body := `{"received":true}`
		if status >= 500 {
			body = `{"error":"database is locked"}`
		}
		must(t, st.RecordAttempts(ctx, []*webhooks.AttemptRecord{{Token: claim.Token, EndpointID: o.erp.ID, Transition: then, Attempt: &webhooks.Attempt{
			DeliveryID: dl.ID, Number: claim.Delivery.AttemptCount + 1, StartedAt: at, Duration: 180 * time.Millisecond,
			ResponseStatus: status, ResponseBody: body,
		}}}))
	}
	delivered := webhooks.Transition{Status: webhooks.DeliveryDelivered}

	// The nightly import: 36 invoices, each its own key, waiting for the
	// service since 14 minutes ago.
	imported := demoNow.Add(-14 * time.Minute)
	for i := range o.backlog {
		register("invoice.created", fmt.Sprintf("inv_ML_%04d", 200+i), imported.Add(time.Duration(i)*100*time.Millisecond))
	}
	o.backloggedSince = imported.Add(webhooks.DefaultBacklogAlert + 10*time.Second)
	must(t, st.InTx(ctx, func(tx app.Tx) error {
		e, err := tx.LockEndpoint(ctx, o.erp.ID)
		if err != nil {
			return err
		}
		e.BackloggedSince = o.backloggedSince
		return tx.UpdateEndpoint(ctx, e)
	}))

	// Three invoices of the last ten minutes: the first delivered in
	// order; the second's creation answered 503 three times, so its sent
	// and paid wait; the third delivered.
	start := demoNow.Add(-10 * time.Minute)
	for i, typ := range []string{"invoice.created", "invoice.sent", "invoice.paid"} {
		dl := register(typ, "inv_ML_0101", start.Add(time.Duration(i)*20*time.Second))
		attempt(dl, start.Add(time.Duration(i)*20*time.Second+time.Second), 200, delivered)
	}
	o.head = register("invoice.created", "inv_ML_0102", start.Add(2*time.Minute))
	o.waitingFor = register("invoice.sent", "inv_ML_0102", start.Add(2*time.Minute+30*time.Second)).ID
	o.waiting = register("invoice.paid", "inv_ML_0102", start.Add(3*time.Minute))
	first := start.Add(2*time.Minute + time.Second)
	attempt(o.head, first, 503, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: first.Add(time.Minute)})
	attempt(o.head, first.Add(time.Minute), 503, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: first.Add(6 * time.Minute)})
	attempt(o.head, first.Add(6*time.Minute), 503, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: first.Add(36 * time.Minute)})
	for i, typ := range []string{"invoice.created", "invoice.sent"} {
		at := start.Add(4*time.Minute + time.Duration(i)*40*time.Second)
		attempt(register(typ, "inv_ML_0103", at), at.Add(time.Second), 200, delivered)
	}
	return o
}

// orderedPortal serves the portal over the demo's store, with the backlog
// read from the queue, as the service does.
func orderedPortal(t *testing.T, d *demo) (*httptest.Server, *session.Signer) {
	t.Helper()
	sessions := session.NewSigner("demo-admin-key")
	now := func() time.Time { return demoNow }
	uc := app.New(app.Config{Store: d.store, Registrar: d.store, Maintenance: d.store, Now: now})
	h, err := portal.New(portal.Config{App: uc, Sessions: sessions, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, sessions
}

// TestBrowser_Ordering opens the wholesaler's account in Chromium: the
// ERP's page says it is ordered and recovers by itself, shows the
// backlog, each delivery's key, and the deliveries that wait behind the
// retried one, linked to it; the old ERP's says when it is probed; and
// the edit form turns the order off.
func TestBrowser_Ordering(t *testing.T) {
	d := newDemo(t)
	o := newOrderedDemo(t, d)
	srv, sessions := orderedPortal(t, d)
	token, _ := sessions.Issue(o.account.ID, demoNow)
	ctx := browsertest.New(t, 1280, 900)
	do(t, ctx, chromedp.Navigate(srv.URL+"/portal/sessions/"+token))

	erp := "/portal/endpoints/" + o.erp.ID
	do(t, ctx, chromedp.Navigate(srv.URL+erp))
	meta := strings.ToLower(text(t, ctx, "dl.meta")) // the terms are in capitals
	for _, want := range []string{"order one at a time per ordering key, in the order the events were registered",
		"automatic recovery on. if the service disables it for failing, it sends it a ping every 1 h for 7 days"} {
		if !strings.Contains(meta, want) {
			t.Errorf("ERP's details: no %q in %q", want, meta)
		}
	}
	if got := text(t, ctx, ".backlog-callout"); !strings.Contains(got, "36 deliveries are due and waiting to be sent; the oldest has waited 14 min. Your endpoint is not failing") ||
		!strings.Contains(got, "The platform's operators were alerted 9 min ago.") {
		t.Errorf("ERP's backlog: %q", got)
	}
	rows := text(t, ctx, "table.list tbody")
	if n := strings.Count(rows, "key inv_ML_0102"); n != 3 {
		t.Errorf("ERP's deliveries: %d rows of inv_ML_0102, want 3", n)
	}
	if n := count(t, ctx, "a.waiting"); n != 2 {
		t.Errorf("ERP's deliveries: %d wait behind another, want 2", n)
	}
	// invoice.paid waits for invoice.sent, which waits for the retried
	// invoice.created.
	paid := erp + "/deliveries/" + o.waiting.ID
	do(t, ctx, chromedp.Navigate(srv.URL+paid))
	if got := text(t, ctx, ".page-head .lede"); !strings.Contains(got, "Waits for the delivery before it with the same ordering key: it is sent once that one ends.") {
		t.Errorf("invoice.paid's page: lede %q", got)
	}
	if got := strings.ToLower(text(t, ctx, "dl.meta")); !strings.Contains(got, "ordering key inv_ml_0102") || !strings.Contains(got, "waiting for "+o.waitingFor) {
		t.Errorf("invoice.paid's details: %q", got)
	}
	load(t, ctx, chromedp.Click(chromedp.CSS("a.next.waiting")))
	load(t, ctx, chromedp.Click(chromedp.CSS("a.next.waiting")))
	here, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(here); u.Path != erp+"/deliveries/"+o.head.ID {
		t.Errorf("following what it waits for: at %s, want the retried invoice.created", here)
	}
	if got := text(t, ctx, ".page-head .lede"); !strings.Contains(got, "Retrying") {
		t.Errorf("the head's page: lede %q, want it retrying", got)
	}

	// The old ERP: disabled for failing, probed every hour.
	do(t, ctx, chromedp.Navigate(srv.URL+"/portal/endpoints/"+o.oldERP.ID))
	if got := text(t, ctx, ".disabled-callout .recovery"); !strings.Contains(got, "The service sends it a ping every 1 h until 20 Oct 2026, 04:30:00 UTC") ||
		!strings.Contains(got, "Last ping 25 min ago. Next ping in 35 min.") {
		t.Errorf("old ERP's recovery: %q", got)
	}

	// Turning the order off in the form.
	do(t, ctx, chromedp.Navigate(srv.URL+erp+"/edit"))
	if got := text(t, ctx, "#auto-recover-help"); !strings.Contains(got, "Never after a 410 Gone or a disable by hand.") {
		t.Errorf("the form's help: %q", got)
	}
	do(t, ctx, chromedp.Click(chromedp.ID("ordered")))
	load(t, ctx, chromedp.Click(chromedp.CSS(`form.form button[type="submit"]`)))
	if got := strings.ToLower(text(t, ctx, "dl.meta")); !strings.Contains(got, "order none: every delivery goes at once") || !strings.Contains(got, "automatic recovery on") {
		t.Errorf("after unticking the order: %q", got)
	}
	if ep := storetest.MustFindEndpoint(t, d.store, o.erp.ID); ep.Ordered || !ep.AutoRecover {
		t.Errorf("stored: ordered %t, auto_recover %t; want false, true", ep.Ordered, ep.AutoRecover)
	}
}
