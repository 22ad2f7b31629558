package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/service"
	"github.com/factuarea/webhooks/signature"
)

// checkSecret checks the form of a secret: whsec_ and 32 random bytes in
// padded standard base64, which Standard Webhooks libraries decode too.
func checkSecret(t *testing.T, s string) {
	t.Helper()
	raw, ok := strings.CutPrefix(s, "whsec_")
	b, err := base64.StdEncoding.Strict().DecodeString(raw)
	if !ok || err != nil || len(b) != 32 {
		t.Errorf("secret %q is not whsec_ and 32 bytes of padded standard base64", s)
	}
}

// checkSigned checks that r carries exactly one v1 per secret of want, in
// that order, made at now, and that the header verifies with each.
func checkSigned(t *testing.T, r received, now time.Time, want ...string) {
	t.Helper()
	header := r.header.Get(signature.HeaderName)
	h, err := signature.Parse(header)
	if err != nil {
		t.Fatalf("header %q: %v", header, err)
	}
	if h.Timestamp != now.Unix() {
		t.Errorf("t=%d, want the attempt's time %d", h.Timestamp, now.Unix())
	}
	if len(h.V1) != len(want) {
		t.Errorf("got %d v1 signatures, want %d (%s)", len(h.V1), len(want), header)
	}
	for i, secret := range want {
		if i < len(h.V1) && !bytes.Equal(h.V1[i], signature.Compute(secret, h.Timestamp, r.body)) {
			t.Errorf("v1 number %d is not the signature of secret %d", i+1, i+1)
		}
		if err := signature.Verify(header, r.body, now, 0, secret); err != nil {
			t.Errorf("Verify with secret %d: got %v, want nil", i+1, err)
		}
	}
}

// TestRotation walks a secret rotation on a fake clock: the overlap, its
// end at the announced moment, a rotation during an overlap, and one that
// ends the old secret at once; what each answers and shows, and what each
// delivery is signed with.
func TestRotation(t *testing.T) {
	t0 := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
	clock := &fakeClock{now: t0}
	ts := startService(t, "", func(c *service.Config) { c.Now = clock.Now })
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
	checkSecret(t, ep.secret)
	secrets := []string{ep.secret}
	var answers [][]byte // everything the API answered, to search for secrets

	get := func(path string) object {
		t.Helper()
		status, raw := ts.raw("GET", path, acme.key, nil, nil)
		answers = append(answers, raw)
		var o object
		if status != 200 {
			t.Fatalf("GET %s: got %d %s", path, status, raw)
		}
		if err := jsonUnmarshal(raw, &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	revealed := func() string {
		t.Helper()
		var out object
		ts.must(200, "GET", ep.path+"/secret", acme.key, nil, &out)
		if len(out) != 1 {
			t.Errorf("GET …/secret: got %v, want only secret", out)
		}
		return str(out["secret"])
	}
	expiresShown := func() any {
		t.Helper()
		o := get(ep.path)
		if _, ok := o["secret"]; ok {
			t.Errorf("GET endpoint shows its secret: %v", o)
		}
		l := get("/v1/companies/" + acme.companyID + "/webhook_endpoints")
		item := l["data"].([]any)[0].(map[string]any)
		if _, ok := item["secret"]; ok {
			t.Errorf("the endpoint list shows a secret: %v", item)
		}
		if !reflect.DeepEqual(item["previous_secret_expires_at"], o["previous_secret_expires_at"]) {
			t.Errorf("list shows previous_secret_expires_at %v, the endpoint %v", item["previous_secret_expires_at"], o["previous_secret_expires_at"])
		}
		return o["previous_secret_expires_at"]
	}
	events := 0
	deliver := func() received {
		t.Helper()
		events++
		ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
		return s.waitRequests(t, events, 5*time.Second)[events-1]
	}
	rotate := func(in any) (string, int64) {
		t.Helper()
		status, raw := ts.raw("POST", ep.path+"/rotate_secret", acme.key, in, nil)
		answers = append(answers, raw)
		var out object
		if err := jsonUnmarshal(raw, &out); status != 200 || err != nil {
			t.Fatalf("rotate %v: got %d %s", in, status, raw)
		}
		keys := []string{}
		for k := range out {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !reflect.DeepEqual(keys, []string{"previous_secret_expires_at", "secret"}) {
			t.Errorf("rotate answered %v, want secret and previous_secret_expires_at", out)
		}
		secret := str(out["secret"])
		checkSecret(t, secret)
		if slices.Contains(secrets, secret) {
			t.Errorf("rotate returned a secret seen before")
		}
		secrets = append(secrets, secret)
		return secret, int64(out["previous_secret_expires_at"].(float64))
	}

	// Refused rotations change nothing.
	for _, c := range []struct {
		in   any
		code string
	}{
		{object{"expires_in": 604801}, "invalid_request"},
		{object{"expires_in": 10 * 604800}, "invalid_request"},
		{object{"expires_in": -1}, "invalid_request"},
		{object{"expires_in": "soon"}, "invalid_request"},
		{object{"expires_in": 1.5}, "invalid_request"},
		{object{"expires_in": 60, "secret": "whsec_mine"}, "unknown_field"},
	} {
		status, raw := ts.raw("POST", ep.path+"/rotate_secret", acme.key, c.in, nil)
		answers = append(answers, raw)
		if e := replyError(raw); status != 400 || e.Error.Code != c.code {
			t.Errorf("rotate %v: got %d %s, want 400 %s", c.in, status, raw, c.code)
		}
	}
	if got := revealed(); got != secrets[0] {
		t.Fatalf("after refused rotations the secret changed")
	}
	if got := expiresShown(); got != nil {
		t.Errorf("previous_secret_expires_at before any rotation: got %v, want null", got)
	}
	checkSigned(t, deliver(), clock.Now(), secrets[0])

	// The default overlap: a day, both secrets sign, new first.
	s1, expires := rotate(nil)
	if want := t0.Add(24 * time.Hour).Unix(); expires != want {
		t.Errorf("default rotation: previous_secret_expires_at %d, want now + 86400 = %d", expires, want)
	}
	if got := expiresShown(); got != float64(expires) {
		t.Errorf("during the overlap the endpoint shows previous_secret_expires_at %v, want %d", got, expires)
	}
	if got := revealed(); got != s1 {
		t.Errorf("GET …/secret after the rotation is not the new secret")
	}
	checkSigned(t, deliver(), clock.Now(), s1, secrets[0])
	clock.Set(time.Unix(expires-1, 0))
	checkSigned(t, deliver(), clock.Now(), s1, secrets[0])

	// At the announced moment the old secret stops signing.
	clock.Set(time.Unix(expires, 0))
	r := deliver()
	checkSigned(t, r, clock.Now(), s1)
	if err := signature.Verify(r.header.Get(signature.HeaderName), r.body, clock.Now(), 0, secrets[0]); !errors.Is(err, signature.ErrNoMatch) {
		t.Errorf("the old secret after its end: got %v, want %v", err, signature.ErrNoMatch)
	}
	if got := expiresShown(); got != nil {
		t.Errorf("after the overlap previous_secret_expires_at: got %v, want null", got)
	}

	// The longest overlap, then a rotation during it: the older secret ends
	// at once, so no more than two ever sign.
	now := clock.Now()
	s2, expires := rotate(object{"expires_in": 604800})
	if want := now.Add(7 * 24 * time.Hour).Unix(); expires != want {
		t.Errorf("expires_in 604800: previous_secret_expires_at %d, want %d", expires, want)
	}
	checkSigned(t, deliver(), clock.Now(), s2, s1)
	clock.Set(now.Add(time.Hour))
	s3, expires := rotate(object{"expires_in": 600})
	if want := now.Add(time.Hour + 10*time.Minute).Unix(); expires != want {
		t.Errorf("expires_in 600: previous_secret_expires_at %d, want %d", expires, want)
	}
	r = deliver()
	checkSigned(t, r, clock.Now(), s3, s2)
	if err := signature.Verify(r.header.Get(signature.HeaderName), r.body, clock.Now(), 0, s1); !errors.Is(err, signature.ErrNoMatch) {
		t.Errorf("the secret before the previous one: got %v, want %v", err, signature.ErrNoMatch)
	}
	if got := expiresShown(); got != float64(expires) {
		t.Errorf("previous_secret_expires_at: got %v, want %d", got, expires)
	}

	// expires_in 0 ends the old secret now.
	s4, expires := rotate(object{"expires_in": 0})
	if expires != clock.Now().Unix() {
		t.Errorf("expires_in 0: previous_secret_expires_at %d, want now %d", expires, clock.Now().Unix())
	}
	if got := expiresShown(); got != nil {
		t.Errorf("after expires_in 0 previous_secret_expires_at: got %v, want null", got)
	}
	checkSigned(t, deliver(), clock.Now(), s4)
	if got := revealed(); got != s4 {
		t.Errorf("GET …/secret is not the last secret")
	}

	// The audit log has each rotation and each reveal, and no secret.
	audit := get("/v1/accounts/" + acme.accountID + "/audit_log?limit=100")
	count := map[string]int{}
	for _, e := range audit["data"].([]any) {
		e := e.(map[string]any)
		if e["target"].(map[string]any)["id"] == ep.id {
			count[str(e["action"])+" "+str(e["outcome"])]++
		}
	}
	for action, want := range map[string]int{
		"webhook_endpoint.secret_rotated succeeded":  4,
		"webhook_endpoint.secret_rotated refused":    3, // the values out of range; malformed JSON is not a change
		"webhook_endpoint.secret_revealed succeeded": 3,
	} {
		if count[action] != want {
			t.Errorf("audit log: %d × %s, want %d (all: %v)", count[action], action, want, count)
		}
	}

	// Secrets appear only where they are returned on purpose: never in a
	// list, an endpoint, an error, a delivery, an event or the audit log.
	ds := ts.deliveries(ep, acme.key)
	for _, d := range ds {
		get(ep.path + "/deliveries/" + str(d["id"]))
	}
	get(ep.path + "/deliveries?limit=100")
	get("/v1/companies/" + acme.companyID + "/events?limit=100")
	get("/v1/accounts/" + acme.accountID + "/events?limit=100")
	get("/v1/accounts/" + acme.accountID + "/webhook_endpoints")
	for _, raw := range answers {
		if bytes.Contains(raw, []byte("previous_secret_expires_at")) && bytes.Contains(raw, []byte(`"secret":`)) {
			continue // a rotation's own answer
		}
		for i, secret := range secrets {
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("secret %d appears in %s", i, clip(raw))
			}
		}
		if bytes.Contains(raw, []byte("whsec_")) {
			t.Errorf("a secret appears in %s", clip(raw))
		}
	}
}

// TestRotation_AccountEndpoint: an account endpoint rotates the same way.
func TestRotation_AccountEndpoint(t *testing.T) {
	ts := startService(t, "")
	acme := ts.newAccount("Acme", "", "B12345674")
	s := newSink(t)
	ep := ts.newEndpoint("/v1/accounts/"+acme.accountID, acme.key, object{"url": s.URL, "enabled_events": []string{"invoice.*"}})
	var out struct {
		Secret                  string `json:"secret"`
		PreviousSecretExpiresAt int64  `json:"previous_secret_expires_at"`
	}
	ts.must(200, "POST", ep.path+"/rotate_secret", acme.key, object{"expires_in": 3600}, &out)
	checkSecret(t, out.Secret)
	if d := time.Until(time.Unix(out.PreviousSecretExpiresAt, 0)); d < 3590*time.Second || d > 3600*time.Second {
		t.Errorf("previous_secret_expires_at is %s from now, want an hour", d)
	}
	ts.registerEvent(object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}})
	r := s.waitRequests(t, 1, 5*time.Second)[0]
	h, _ := signature.Parse(r.header.Get(signature.HeaderName))
	checkSigned(t, r, time.Unix(h.Timestamp, 0), out.Secret, ep.secret)
}

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }
