package portal_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/storetest"
)

// The portal tells the truth about an endpoint whose receiver is down
// (issue 13): deliveries being retried count as failing, a replay that
// arrived is shown on its original, a send by hand that failed is not
// announced in green, and an attempt without an answer says why.

var (
	delivered = webhooks.Transition{Status: webhooks.DeliveryDelivered}
	retryLate = webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: t0.Add(3 * time.Hour)}
	byHand    = webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonManualAttemptFailed}
)

// accountEvent registers an account event at t0 plus d and returns its
// delivery to the tenant's account endpoint.
func (b *bundle) accountEvent(t *testing.T, tn tenant, d time.Duration) *webhooks.Delivery {
	t.Helper()
	return storetest.MustRegisterOne(t, b.store, storetest.NewAccountEvent(t, "account.updated", tn.account.ID, t0.Add(d)), tn.accountEP.ID)
}

// recordError records an attempt of the delivery, due at now, that got no
// answer.
func (b *bundle) recordError(t *testing.T, id string, now time.Time, errText string, then webhooks.Transition) {
	t.Helper()
	r := storetest.NewRecord(storetest.MustClaimOne(t, b.store, id, now), now, 0, then)
	r.Attempt.Error = errText
	storetest.MustRecord(t, b.store, r)
}

// card returns the endpoints page's card of the endpoint.
func card(t *testing.T, page, endpointURL string) string {
	t.Helper()
	i := strings.Index(page, "<code>"+endpointURL+"</code>")
	if i < 0 {
		t.Fatalf("no card of %s on the endpoints page", endpointURL)
	}
	end := strings.Index(page[i:], "</li>")
	return page[i : i+end]
}

// An account endpoint whose receiver went down after two deliveries: four
// deliveries are being retried. It used to read "100 %", with the four
// among the pending.
func TestEndpoints_Retrying(t *testing.T) {
	b := setup(t)
	c := b.signIn(t, b.a.account.ID)
	a := b.a
	for i := range 2 {
		d := b.accountEvent(t, a, time.Duration(2+i)*time.Minute)
		storetest.MustAttempt(t, b.store, d.ID, t0.Add(time.Duration(2+i)*time.Minute), 200, delivered)
	}
	for i := range 4 {
		at := t0.Add(time.Duration(10+i) * time.Minute)
		storetest.MustAttempt(t, b.store, b.accountEvent(t, a, time.Duration(10+i)*time.Minute).ID, at, 503, retryLate)
	}

	got := card(t, c.get("/portal/", 200), a.accountEP.URL)
	for _, want := range []string{
		`<span class="rate-num">33.3%</span>`, "<strong>4 retrying</strong>",
		`failing since <time datetime="2026-09-23T10:10:00Z" title="23 Sep 2026, 10:10:00 UTC">50 min ago</time>`,
		"2 delivered", "4 retrying", "0 failed", "1 pending", // the tenant's own, never attempted
		`aria-label="Last 24 hours: 2 delivered to the endpoint, 4 being retried, 0 failed, 1 pending."`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("endpoint card: no %q", want)
		}
	}
	if t.Failed() {
		t.Logf("the card:\n%s", got)
	}
	page := c.get("/portal/endpoints/"+a.accountEP.ID, 200)
	for _, want := range []string{"<strong>Failing since <time datetime=\"2026-09-23T10:10:00Z\">23 Sep 2026, 10:10:00 UTC</time></strong> (50 min ago).",
		"4 deliveries of the last 24 hours are being retried on the schedule.", ">Retrying<"} {
		if !strings.Contains(page, want) {
			t.Errorf("endpoint page: no %q", want)
		}
	}
	// The company endpoint's last attempt failed (for good): it is failing
	// since then, with nothing being retried.
	if got := card(t, c.get("/portal/", 200), a.compEP.URL); !strings.Contains(got, "failing since") || strings.Contains(got, "retrying</strong>") {
		t.Errorf("the company endpoint's card: want failing since its last attempt, nothing retrying:\n%s", got)
	}

	// The receiver is back: a new delivery arrives; the four wait for
	// their next attempt, and the endpoint is not failing any more.
	d := b.accountEvent(t, a, 40*time.Minute)
	storetest.MustAttempt(t, b.store, d.ID, t0.Add(40*time.Minute), 200, delivered)
	got = card(t, c.get("/portal/", 200), a.accountEP.URL)
	if !strings.Contains(got, "<strong>4 retrying</strong>") || strings.Contains(got, "failing since") || !strings.Contains(got, `<span class="rate-num">42.9%</span>`) {
		t.Errorf("endpoint card after a delivery: want 42.9%%, 4 retrying, not failing:\n%s", got)
	}
	page = c.get("/portal/endpoints/"+a.accountEP.ID, 200)
	if strings.Contains(page, "Failing since") || !strings.Contains(page, "4 deliveries of the last 24 hours wait for a retry on the schedule; your endpoint has accepted a delivery since they failed.") {
		t.Error("endpoint page after a delivery: want the four waiting, and no failing since")
	}
}

// A failed original whose replay was delivered says so, links to the
// replay, and asks before replaying it again. It used to say only "Failed
// permanently", with a Replay button that sent it again at once.
func TestDelivery_Replayed(t *testing.T) {
	b := setup(t)
	c := b.signIn(t, b.a.account.ID)
	a := b.a
	originalPath := "/portal/endpoints/" + a.compEP.ID + "/deliveries/" + a.failed.ID
	replays := func() int {
		return len(storetest.MustListDeliveries(t, b.store, webhooks.DeliveryFilter{EndpointID: a.compEP.ID})) - 1
	}
	if r := c.post(originalPath+"/resend", nil); r.status != http.StatusSeeOther {
		t.Fatalf("replay: got %d, want 303", r.status)
	}
	replay := storetest.MustListDeliveries(t, b.store, webhooks.DeliveryFilter{EndpointID: a.compEP.ID})[0]
	// While the replay is being sent, a second one asks first too.
	if r := c.post(originalPath+"/resend", nil); r.status != http.StatusSeeOther || r.header.Get("Location") != originalPath+"/resend" || replays() != 1 {
		t.Errorf("replay while one is being sent: got %d to %q, %d replays; want the question, 1 replay", r.status, r.header.Get("Location"), replays())
	}
	storetest.MustAttempt(t, b.store, replay.ID, b.clock.Now(), 200, delivered)
	replayPath := "/portal/endpoints/" + a.compEP.ID + "/deliveries/" + replay.ID

	page := c.get(originalPath, 200)
	for _, want := range []string{"Failed permanently", `<a class="replayed" href="` + replayPath + `">Replayed: delivered to your endpoint</a>`,
		`<a class="btn" href="` + originalPath + `/resend">Replay again…</a>`} {
		if !strings.Contains(page, want) {
			t.Errorf("original's page: no %q", want)
		}
	}
	if strings.Contains(page, `action="`+originalPath+`/resend"`) {
		t.Error("original's page: a form replays it again without asking")
	}
	list := c.get("/portal/endpoints/"+a.compEP.ID, 200)
	if !strings.Contains(list, `<a href="`+replayPath+`">Replayed: delivered to your endpoint</a>`) {
		t.Error("deliveries page: the original's row does not link to its delivered replay")
	}

	// A replay without the answer asks, and sends nothing.
	r := c.post(originalPath+"/resend", nil)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != originalPath+"/resend" || replays() != 1 {
		t.Fatalf("unconfirmed replay: got %d to %q, %d replays; want the question, 1 replay", r.status, r.header.Get("Location"), replays())
	}
	question := c.get(originalPath+"/resend", 200)
	for _, want := range []string{"Replay this event again?", "A replay already delivered this event to your endpoint.", `href="` + replayPath + `"`,
		`<input type="hidden" name="confirm" value="yes">`, `action="` + originalPath + `/resend"`} {
		if !strings.Contains(question, want) {
			t.Errorf("question: no %q", want)
		}
	}
	r = c.post(originalPath+"/resend", url.Values{"confirm": {"yes"}})
	if r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "notice=replayed") || replays() != 2 {
		t.Errorf("confirmed replay: got %d to %q, %d replays; want a second replay", r.status, r.header.Get("Location"), replays())
	}
	// A delivery with nothing to confirm does not ask.
	if r := c.do("GET", "/portal/endpoints/"+a.accountEP.ID+"/deliveries/"+a.pending.ID+"/resend", nil); r.status != http.StatusSeeOther {
		t.Errorf("question about a delivery never replayed: got %d, want a redirect to it", r.status)
	}
}

// A replay or a retry whose attempt failed says so, in the error style.
// The page used to announce "Replay sent" in green above "Failed".
func TestResend_Failed(t *testing.T) {
	b := setup(t)
	c := b.signIn(t, b.a.account.ID)
	a := b.a
	now := b.clock.Now()

	r := c.post("/portal/endpoints/"+a.compEP.ID+"/deliveries/"+a.failed.ID+"/resend", nil)
	replay := storetest.MustListDeliveries(t, b.store, webhooks.DeliveryFilter{EndpointID: a.compEP.ID})[0]
	// Before the attempt: under way, and the page reloads itself.
	page := c.get(r.header.Get("Location"), 200)
	if !strings.Contains(page, `<div class="flash flash-info" role="status"><p>Replay sent:`) || !strings.Contains(page, `<meta http-equiv="refresh" content="2">`) {
		t.Error("replay page before its attempt: want the info notice and a reload")
	}
	storetest.MustAttempt(t, b.store, replay.ID, now, 503, byHand)
	page = c.get(r.header.Get("Location"), 200)
	if !strings.Contains(page, `<div class="flash flash-err" role="alert"><p>Replay attempted: the endpoint answered 503 Service Unavailable.</p></div>`) {
		t.Error("replay page after a 503: no error saying what happened")
	}
	if strings.Contains(page, "flash-ok") || strings.Contains(page, "Replay sent") || strings.Contains(page, "http-equiv=\"refresh\"") {
		t.Error("replay page after a 503: announced as sent, or still reloading")
	}

	// Retry on the account endpoint, with nothing listening.
	storetest.MustFailPermanently(t, b.store, a.pending.ID, now)
	r = c.post("/portal/endpoints/"+a.accountEP.ID+"/deliveries/"+a.pending.ID+"/resend", nil)
	if r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "notice=retried") {
		t.Fatalf("retry: got %d to %q", r.status, r.header.Get("Location"))
	}
	b.recordError(t, a.pending.ID, now, "connection failed: connect: connection refused", byHand)
	page = c.get(r.header.Get("Location"), 200)
	if !strings.Contains(page, `<p>Retry attempted: could not connect (connection refused).</p>`) || strings.Contains(page, "flash-ok") {
		t.Error("retry page after a refused connection: want the error, in the error style")
	}
}

// The list shows why an attempt got no answer where a status would be.
// It used to show a dash.
func TestDeliveries_ErrorKind(t *testing.T) {
	b := setup(t)
	c := b.signIn(t, b.a.account.ID)
	a := b.a
	refused := b.accountEvent(t, a, 2*time.Minute)
	b.recordError(t, refused.ID, t0.Add(2*time.Minute), "connection failed: connect: connection refused", retryLate)
	slow := b.accountEvent(t, a, 3*time.Minute)
	storetest.MustAttempt(t, b.store, slow.ID, t0.Add(3*time.Minute), 503, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: t0.Add(4 * time.Minute)})
	b.recordError(t, slow.ID, t0.Add(4*time.Minute), "timeout: no complete answer within the attempt timeout", retryLate)

	page := c.get("/portal/endpoints/"+a.accountEP.ID, 200)
	for _, want := range []string{
		`<span class="code code-bad code-words" title="connection failed: connect: connection refused">connection refused</span>`,
		`<span class="code code-bad code-words" title="timeout: no complete answer within the attempt timeout">timeout</span>`,
		`<span class="code code-none">—</span>`, // the tenant's delivery, never attempted
	} {
		if !strings.Contains(page, want) {
			t.Errorf("deliveries page: no %q", want)
		}
	}
	page = c.get("/portal/endpoints/"+a.accountEP.ID+"/deliveries/"+slow.ID, 200)
	for _, want := range []string{"No response: timeout", "503 Service Unavailable", `<span class="code code-bad code-words">timeout</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("delivery page: no %q", want)
		}
	}
}
