package receiver_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factuarea/webhooks/receiver"
	"github.com/factuarea/webhooks/signature"
)

// standardSecret is a secret in the current format, which serves both
// schemes; testSecret is in the earlier one, which Standard Webhooks cannot
// use.
const standardSecret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

// signedHeaders returns the headers the sender sends for body signed at t by
// secrets: Factuarea-Signature, and the Standard Webhooks headers with id as
// webhook-id.
func signedHeaders(t *testing.T, id string, body []byte, at time.Time, secrets ...string) map[string]string {
	t.Helper()
	std, err := signature.SignStandard(id, at.Unix(), body, secrets...)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		signature.HeaderName:              signature.Sign(at.Unix(), body, secrets...),
		signature.StandardIDHeader:        id,
		signature.StandardTimestampHeader: strconv.FormatInt(at.Unix(), 10),
		signature.StandardSignatureHeader: std,
	}
}

// TestHandler_Schemes delivers with each combination of headers to each
// scheme: which is verified, that a Factuarea-Signature that fails is not
// passed over for the other headers, and that webhook-id must be the body's
// id.
func TestHandler_Schemes(t *testing.T) {
	now := time.Unix(1790590562, 0)
	id := "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31"
	body := eventBody(id)
	good := signedHeaders(t, id, body, now, standardSecret)
	other := signedHeaders(t, id, body, now, "whsec_//jx6uPc1c7HwLmyq6Sdlo+IgXpzbGVeV1BJQjs0LSY=")
	stale := signedHeaders(t, id, body, now.Add(-time.Hour), standardSecret)
	// Correctly signed, but for another webhook-id than the body's id.
	otherID := signedHeaders(t, "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c32", body, now, standardSecret)
	rotation := signedHeaders(t, id, body, now, "whsec_//jx6uPc1c7HwLmyq6Sdlo+IgXpzbGVeV1BJQjs0LSY=", standardSecret)

	factuarea := func(h map[string]string) map[string]string {
		return map[string]string{signature.HeaderName: h[signature.HeaderName]}
	}
	standard := func(h map[string]string) map[string]string {
		m := map[string]string{}
		for _, k := range []string{signature.StandardIDHeader, signature.StandardTimestampHeader, signature.StandardSignatureHeader} {
			m[k] = h[k]
		}
		return m
	}
	merge := func(a, b map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range a {
			m[k] = v
		}
		for k, v := range b {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		scheme  receiver.Scheme
		headers map[string]string
		want    int
		inBody  string
	}{
		{"any: both", receiver.SchemeAny, good, 200, "processed"},
		{"any: Factuarea only", receiver.SchemeAny, factuarea(good), 200, "processed"},
		{"any: Standard only", receiver.SchemeAny, standard(good), 200, "processed"},
		{"any: Factuarea fails, Standard verifies", receiver.SchemeAny, merge(factuarea(other), standard(good)), 401, "no v1 signature matches"},
		{"any: Factuarea empty, Standard verifies", receiver.SchemeAny, merge(map[string]string{signature.HeaderName: ""}, standard(good)), 401, "header is missing"},
		{"any: neither", receiver.SchemeAny, map[string]string{}, 401, "neither Factuarea-Signature nor webhook-signature"},
		{"any: Standard only, stale", receiver.SchemeAny, standard(stale), 401, "outside the tolerance"},
		{"any: Standard only, another webhook-id", receiver.SchemeAny, standard(otherID), 400, `webhook-id "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c32" is not the body's id`},
		{"any: Standard only, no webhook-signature", receiver.SchemeAny, map[string]string{signature.StandardIDHeader: id, signature.StandardTimestampHeader: good[signature.StandardTimestampHeader]}, 401, "header is missing: webhook-signature"},
		{"factuarea: Factuarea only", receiver.SchemeFactuarea, factuarea(good), 200, "processed"},
		{"factuarea: Standard only", receiver.SchemeFactuarea, standard(good), 401, "header is missing"},
		{"factuarea: Factuarea verifies, another webhook-id", receiver.SchemeFactuarea, merge(factuarea(good), standard(otherID)), 200, "processed"},
		{"standard: Standard only", receiver.SchemeStandard, standard(good), 200, "processed"},
		{"standard: Factuarea only", receiver.SchemeStandard, factuarea(good), 401, "header is missing: webhook-id, webhook-signature"},
		{"standard: Factuarea fails, Standard verifies", receiver.SchemeStandard, merge(factuarea(other), standard(good)), 200, "processed"},
		{"standard: Standard fails", receiver.SchemeStandard, standard(other), 401, "no v1 signature matches"},
		{"standard: stale", receiver.SchemeStandard, standard(stale), 401, "outside the tolerance"},
		{"standard: another webhook-id", receiver.SchemeStandard, standard(otherID), 400, "is not the body's id"},
		{"standard: rotation, two v1 entries", receiver.SchemeStandard, standard(rotation), 200, "processed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var runs atomic.Int64
			h, err := receiver.New(receiver.Config{
				DB:      openSQLite(t),
				Secrets: []string{standardSecret},
				Scheme:  tc.scheme,
				Handle: func(context.Context, *sql.Tx, *receiver.Event) error {
					runs.Add(1)
					return nil
				},
				Now:    func() time.Time { return now },
				Logger: slog.New(slog.DiscardHandler),
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.CreateTable(context.Background()); err != nil {
				t.Fatal(err)
			}
			w := deliverHeaders(h, body, tc.headers)
			got := bodyOf(w)
			if w.Code != tc.want || !strings.Contains(got, tc.inBody) {
				t.Errorf("got %d %q, want %d with %q", w.Code, got, tc.want, tc.inBody)
			}
			if wantRuns := int64(map[bool]int{true: 1}[tc.want == 200]); runs.Load() != wantRuns {
				t.Errorf("handler runs: got %d, want %d", runs.Load(), wantRuns)
			}
		})
	}
}

// standardSecretCases are the shared cases of the secrets a kit set up for
// Standard Webhooks takes or refuses (SPEC 15), which every kit passes.
type standardSecretCases struct {
	Message string `json:"message"`
	Cases   []struct {
		Name    string   `json:"name"`
		Secrets []string `json:"secrets"`
		Refused *int     `json:"refused"`
	} `json:"cases"`
}

// TestNew_StandardSecrets: with SchemeStandard, New checks every secret
// and refuses the first that is not standard base64 after whsec_, with
// the message every kit gives (signature/testdata/standard-secrets.json),
// an error that is signature.ErrSecretNotStandard; the same secrets are
// taken for Factuarea-Signature.
func TestNew_StandardSecrets(t *testing.T) {
	raw, err := os.ReadFile("../signature/testdata/standard-secrets.json")
	if err != nil {
		t.Fatal(err)
	}
	var file standardSecretCases
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) == 0 || !strings.Contains(file.Message, "{index}") {
		t.Fatalf("standard-secrets.json: got %d cases and message %q", len(file.Cases), file.Message)
	}
	db := openSQLite(t)
	handle := func(context.Context, *sql.Tx, *receiver.Event) error { return nil }
	for _, c := range file.Cases {
		_, err := receiver.New(receiver.Config{DB: db, Secrets: c.Secrets, Scheme: receiver.SchemeStandard, Handle: handle})
		if c.Refused == nil {
			if err != nil {
				t.Errorf("%s: %q: got %v, want the Handler", c.Name, c.Secrets, err)
			}
			continue
		}
		want := strings.Replace(file.Message, "{index}", strconv.Itoa(*c.Refused), 1)
		if err == nil || err.Error() != want || !errors.Is(err, signature.ErrSecretNotStandard) {
			t.Errorf("%s: %q: got %v, want %q (signature.ErrSecretNotStandard)", c.Name, c.Secrets, err, want)
		}
		if _, err := receiver.New(receiver.Config{DB: db, Secrets: c.Secrets, Scheme: receiver.SchemeFactuarea, Handle: handle}); err != nil {
			t.Errorf("%s: SchemeFactuarea: got %v, want the Handler", c.Name, err)
		}
	}
}

// TestHandler_SchemeSecrets: a secret of the earlier format cannot verify
// the Standard Webhooks headers. SchemeStandard refuses it at New; SchemeAny
// accepts it, verifies Factuarea-Signature with it, and refuses a delivery
// with only the Standard Webhooks headers, saying why.
func TestHandler_SchemeSecrets(t *testing.T) {
	db := openSQLite(t)
	handle := func(context.Context, *sql.Tx, *receiver.Event) error { return nil }
	_, err := receiver.New(receiver.Config{DB: db, Secrets: []string{standardSecret, testSecret}, Scheme: receiver.SchemeStandard, Handle: handle})
	if err == nil || !strings.HasPrefix(err.Error(), "secrets[1] is not standard base64") {
		t.Errorf("SchemeStandard with an old secret: got %v, want an error naming secrets[1]", err)
	}
	if _, err := receiver.New(receiver.Config{DB: db, Secrets: []string{testSecret}, Scheme: 7, Handle: handle}); err == nil || !strings.Contains(err.Error(), "Scheme(7)") {
		t.Errorf("Scheme 7: got %v, want an error", err)
	}

	now := time.Unix(1790590562, 0)
	h, err := receiver.New(receiver.Config{DB: db, Secrets: []string{testSecret}, Handle: handle, Now: func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	id := "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31"
	body := eventBody(id)
	headers := signedHeaders(t, id, body, now, standardSecret)
	delete(headers, signature.HeaderName)
	w := deliverHeaders(h, body, headers)
	if got := bodyOf(w); w.Code != http.StatusUnauthorized || !strings.Contains(got, "not standard base64") {
		t.Errorf("Standard headers, old secret: got %d %q, want 401 saying the secret is not standard base64", w.Code, got)
	}
	if w := deliverSigned(h, body, signature.Sign(now.Unix(), body, testSecret)); w.Code != http.StatusOK {
		t.Errorf("Factuarea-Signature, old secret: got %d, want 200", w.Code)
	}
}

func TestVerifyStandard_Errors(t *testing.T) {
	now := time.Unix(1790590562, 0)
	id := "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31"
	body := eventBody(id)
	h := signedHeaders(t, id, body, now, standardSecret)
	ts, sig := h[signature.StandardTimestampHeader], h[signature.StandardSignatureHeader]
	for _, tc := range []struct {
		name            string
		id, ts, sig     string
		now             time.Time
		secrets         []string
		want            error
		wantInErrorText string
	}{
		{"no webhook-id", "", ts, sig, now, []string{standardSecret}, signature.ErrMissingHeader, "webhook-id"},
		{"no webhook-signature", id, ts, "", now, []string{standardSecret}, signature.ErrMissingHeader, "webhook-signature"},
		{"no webhook-timestamp", id, "", sig, now, []string{standardSecret}, signature.ErrNoTimestamp, ""},
		{"v2 only", id, ts, "v2," + sig[3:], now, []string{standardSecret}, signature.ErrNoSignature, ""},
		{"301 s late", id, ts, sig, now.Add(301 * time.Second), []string{standardSecret}, signature.ErrTimestampOutOfTolerance, ""},
		{"wrong secret", id, ts, sig, now, []string{"whsec_//jx6uPc1c7HwLmyq6Sdlo+IgXpzbGVeV1BJQjs0LSY="}, signature.ErrNoMatch, ""},
		{"old-format secret", id, ts, sig, now, []string{testSecret}, signature.ErrSecretNotStandard, ""},
		{"no secret", id, ts, sig, now, nil, signature.ErrNoSecret, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := receiver.VerifyStandard(tc.id, tc.ts, tc.sig, body, tc.now, tc.secrets...)
			if !errors.Is(err, tc.want) || !errors.Is(err, receiver.ErrInvalidSignature) {
				t.Errorf("got %v, want ErrInvalidSignature and %v", err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantInErrorText) {
				t.Errorf("got %q, want it to name %q", err, tc.wantInErrorText)
			}
		})
	}
	// Rotation: one old secret and one new, either verifies.
	if err := receiver.VerifyStandard(id, ts, sig, body, now, "whsec_//jx6uPc1c7HwLmyq6Sdlo+IgXpzbGVeV1BJQjs0LSY=", standardSecret); err != nil {
		t.Errorf("second secret: got %v, want nil", err)
	}
}
