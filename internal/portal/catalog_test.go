package portal_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/browsertest"
	"github.com/factuarea/webhooks/internal/portal"
	"github.com/factuarea/webhooks/internal/session"
)

// demoCatalog is the platform's catalog in the demo: an invoicing
// platform's types, with what each means and an example object.
var demoCatalog = []app.EventTypeInput{
	{Name: "invoice.created", Description: "An invoice was issued, as a draft or final.",
		Example: json.RawMessage(`{"object":"invoice","id":"inv_PS_0880","number":"PS-2026-0880","status":"draft","total":"1210.00","currency":"EUR"}`),
		Schema:  json.RawMessage(`{"type":"object","required":["object","id","number","total","currency"],"properties":{"object":{"const":"invoice"},"total":{"type":"string","pattern":"^[0-9]+\\.[0-9]{2}$"}}}`)},
	{Name: "invoice.sent", Description: "An invoice was sent to its customer, by email or e-invoicing.",
		Example: json.RawMessage(`{"object":"invoice","id":"inv_PS_0880","number":"PS-2026-0880","status":"sent","total":"1210.00","currency":"EUR","sent_to":"compras@hostallaplaza.es"}`)},
	{Name: "invoice.paid", Description: "An invoice was paid in full.",
		Example: json.RawMessage(`{"object":"invoice","id":"inv_PS_0880","number":"PS-2026-0880","status":"paid","total":"1210.00","currency":"EUR","paid_at":1792051200}`)},
	{Name: "invoice.voided", Description: "An invoice was voided by a corrective invoice."},
	{Name: "quote.accepted", Description: "A customer accepted a quote; an invoice usually follows.",
		Example: json.RawMessage(`{"object":"quote","id":"quo_TN_0112","number":"TN-Q-2026-0112","total":"4480.00","currency":"EUR"}`)},
	{Name: "account.updated", Description: "The account's name, plan or billing details changed."},
}

// TestEndpointForm_Catalog: once the platform declares its event types,
// the endpoint form offers them as boxes to tick, each with its
// description and its example on demand, beside a free-text field for
// prefixes; the endpoint gets what was ticked and typed, the edit form
// shows it back, and a pattern that matches nothing is refused with the
// nearest name. With -update-screenshots it writes
// docs/portal-new-endpoint-catalog.png.
func TestEndpointForm_Catalog(t *testing.T) {
	d := newDemo(t)
	ctx := t.Context()
	now := func() time.Time { return demoNow }
	uc := app.New(app.Config{Store: d.store, Now: now})
	for _, in := range demoCatalog {
		if _, err := uc.CreateEventType(ctx, app.Admin(), in); err != nil {
			t.Fatal(err)
		}
	}
	sessions := session.NewSigner("demo-admin-key")
	h, err := portal.New(portal.Config{App: app.New(app.Config{Store: d.store, Now: now}), Sessions: sessions, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	token, _ := sessions.Issue(d.account.ID, demoNow)

	b := browsertest.New(t, 1280, 900)
	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(b, steps...); err != nil {
			t.Fatalf("browser: %v", err)
		}
	}
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(b, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("browser: %s: %v", js, err)
		}
		return v
	}
	do(chromedp.Navigate(srv.URL+"/portal/sessions/"+token), chromedp.Navigate(srv.URL+"/portal/endpoints/new?owner=company:"+d.panaderia.ID))

	// Every declared type is a box, by name, with its description.
	boxes := eval(`[...document.querySelectorAll('input[name=event_type]')].map(i => i.value + (i.checked ? '+' : '')).join(' ')`)
	if boxes != "account.updated invoice.created invoice.paid invoice.sent invoice.voided quote.accepted" {
		t.Errorf("the boxes: got %q, want every type by name, none ticked", boxes)
	}
	if got := eval(`document.querySelector('input[value="account.updated"] ~ label').textContent`); got != "account.updated (account endpoints only)" {
		t.Errorf("an account type on a form whose owner is not chosen: got %q", got)
	}
	desc := eval(`document.getElementById(document.querySelector('input[value="invoice.sent"]').getAttribute('aria-describedby')).textContent`)
	if desc != "An invoice was sent to its customer, by email or e-invoicing." {
		t.Errorf("invoice.sent's description: got %q", desc)
	}
	// The example is there on demand: hidden until its summary is opened.
	example := `document.querySelector('input[value="invoice.sent"]').closest('li').querySelector('details')`
	if got := eval(example + `.querySelector('pre').checkVisibility() ? 'shown' : 'hidden'`); got != "hidden" {
		t.Errorf("the example before it is asked for: %s", got)
	}
	do(chromedp.Click(chromedp.CSS(`input[value="invoice.sent"] ~ label`)))
	do(chromedp.Evaluate[chromedp.Void](example + `.querySelector('summary').click()`))
	if got := eval(example + `.querySelector('pre').checkVisibility() ? 'shown' : 'hidden'`); got != "shown" {
		t.Errorf("the example once asked for: %s", got)
	}
	if got := eval(example + `.querySelector('pre').textContent`); !strings.Contains(got, `"sent_to": "compras@hostallaplaza.es"`) {
		t.Errorf("the example: got %q, want the declared object, indented", got)
	}
	if got := eval(`document.querySelector('input[value="invoice.voided"]').closest('li').querySelector('details') ? 'yes' : 'no'`); got != "no" {
		t.Errorf("a type without an example offers one: %s", got)
	}

	if *updateScreenshots {
		do(chromedp.Click(chromedp.CSS(`input[value="invoice.paid"]`)), chromedp.SetValue(chromedp.ID("url"), "https://erp.panaderiasol.es/webhooks/factuarea"),
			chromedp.SetValue(chromedp.ID("description"), "ERP: invoices"))
		png, err := chromedp.Run(b, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("..", "..", "docs", "portal-new-endpoint-catalog.png")
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", out)
		do(chromedp.Click(chromedp.CSS(`input[value="invoice.paid"]`)))
	}

	// A prefix typed that matches nothing: refused with the nearest, and
	// the form keeps what was ticked.
	do(chromedp.SetValue(chromedp.ID("url"), "https://erp.panaderiasol.es/webhooks/quotes"),
		chromedp.SetValue(chromedp.ID("events"), "quot.*"),
		chromedp.Click(chromedp.CSS(`form.form button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("form-error")))
	if got := eval(`document.getElementById('form-error').textContent`); !strings.Contains(got, `did you mean "quote.*"?`) {
		t.Errorf("the form's error: got %q, want the nearest prefix", got)
	}
	if got := eval(`[...document.querySelectorAll('input[name=event_type]:checked')].map(i => i.value).join(' ')`); got != "invoice.sent" {
		t.Errorf("ticked after the refusal: got %q, want invoice.sent", got)
	}

	do(chromedp.Click(chromedp.CSS(`input[value="quote.accepted"]`)), chromedp.SetValue(chromedp.ID("events"), "invoice.*"),
		chromedp.Click(chromedp.CSS(`form.form button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("secret")))
	l, err := uc.ListEndpoints(ctx, app.Admin(), app.CompanyOwner(d.panaderia.ID), webhooks.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var created *webhooks.Endpoint
	for _, ep := range l.Data {
		if ep.URL == "https://erp.panaderiasol.es/webhooks/quotes" {
			created = ep
		}
	}
	if created == nil || !slices.Equal(created.EnabledEvents, []string{"invoice.sent", "quote.accepted", "invoice.*"}) {
		t.Fatalf("the endpoint created: got %+v, want invoice.sent, quote.accepted and invoice.*", created)
	}

	// The edit form ticks its types and leaves the prefix as text; a
	// company endpoint's offers no account.* type, which it cannot
	// receive.
	do(chromedp.Navigate(srv.URL + "/portal/endpoints/" + created.ID + "/edit"))
	if got := eval(`[...document.querySelectorAll('input[name=event_type]')].map(i => i.value).join(' ')`); got != "invoice.created invoice.paid invoice.sent invoice.voided quote.accepted" {
		t.Errorf("the boxes of a company endpoint's edit form: got %q", got)
	}
	if got := eval(`[...document.querySelectorAll('input[name=event_type]:checked')].map(i => i.value).join(' ')`); got != "invoice.sent quote.accepted" {
		t.Errorf("ticked in the edit form: got %q", got)
	}
	if got := eval(`document.getElementById('events').value`); got != "invoice.*" {
		t.Errorf("the other patterns in the edit form: got %q, want invoice.*", got)
	}
	do(chromedp.Click(chromedp.CSS(`input[value="quote.accepted"]`)), chromedp.Click(chromedp.CSS(`form.form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	if ep, err := d.store.FindEndpoint(ctx, created.ID); err != nil {
		t.Errorf("after unticking quote.accepted: %v", err)
	} else if !slices.Equal(ep.EnabledEvents, []string{"invoice.sent", "invoice.*"}) {
		t.Errorf("after unticking quote.accepted: got %v", ep.EnabledEvents)
	}

	// At 320 px the form fits the screen, examples open.
	do(chromedp.EmulateViewport(320, 640, chromedp.EmulateScale(2)), chromedp.Navigate(srv.URL+"/portal/endpoints/new"),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.type-example').forEach(d => d.open = true)`))
	if overflow := eval(`String(document.documentElement.scrollWidth - window.innerWidth)`); overflow != "0" {
		t.Errorf("the form at 320 px is %s px wider than the screen", overflow)
	}
}
