package e2e

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/service"
	"github.com/factuarea/webhooks/signature"
)

// TestStandardWebhooks checks SPEC 15 on both backends: an endpoint with
// standard_webhooks gets the three headers beside an unchanged
// Factuarea-Signature, webhook-id is the event id, a rotation's overlap
// signs with both secrets (new first), and an endpoint without it gets
// none of them.
func TestStandardWebhooks(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t0 := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
			clock := &fakeClock{now: t0}
			ts := startService(t, "", append(opts, func(c *service.Config) { c.Now = clock.Now })...)
			acme := ts.newAccount("Acme", "", "B12345674")
			s := newSink(t)
			std := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{
				"url": s.URL + "/std", "enabled_events": []string{"invoice.sent"}, "standard_webhooks": true})
			if std.object["standard_webhooks"] != true {
				t.Fatalf("created endpoint: standard_webhooks %v, want true", std.object["standard_webhooks"])
			}
			plain := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{
				"url": s.URL + "/plain", "enabled_events": []string{"invoice.sent"}})

			ev := ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
			got := s.waitRequests(t, 2, 5*time.Second)
			for _, r := range got {
				if err := signature.Verify(r.header.Get(signature.HeaderName), r.body, t0, 0, std.secret, plain.secret); err != nil {
					t.Errorf("%s: Factuarea-Signature: %v", r.path, err)
				}
				id, ts_, sig := r.header.Get("webhook-id"), r.header.Get("webhook-timestamp"), r.header.Get("webhook-signature")
				if r.path == "/plain" {
					if id != "" || ts_ != "" || sig != "" {
						t.Errorf("an endpoint without standard_webhooks got webhook-* headers: %q %q %q", id, ts_, sig)
					}
					continue
				}
				if id != str(ev["id"]) || ts_ != strconv.FormatInt(t0.Unix(), 10) {
					t.Errorf("webhook-id %q, webhook-timestamp %q: want the event id %v and %d", id, ts_, ev["id"], t0.Unix())
				}
				if err := signature.VerifyStandard(id, ts_, sig, r.body, t0, 0, std.secret); err != nil {
					t.Errorf("webhook-signature %q: %v", sig, err)
				}
			}

			// During a rotation both secrets sign, the new one first.
			var rot object
			ts.must(200, "POST", std.path+"/rotate_secret", acme.key, object{"expires_in": 3600}, &rot)
			newSecret := str(rot["secret"])
			ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
			var r received
			for _, x := range s.waitRequests(t, 4, 5*time.Second)[2:] {
				if x.path == "/std" {
					r = x
				}
			}
			want, err := signature.SignStandard(r.header.Get("webhook-id"), t0.Unix(), r.body, newSecret, std.secret)
			if err != nil || r.header.Get("webhook-signature") != want {
				t.Errorf("rotation: webhook-signature %q, want %q (%v)", r.header.Get("webhook-signature"), want, err)
			}

			// It can be turned off and on again by PATCH.
			var patched object
			ts.must(200, "PATCH", plain.path, acme.key, object{"standard_webhooks": true}, &patched)
			if patched["standard_webhooks"] != true {
				t.Errorf("PATCH standard_webhooks: got %v", patched["standard_webhooks"])
			}
		})
	}
}

// TestStandardWebhooks_OldSecret: an endpoint whose secret was made before
// the format changed (unpadded base64url) keeps signing
// Factuarea-Signature, and cannot turn standard_webhooks on (422
// secret_not_compatible) until it rotates; then it can.
func TestStandardWebhooks_OldSecret(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
	const old = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
	err := ts.svc.Store.InTx(context.Background(), func(tx app.Tx) error {
		e, err := tx.LockEndpoint(context.Background(), ep.id)
		if err != nil {
			return err
		}
		e.Secret = old
		return tx.UpdateEndpoint(context.Background(), e)
	})
	if err != nil {
		t.Fatal(err)
	}
	ts.wantError(422, "secret_not_compatible", "PATCH", ep.path, acme.key, object{"standard_webhooks": true})
	ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
	r := s.waitRequests(t, 1, 5*time.Second)[0]
	if err := signature.Verify(r.header.Get(signature.HeaderName), r.body, time.Now(), 0, old); err != nil {
		t.Errorf("the old secret's Factuarea-Signature: %v", err)
	}
	ts.must(200, "POST", ep.path+"/rotate_secret", acme.key, object{"expires_in": 0}, nil)
	var patched object
	ts.must(200, "PATCH", ep.path, acme.key, object{"standard_webhooks": true}, &patched)
	if patched["standard_webhooks"] != true {
		t.Errorf("after rotating: standard_webhooks %v", patched["standard_webhooks"])
	}
}
