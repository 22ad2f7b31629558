package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/signature"
)

// tenants numbers the fixtures, so that every NIF is new.
var tenants atomic.Int64

// TestReceivers runs every kit's example receiver, on every database it
// supports, against the real `webhooks serve` (see the package comment).
// The receivers run at the same time, each on its own database and behind
// endpoints of its own: they share nothing but the service.
func TestReceivers(t *testing.T) {
	t.Parallel()
	s := startService(t)
	var wg sync.WaitGroup
	for _, k := range kits {
		// t.Run from goroutines, not t.Parallel: the receivers wait on the
		// network, so they all run at once whatever -parallel is.
		wg.Go(func() {
			t.Run(k.name, func(t *testing.T) {
				if !k.present(t) {
					t.Fatalf("%s is missing: the %s kit must be in the tree", k.dir, k.name)
				}
				k.mustRun(t)
				var dbs sync.WaitGroup
				for _, kind := range k.databases {
					dbs.Go(func() {
						t.Run(kind, func(t *testing.T) { runContract(t, s, k, kind) })
					})
				}
				dbs.Wait()
			})
		})
	}
	wg.Wait()
}

// bundle is one kit's example receiver on one database, with its tenant and
// endpoints, and what its tables must hold.
type bundle struct {
	s       *service
	k       kit
	db      database
	ten     tenant
	company *endpoint // the company's endpoint, on 2026-09-23
	account *endpoint // the provider account's endpoint, on 2025-06-01
	rcv     *receiverProcess
	// want holds, for each event that must have had its effect, the rows
	// it may have left (one of them, once).
	want map[string][]effect
	// none holds the events that must have left no row.
	none []string
}

func runContract(t *testing.T, s *service, k kit, kind string) {
	b := &bundle{s: s, k: k, db: newDatabase(t, kind), want: map[string][]effect{}}
	b.ten = s.newTenant(t, int(tenants.Add(1)))
	// The URL is set when the receiver starts (restart), on a port of its own.
	b.company = s.createEndpoint(t, "/v1/companies/"+b.ten.company, object{
		"url": "http://127.0.0.1:9/webhooks", "enabled_events": []string{"invoice.*"}, "api_version": "2026-09-23",
	})
	b.account = s.createEndpoint(t, "/v1/accounts/"+b.ten.parent, object{
		"url": "http://127.0.0.1:9/webhooks", "enabled_events": []string{"customer.*", "account.*", "invoice.paid"}, "api_version": "2025-06-01",
	})
	t.Cleanup(func() {
		if b.rcv != nil {
			b.rcv.stop(t)
		}
	})
	for _, step := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"envelopes", b.envelopes},
		{"failing_handler", b.failingHandler},
		{"rotation", b.rotation},
		{"probe", b.probe},
		{"standard_webhooks", b.standardWebhooks},
	} {
		if !t.Run(step.name, step.run) {
			return
		}
	}
}

// restart stops the receiver and starts it again with scheme and secrets,
// on a new port that both endpoints are moved to: a port is never reused,
// so no kit's server needs SO_REUSEADDR.
func (b *bundle) restart(t *testing.T, scheme string, secrets ...string) {
	t.Helper()
	if b.rcv != nil {
		b.rcv.stop(t)
		b.rcv = nil
	}
	port := freePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/webhooks"
	for _, ep := range []*endpoint{b.company, b.account} {
		b.s.call(t, "PATCH", ep.path, object{"url": url}, 200, nil)
	}
	env := append([]string{
		"DATABASE_URL=" + b.db.url,
		"WEBHOOK_SECRETS=" + strings.Join(secrets, ","),
		"WEBHOOK_SCHEME=" + scheme,
	}, b.k.env...)
	var ready func(string) bool
	if b.k.ready != nil {
		ready = b.k.ready(port).MatchString
	}
	b.rcv = startReceiver(t, b.k.name+" on "+b.db.kind, b.k.command(port), env, port, ready)
}

// secrets are both endpoints' live secrets, the company's first.
func (b *bundle) secrets() []string {
	return slices.Concat(b.company.secrets, b.account.secrets)
}

func (b *bundle) expect(eventID string, rows ...effect) {
	for i := range rows {
		rows[i].EventID = eventID
	}
	b.want[eventID] = rows
}

// envelopes: each envelope and payload version reaches the customer's
// handler as it was sent, once.
func (b *bundle) envelopes(t *testing.T) {
	b.restart(t, "any", b.secrets()...)
	c := b.ten.company
	invoice := b.s.event(t, object{"type": "invoice.sent", "company_id": c,
		"data": object{"object": object{"object": "invoice", "id": "inv_1", "total": "1210.00"}}})
	customer := b.s.event(t, object{"type": "customer.created", "company_id": c,
		"data": object{"object": object{"object": "customer", "id": "cus_1"}}})
	own := b.s.event(t, object{"type": "account.updated", "account_id": b.ten.parent,
		"data": object{"object": object{"object": "account", "id": b.ten.parent}}})
	managed := b.s.event(t, object{"type": "account.updated", "account_id": b.ten.managed,
		"data": object{"object": object{"object": "account", "id": b.ten.managed}}})
	// invoice.paid reaches both endpoints, so the one receiver behind them
	// gets two copies of one event id: the second is a repeat.
	both := b.s.event(t, object{"type": "invoice.paid", "company_id": c,
		"data": object{"object": object{"object": "invoice", "id": "inv_2", "total": "10.00"}}})
	b.s.delivered(t, b.company, invoice, both)
	b.s.delivered(t, b.account, customer, own, managed, both)

	b.expect(invoice, effect{Type: "invoice.sent", APIVersion: "2026-09-23", ObjectID: "inv_1"})
	b.expect(customer, effect{Type: "customer.created", APIVersion: "2025-06-01", Relationship: "managed", ObjectID: "cus_1"})
	b.expect(own, effect{Type: "account.updated", APIVersion: "2025-06-01", Relationship: "own", ObjectID: b.ten.parent})
	b.expect(managed, effect{Type: "account.updated", APIVersion: "2025-06-01", Relationship: "managed", ObjectID: b.ten.managed})
	b.expect(both,
		effect{Type: "invoice.paid", APIVersion: "2026-09-23", ObjectID: "inv_2"},
		effect{Type: "invoice.paid", APIVersion: "2025-06-01", Relationship: "managed", ObjectID: "inv_2"})
	answers := []string{
		b.s.attempted(t, b.company, both).Attempts[0].ResponseBody,
		b.s.attempted(t, b.account, both).Attempts[0].ResponseBody,
	}
	if repeats := countContaining(answers, "already processed"); repeats != 1 {
		t.Errorf("the two copies of %s were answered %q, want one of them a repeat (already processed)", both, answers)
	}

	// Under WEBHOOK_SCHEME=any, a request with only the Standard Webhooks
	// headers verifies too.
	direct := b.send(t, "standard", http.StatusOK)
	b.expect(direct, effect{Type: "invoice.sent", APIVersion: "2026-09-23", ObjectID: "inv_direct"})
	b.check(t)
}

// failingHandler: an event whose handler fails leaves neither its effect
// nor its id, the receiver answers 500, and the service records the failed
// attempt (and will retry).
func (b *bundle) failingHandler(t *testing.T) {
	id := b.s.event(t, object{"type": "invoice.sent", "company_id": b.ten.company,
		"data": object{"object": object{"object": "invoice", "id": "inv_fail", "total": "1.00", "fail": true}}})
	d := b.s.attempted(t, b.company, id)
	if d.Status != "pending" || d.LastResponseStatus == nil || *d.LastResponseStatus != 500 {
		t.Errorf("event %s with data.object.fail: got %s, want pending for a retry after a 500", id, d)
	}
	b.none = append(b.none, id)
	b.check(t)
}

// rotation: during a rotation the delivery carries a signature for each
// live secret, so the receiver verifies it before its restart (old secret
// only), with both, and with the new one only.
func (b *bundle) rotation(t *testing.T) {
	b.s.rotate(t, b.company)
	next := func(ref string) string {
		id := b.s.event(t, object{"type": "invoice.sent", "company_id": b.ten.company,
			"data": object{"object": object{"object": "invoice", "id": ref, "total": "2.00"}}})
		b.s.delivered(t, b.company, id)
		b.expect(id, effect{Type: "invoice.sent", APIVersion: "2026-09-23", ObjectID: ref})
		return id
	}
	next("inv_rotated_old_only") // the receiver still has the old secret
	b.restart(t, "any", b.secrets()...)
	next("inv_rotated_both")
	b.restart(t, "any", b.company.secrets[0], b.account.secrets[0])
	next("inv_rotated_new_only")
	b.check(t)
}

// probeCopies finds the event id of the probe's concurrent copies.
var probeCopies = regexp.MustCompile(`concurrent copies of ([0-9a-f-]{36})`)

// probe: `webhooks probe` passes against the receiver, and its concurrent
// copies of one event had one effect.
func (b *bundle) probe(t *testing.T) {
	b.runProbe(t)
	b.check(t)
}

// runProbe runs `webhooks probe` with the company endpoint's new secret and
// flags, and expects the effects of the events it sent: its concurrent
// copies of one event, and the single delivery of its latency probe.
func (b *bundle) runProbe(t *testing.T, flags ...string) {
	t.Helper()
	before := map[string]bool{}
	for _, e := range b.db.read(t).effects {
		before[e.EventID] = true
	}
	args := append([]string{"probe", "--url", b.rcv.url, "--secret", b.company.secrets[0]}, flags...)
	out, err := exec.Command(filepath.Join(bin, "webhooks"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("webhooks probe %s: %v\n%s", strings.Join(flags, " "), err, out)
	}
	m := probeCopies.FindSubmatch(out)
	if m == nil {
		t.Fatalf("webhooks probe passed but did not name its event id:\n%s", out)
	}
	copies := string(m[1])
	var sent []string
	for _, e := range b.db.read(t).effects {
		if !before[e.EventID] && !slices.Contains(sent, e.EventID) {
			sent = append(sent, e.EventID)
		}
	}
	if len(sent) != 2 || !slices.Contains(sent, copies) {
		t.Errorf("after webhooks probe, new effects of events %v, want those of %s (the concurrent copies) and of the latency probe's event", sent, copies)
	}
	for _, id := range sent {
		b.expect(id, effect{Type: "ping", APIVersion: webhooks.LatestAPIVersion})
	}
}

// standardWebhooks: with standard_webhooks on both endpoints, a receiver
// that verifies only the Standard Webhooks headers gets every delivery,
// refuses a request with only Factuarea-Signature, and passes the probe's
// Standard Webhooks run.
func (b *bundle) standardWebhooks(t *testing.T) {
	for _, ep := range []*endpoint{b.company, b.account} {
		b.s.call(t, "PATCH", ep.path, object{"standard_webhooks": true}, 200, nil)
	}
	b.restart(t, "standard", b.company.secrets[0], b.account.secrets[0])
	invoice := b.s.event(t, object{"type": "invoice.sent", "company_id": b.ten.company,
		"data": object{"object": object{"object": "invoice", "id": "inv_standard", "total": "3.00"}}})
	customer := b.s.event(t, object{"type": "customer.updated", "company_id": b.ten.company,
		"data": object{"object": object{"object": "customer", "id": "cus_standard"}}})
	b.s.delivered(t, b.company, invoice)
	b.s.delivered(t, b.account, customer)
	b.expect(invoice, effect{Type: "invoice.sent", APIVersion: "2026-09-23", ObjectID: "inv_standard"})
	b.expect(customer, effect{Type: "customer.updated", APIVersion: "2025-06-01", Relationship: "managed", ObjectID: "cus_standard"})

	b.none = append(b.none, b.send(t, "factuarea", http.StatusUnauthorized))
	b.runProbe(t, "--standard-webhooks")
	b.check(t)
}

// send posts a company-envelope event of its own to the receiver, signed
// with the company endpoint's new secret in one scheme only ("standard" or
// "factuarea"), checks the answer's status and returns the event id.
func (b *bundle) send(t *testing.T, scheme string, want int) string {
	t.Helper()
	now := time.Now()
	ev := &webhooks.Event{
		ID: webhooks.NewID(), Type: "invoice.sent", APIVersion: webhooks.LatestAPIVersion, Created: now, Livemode: true,
		AccountID: b.ten.managed, CompanyID: b.ten.company, Object: json.RawMessage(`{"object":"invoice","id":"inv_direct"}`),
	}
	body, err := webhooks.RenderBody(ev, &webhooks.Endpoint{Scope: webhooks.ScopeCompany, APIVersion: webhooks.LatestAPIVersion}, "")
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", b.rcv.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	secret := b.company.secrets[0]
	switch scheme {
	case "standard":
		sig, err := signature.SignStandard(ev.ID, now.Unix(), body, secret)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(signature.StandardIDHeader, ev.ID)
		req.Header.Set(signature.StandardTimestampHeader, strconv.FormatInt(now.Unix(), 10))
		req.Header.Set(signature.StandardSignatureHeader, sig)
	case "factuarea":
		req.Header.Set(signature.HeaderName, signature.Sign(now.Unix(), body, secret))
		req.Header.Set("Factuarea-Event-Id", ev.ID)
		req.Header.Set("Factuarea-Event-Type", ev.Type)
		req.Header.Set("Idempotency-Key", ev.ID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", b.rcv.url, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("an event signed with %s headers only: got %d %q, want %d", scheme, resp.StatusCode, bytes.TrimSpace(answer), want)
	}
	return ev.ID
}

// check compares the receiver's tables with what the steps so far expect:
// each expected event left one effect row, of its envelope, and its id in
// processed_webhook_events; a failed or refused event left neither; no
// other row exists. Ids with more than one row are a double effect.
func (b *bundle) check(t *testing.T) {
	t.Helper()
	c := b.db.read(t)
	rows := map[string][]effect{}
	for _, e := range c.effects {
		rows[e.EventID] = append(rows[e.EventID], e)
	}
	for id, got := range rows {
		if len(got) > 1 {
			t.Errorf("event %s had %d effects, want one: %v", id, len(got), got)
		}
		if _, ok := b.want[id]; !ok {
			t.Errorf("webhook_effects holds %v, which no step expects", got)
		}
	}
	for id, want := range b.want {
		got := rows[id]
		switch {
		case len(got) == 0:
			t.Errorf("event %s left no effect, want %v", id, want[0])
		case !slices.Contains(want, got[0]):
			t.Errorf("event %s: got effect %v, want %v", id, got[0], fmt.Sprint(want))
		}
		if !c.processed[id] {
			t.Errorf("event %s is not in processed_webhook_events", id)
		}
	}
	for _, id := range b.none {
		if len(rows[id]) > 0 || c.processed[id] {
			t.Errorf("event %s left %v and processed=%t, want no row in either table", id, rows[id], c.processed[id])
		}
	}
}

func countContaining(answers []string, s string) int {
	n := 0
	for _, a := range answers {
		if strings.Contains(strings.ToLower(a), s) {
			n++
		}
	}
	return n
}
