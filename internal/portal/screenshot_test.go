package portal_test

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
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
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the portal's screenshots to docs/")

// The demo's clock: every page is rendered at this moment.
var demoNow = time.Date(2026, 10, 14, 10, 30, 0, 0, time.UTC)

// demo is a realistic account: an accounting firm with two client
// companies, three endpoints and a day of events; one company's receiver
// answers 503 since three and a half hours ago, and the firm's own has
// refused connections for the last 80 minutes.
type demo struct {
	store                   storetest.Store
	account                 *webhooks.Account
	panaderia, talleres     *webhooks.Company
	firm, bakery, workshop  *webhooks.Endpoint
	oldWorkshop             *webhooks.Endpoint
	rejected                *webhooks.Delivery // a failed delivery with two attempts
	refused                 *webhooks.Delivery // an original the bakery refused, then a replay delivered
	attempts, registrations int
}

// plannedAttempt is one attempt the demo records.
type plannedAttempt struct {
	at        time.Time
	delivery  string
	status    int
	body, err string
	took      time.Duration
	then      webhooks.Transition
}

func newDemo(t *testing.T) *demo {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo.db")
	migratedSQLite.Copy(t, path)
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := t.Context()
	stack := storetest.Stack(t, st)
	d := &demo{store: stack}
	created := demoNow.Add(-40 * 24 * time.Hour)
	uc := app.New(app.Config{Store: stack, Registrar: stack, Now: func() time.Time { return created }})
	admin := app.Admin()
	var err2 error
	d.account, err2 = uc.CreateAccount(ctx, admin, "Gestoría Ribera", "")
	must(t, err2)
	d.panaderia, err2 = uc.CreateCompany(ctx, admin, d.account.ID, "B12345674", "Panadería Sol SL")
	must(t, err2)
	d.talleres, err2 = uc.CreateCompany(ctx, admin, d.account.ID, "A58818501", "Talleres Norte SA")
	must(t, err2)
	endpoint := func(o app.Owner, url, description string, events ...string) *webhooks.Endpoint {
		e, err := uc.CreateEndpoint(ctx, admin, o, app.EndpointInput{URL: url, EnabledEvents: events, Description: description})
		must(t, err)
		return e.Endpoint
	}
	d.firm = endpoint(app.AccountOwner(d.account.ID), "https://hooks.gestoriaribera.es/factuarea", "Accounting sync for every client", "*")
	d.bakery = endpoint(app.CompanyOwner(d.panaderia.ID), "https://erp.panaderiasol.es/webhooks/factuarea", "ERP: invoices", "invoice.*")
	d.workshop = endpoint(app.CompanyOwner(d.talleres.ID), "https://api.talleresnorte.com/hooks/invoices", "Billing service", "invoice.sent", "invoice.paid")
	d.oldWorkshop = endpoint(app.CompanyOwner(d.talleres.ID), "https://old.talleresnorte.com/webhook", "Old billing service", "invoice.voided")
	disabled := webhooks.EndpointDisabled
	_, err2 = uc.UpdateEndpoint(ctx, admin, app.EndpointRef{ID: d.oldWorkshop.ID}, webhooks.EndpointUpdate{Status: &disabled})
	must(t, err2)
	// The service disabled it: its receiver answered 410 Gone.
	must(t, st.InTx(ctx, func(tx app.Tx) error {
		e, err := tx.LockEndpoint(ctx, d.oldWorkshop.ID)
		if err != nil {
			return err
		}
		e.DisabledReason, e.DisabledAt = webhooks.DisabledGone, demoNow.Add(-26*time.Hour)
		return tx.UpdateEndpoint(ctx, e)
	}))

	// A day of events, every 20 minutes, alternating the companies.
	rng := rand.New(rand.NewPCG(1, 2))
	types := []string{"invoice.created", "invoice.sent", "invoice.paid"}
	var plan []plannedAttempt
	ok := func(at time.Time, id string) plannedAttempt {
		return plannedAttempt{at: at, delivery: id, status: 200, body: `{"received":true}`,
			took: time.Duration(60+rng.IntN(240)) * time.Millisecond, then: webhooks.Transition{Status: webhooks.DeliveryDelivered}}
	}
	policy := webhooks.RetryPolicy{Waits: webhooks.DefaultRetryWaits}
	const unavailable = "<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
	outage := demoNow.Add(-3*time.Hour - 30*time.Minute)
	firmDown := demoNow.Add(-80 * time.Minute)
	// onSchedule plans the failed attempts of a delivery from at until
	// now, on the schedule.
	onSchedule := func(at time.Time, id string, fail func() plannedAttempt) {
		next, n := at, 0
		for !next.After(demoNow) {
			n++
			wait, _ := policy.Wait(n, 0.5)
			p := fail()
			p.at, p.delivery = next, id
			next = next.Add(wait)
			p.then = webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: next}
			plan = append(plan, p)
		}
	}
	for i := range 72 {
		at := demoNow.Add(-24*time.Hour + time.Duration(i)*20*time.Minute + 90*time.Second)
		company := d.panaderia
		if i%2 == 1 {
			company = d.talleres
		}
		typ := types[(i/2)%3]
		series := "PS"
		if company == d.talleres {
			series = "TN"
		}
		number := fmt.Sprintf("%s-2026-%04d", series, 880+i/6)
		total := fmt.Sprintf("%d.%02d", 120+rng.IntN(4000), rng.IntN(100))
		if i == 45 {
			total = "1342.10"
		}
		ev := &webhooks.Event{
			ID: webhooks.NewID(), Type: typ, APIVersion: webhooks.LatestAPIVersion, Created: at, Livemode: true,
			CompanyID:     company.ID,
			CorrelationID: fmt.Sprintf("op_%06d", 4100+i/6),
			Object: json.RawMessage(fmt.Sprintf(`{"object":"invoice","id":"inv_%s_%04d","number":"%s","customer":{"name":"%s"},"total":"%s","currency":"EUR"}`,
				series, 880+i/6, number, []string{"Hostal La Plaza", "Cafetería Central", "Frutas Ortiz SL", "Transportes Vega"}[(i/6)%4], total)),
		}
		must(t, ev.Validate())
		_, ds, _, err := stack.RegisterEvent(ctx, ev, nil)
		must(t, err)
		d.registrations++
		for _, dl := range ds {
			switch {
			case dl.EndpointID == d.workshop.ID && at.After(outage):
				// The outage: 503 on the schedule until now.
				onSchedule(at, dl.ID, func() plannedAttempt {
					return plannedAttempt{status: 503, body: unavailable, took: time.Duration(20+rng.IntN(30)) * time.Millisecond}
				})
			case dl.EndpointID == d.firm.ID && at.After(firmDown):
				// The firm's receiver is down: nothing listens.
				onSchedule(at, dl.ID, func() plannedAttempt {
					return plannedAttempt{err: "connection failed: connect: connection refused", took: time.Duration(1+rng.IntN(3)) * time.Millisecond}
				})
			case dl.EndpointID == d.workshop.ID && i == 45:
				// A 500, then a 422: the receiver refused the invoice.
				plan = append(plan,
					plannedAttempt{at: at, delivery: dl.ID, status: 500, body: `{"error":"internal","message":"deadlock detected, try again"}`,
						took: 1240 * time.Millisecond, then: webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: at.Add(time.Minute)}},
					plannedAttempt{at: at.Add(time.Minute), delivery: dl.ID, status: 422,
						body: `{"error":"invoice_total_mismatch","message":"Invoice TN-2026-0887: total 1342.10 EUR does not match the sum of its lines (1324.10 EUR)."}`,
						took: 184 * time.Millisecond, then: webhooks.Transition{Status: webhooks.DeliveryFailedPermanently, Reason: webhooks.ReasonNonRetryableStatus}})
				d.rejected = dl
			case dl.EndpointID == d.firm.ID && i == 30:
				plan = append(plan,
					plannedAttempt{at: at, delivery: dl.ID, err: "timeout: no complete answer within the attempt timeout",
						took: 10 * time.Second, then: webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: at.Add(time.Minute)}},
					ok(at.Add(time.Minute), dl.ID))
			case dl.EndpointID == d.bakery.ID && i == 20:
				plan = append(plan, plannedAttempt{at: at, delivery: dl.ID, status: 404, body: "404 page not found\n",
					took: 35 * time.Millisecond, then: webhooks.Transition{Status: webhooks.DeliveryFailedPermanently, Reason: webhooks.ReasonNonRetryableStatus}})
				d.refused = dl
			default:
				plan = append(plan, ok(at.Add(time.Duration(rng.IntN(900))*time.Millisecond), dl.ID))
			}
		}
	}
	// Record the attempts in time order, each on its own claim.
	slices.SortStableFunc(plan, func(a, b plannedAttempt) int { return a.at.Compare(b.at) })
	for _, p := range plan {
		token := webhooks.NewID()
		claims, err := stack.ClaimDeliveries(ctx, webhooks.ClaimRequest{Now: p.at, Limit: 1000, Token: token, LeaseUntil: p.at.Add(time.Minute)})
		must(t, err)
		var mine *webhooks.Claim
		var others []string
		for _, c := range claims {
			if c.Delivery.ID == p.delivery {
				mine = c
			} else {
				others = append(others, c.Delivery.ID)
			}
		}
		if mine == nil {
			t.Fatalf("delivery %s not due at %s", p.delivery, p.at)
		}
		if len(others) > 0 {
			must(t, stack.ReleaseClaims(ctx, token, others))
		}
		must(t, stack.RecordAttempts(ctx, []*webhooks.AttemptRecord{{Token: token, EndpointID: mine.Endpoint.ID, Transition: p.then, Attempt: &webhooks.Attempt{
			DeliveryID: p.delivery, Number: mine.Delivery.AttemptCount + 1, StartedAt: p.at, Duration: p.took,
			ResponseStatus: p.status, ResponseBody: p.body, Error: p.err,
		}}}))
		d.attempts++
	}
	// The bakery fixed its route and replayed the refused invoice an hour
	// later: the replay was delivered.
	replayAt := d.refused.Created.Add(time.Hour)
	replay, err := app.New(app.Config{Store: stack, Registrar: stack, Now: func() time.Time { return replayAt }}).Resend(ctx, admin, app.EndpointRef{ID: d.bakery.ID}, d.refused.ID, "")
	must(t, err)
	claim := storetest.MustClaimOne(t, stack, replay.ID, replayAt)
	must(t, stack.RecordAttempts(ctx, []*webhooks.AttemptRecord{{Token: claim.Token, Transition: webhooks.Transition{Status: webhooks.DeliveryDelivered},
		Attempt: &webhooks.Attempt{DeliveryID: replay.ID, Number: 1, StartedAt: replayAt, Duration: 142 * time.Millisecond,
			ResponseStatus: 200, ResponseBody: `{"received":true}`, Manual: true}}}))
	return d
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestScreenshots renders the main pages of a realistic account in
// Chromium, at desktop width and at 320 px, checks that nothing is wider
// than the screen, and with -update-screenshots writes them to docs/.
func TestScreenshots(t *testing.T) {
	d := newDemo(t)
	o := newOrderedDemo(t, d)
	srv, sessions := orderedPortal(t, d)
	token, _ := sessions.Issue(d.account.ID, demoNow)
	wholesaler, _ := sessions.Issue(o.account.ID, demoNow)

	ctx := browsertest.New(t, 1280, 900)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/portal/sessions/"+token)); err != nil {
		t.Fatal(err)
	}
	openAttempt := chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.attempt:first-child details').forEach(d => d.open = true)`)
	// A height of 0 takes the whole page; another takes that much of its
	// top.
	shots := []struct {
		file          string
		path          string
		width, height int64
		before        []chromedp.Action[chromedp.Void]
	}{
		{"portal-endpoints.png", "/portal/", 1280, 0, nil},
		{"portal-deliveries.png", "/portal/endpoints/" + d.workshop.ID, 1280, 1180, nil},
		{"portal-delivery.png", "/portal/endpoints/" + d.workshop.ID + "/deliveries/" + d.rejected.ID, 1280, 0, []chromedp.Action[chromedp.Void]{openAttempt}},
		{"portal-retrying.png", "/portal/endpoints/" + d.firm.ID, 1280, 900, nil},
		{"portal-replayed.png", "/portal/endpoints/" + d.bakery.ID + "/deliveries/" + d.refused.ID, 1280, 900, nil},
		{"portal-disabled.png", "/portal/endpoints/" + d.oldWorkshop.ID, 1280, 700, nil},
		{"portal-events.png", "/portal/events", 1280, 1100, nil},
		{"portal-rotated.png", "/portal/endpoints/" + d.bakery.ID, 1280, 760, []chromedp.Action[chromedp.Void]{
			chromedp.SetValue(chromedp.ID("expires_in"), "259200"),
			chromedp.Click(chromedp.CSS(`form[action$="/rotate"] button`)),
			chromedp.WaitVisible(chromedp.ID("secret")),
		}},
		{"portal-new-endpoint.png", "/portal/endpoints/new", 1280, 0, nil},
		{"portal-endpoints-320.png", "/portal/", 320, 1100, nil},
		{"portal-deliveries-320.png", "/portal/endpoints/" + d.workshop.ID, 320, 1400, nil},
		// The wholesaler's account: an ordered endpoint with a backlog, a
		// delivery waiting behind another of its invoice, and an endpoint
		// that recovers by itself.
		{"portal-ordered.png", "/portal/sessions/" + wholesaler, 1280, 1250, []chromedp.Action[chromedp.Void]{
			chromedp.Navigate(srv.URL + "/portal/endpoints/" + o.erp.ID),
		}},
		{"portal-waiting.png", "/portal/endpoints/" + o.erp.ID + "/deliveries/" + o.waiting.ID, 1280, 760, nil},
		{"portal-auto-recover.png", "/portal/endpoints/" + o.oldERP.ID, 1280, 760, nil},
	}
	for _, s := range shots {
		scale := 1.0
		if s.width < 600 {
			scale = 2 // a phone's pixel density
		}
		steps := append([]chromedp.Action[chromedp.Void]{
			chromedp.EmulateViewport(s.width, cmp.Or(s.height, 900), chromedp.EmulateScale(scale)),
			chromedp.Navigate(srv.URL + s.path),
		}, s.before...)
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", s.path, err)
		}
		overflow, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if overflow > 0 {
			t.Errorf("%s at %d px: the page is %d px wider than the screen", s.path, s.width, overflow)
		}
		if !*updateScreenshots {
			continue
		}
		shot := chromedp.FullScreenshot(100)
		if s.height > 0 {
			shot = chromedp.CaptureScreenshot() // PNG, the viewport only
		}
		png, err := chromedp.Run(ctx, shot)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("..", "..", "docs", s.file)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", out)
	}
	// Every narrow page, including the forms, fits 320 px.
	for _, tc := range []struct {
		session string
		paths   []string
	}{
		{token, []string{"/portal/endpoints/" + d.workshop.ID, "/portal/events", "/portal/endpoints/new",
			"/portal/endpoints/" + d.firm.ID + "/edit", "/portal/endpoints/" + d.bakery.ID + "/delete"}},
		{wholesaler, []string{"/portal/endpoints/" + o.erp.ID, "/portal/endpoints/" + o.erp.ID + "/deliveries/" + o.waiting.ID,
			"/portal/endpoints/" + o.oldERP.ID}},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/portal/sessions/"+tc.session)); err != nil {
			t.Fatal(err)
		}
		for _, path := range tc.paths {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(320, 640, chromedp.EmulateScale(2)), chromedp.Navigate(srv.URL+path)); err != nil {
				t.Fatal(err)
			}
			title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.title`))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(title, "Not found") {
				t.Fatalf("%s: not found under this session", path)
			}
			overflow, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
			if err != nil {
				t.Fatal(err)
			}
			if overflow > 0 {
				wide, _ := chromedp.Run(ctx, chromedp.Evaluate[string](widest))
				t.Errorf("%s at 320 px: the page is %d px wider than the screen (%s)", path, overflow, wide)
			}
		}
	}
}

// widest names the innermost elements that reach past the screen's right
// edge, to say what makes a page too wide.
const widest = `[...document.querySelectorAll('body *')]
	.filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && ![...e.children].some(c => c.getBoundingClientRect().right > window.innerWidth + 1))
	.slice(0, 5).map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' "' + e.textContent.trim().slice(0, 40) + '"').join(', ')`
