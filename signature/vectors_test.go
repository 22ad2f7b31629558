package signature_test

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/factuarea/webhooks/signature"
)

// vector is one entry of the shared signature-vectors.json.
type vector struct {
	Name      string `json:"name"`
	Secret    string `json:"secret"`
	Timestamp int64  `json:"timestamp"`
	Body      string `json:"body"`
	Header    string `json:"header"`
	Valid     bool   `json:"valid"`
}

// loadVectors reads the vectors from testdata, a copy of
// ../shared/signature-vectors.json kept in the module so that the tests run
// from a clean checkout.
func loadVectors(t *testing.T) []vector {
	t.Helper()
	raw, err := os.ReadFile("testdata/signature-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors []vector `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	return f.Vectors
}

func TestVerify_Vectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			err := signature.Verify(v.Header, []byte(v.Body), time.Unix(v.Timestamp, 0), 0, v.Secret)
			if got := err == nil; got != v.Valid {
				t.Errorf("Verify: got valid=%t (err %v), want %t", got, err, v.Valid)
			}
		})
	}
}

// TestSign_Vectors checks the sender's side: for every valid vector, the
// signature that Sign computes for the vector's secret is one of the header's
// elements, and a header of only that secret is exactly "t=…,v1=…".
func TestSign_Vectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		if !v.Valid {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			h, err := signature.Parse(v.Header)
			if err != nil {
				t.Fatal(err)
			}
			got := signature.Sign(h.Timestamp, []byte(v.Body), v.Secret)
			_, sig, _ := strings.Cut(got, ",")
			if !slices.Contains(strings.Split(v.Header, ","), sig) {
				t.Errorf("Sign: got %q, whose %q is not in the header %q", got, sig, v.Header)
			}
			if want := "t=" + strconv.FormatInt(h.Timestamp, 10) + "," + sig; got != want {
				t.Errorf("Sign: got %q, want %q", got, want)
			}
		})
	}
}

func TestSign_Rotation(t *testing.T) {
	body := []byte(`{"id":"x"}`)
	h := signature.Sign(1790590562, body, "whsec_new", "whsec_old")
	parsed, err := signature.Parse(h)
	if err != nil {
		t.Fatal(err)
	}
	if len(parsed.V1) != 2 {
		t.Fatalf("got %d signatures, want 2", len(parsed.V1))
	}
	now := time.Unix(1790590562, 0)
	for _, secret := range []string{"whsec_new", "whsec_old"} {
		if err := signature.Verify(h, body, now, 0, secret); err != nil {
			t.Errorf("Verify with %s: %v", secret, err)
		}
	}
	if err := signature.Verify(h, body, now, 0, "whsec_other"); !errors.Is(err, signature.ErrNoMatch) {
		t.Errorf("Verify with another secret: got %v, want ErrNoMatch", err)
	}
}

func TestVerify_Errors(t *testing.T) {
	body := []byte(`{}`)
	now := time.Unix(1790590562, 0)
	good := signature.Sign(now.Unix(), body, "whsec_a")
	for _, tc := range []struct {
		name   string
		header string
		now    time.Time
		want   error
	}{
		{"empty", "", now, signature.ErrMissingHeader},
		{"no timestamp", "v1=" + strings.Repeat("ab", 32), now, signature.ErrNoTimestamp},
		{"two timestamps", "t=1,t=2," + good[strings.Index(good, "v1="):], now, signature.ErrNoTimestamp},
		{"negative timestamp", "t=-5,v1=" + strings.Repeat("ab", 32), now, signature.ErrNoTimestamp},
		{"no v1", "t=1790590562,v0=abc", now, signature.ErrNoSignature},
		{"stale", good, now.Add(301 * time.Second), signature.ErrTimestampOutOfTolerance},
		{"future", good, now.Add(-301 * time.Second), signature.ErrTimestampOutOfTolerance},
		{"wrong body", signature.Sign(now.Unix(), []byte(`{"a":1}`), "whsec_a"), now, signature.ErrNoMatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := signature.Verify(tc.header, body, tc.now, 0, "whsec_a")
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	if err := signature.Verify(good, body, now, 0); !errors.Is(err, signature.ErrNoSecret) {
		t.Errorf("no secret: got %v, want ErrNoSecret", err)
	}
}

func TestNewSecret(t *testing.T) {
	a, err := signature.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := signature.NewSecret()
	if a == b {
		t.Error("two secrets are equal")
	}
	if !strings.HasPrefix(a, signature.SecretPrefix) || len(a) != len(signature.SecretPrefix)+44 {
		t.Errorf("got %q, want whsec_ and 44 characters of padded standard base64", a)
	}
}
