package signature_test

import (
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/factuarea/webhooks/signature"
)

// standardVector is one entry of the shared standard-webhooks-vectors.json.
type standardVector struct {
	Name      string   `json:"name"`
	Secrets   []string `json:"secrets"`
	ID        string   `json:"id"`
	Timestamp int64    `json:"timestamp"`
	Now       int64    `json:"now"`
	Body      string   `json:"body"`
	Signature string   `json:"signature"`
	Valid     bool     `json:"valid"`
	Factuarea string   `json:"factuarea_signature"`
}

func loadStandardVectors(t *testing.T) []standardVector {
	t.Helper()
	raw, err := os.ReadFile("testdata/standard-webhooks-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors []standardVector `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	return f.Vectors
}

func TestVerifyStandard_Vectors(t *testing.T) {
	for _, v := range loadStandardVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			err := signature.VerifyStandard(v.ID, itoa(v.Timestamp), v.Signature, []byte(v.Body), time.Unix(v.Now, 0), 0, v.Secrets...)
			if got := err == nil; got != v.Valid {
				t.Errorf("VerifyStandard: got valid=%t (err %v), want %t", got, err, v.Valid)
			}
			if v.Factuarea != "" {
				err := signature.Verify(v.Factuarea, []byte(v.Body), time.Unix(v.Now, 0), 0, v.Secrets...)
				if err != nil {
					t.Errorf("the same secret's Factuarea-Signature: %v", err)
				}
			}
		})
	}
}

// TestSignStandard_Vectors checks the sender's side: a valid single-secret
// vector's signature is exactly what SignStandard computes, and a rotation's
// header holds one entry per secret, in the order given.
func TestSignStandard_Vectors(t *testing.T) {
	for _, v := range loadStandardVectors(t) {
		if !v.Valid || strings.Contains(v.Signature, " ") {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			got, err := signature.SignStandard(v.ID, v.Timestamp, []byte(v.Body), v.Secrets...)
			if err != nil || got != v.Signature {
				t.Errorf("SignStandard: got %q, %v; want %q", got, err, v.Signature)
			}
			if v.Factuarea != "" {
				if got := signature.Sign(v.Timestamp, []byte(v.Body), v.Secrets...); got != v.Factuarea {
					t.Errorf("Sign: got %q, want %q", got, v.Factuarea)
				}
			}
		})
	}
	a := "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	b := "whsec_//jx6uPc1c7HwLmyq6Sdlo+IgXpzbGVeV1BJQjs0LSY="
	both, err := signature.SignStandard("msg", 1, []byte("{}"), b, a)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := signature.SignStandard("msg", 1, []byte("{}"), b)
	second, _ := signature.SignStandard("msg", 1, []byte("{}"), a)
	if both != first+" "+second {
		t.Errorf("rotation header: got %q, want %q", both, first+" "+second)
	}
}

func TestStandard_OldSecretFormat(t *testing.T) {
	old := "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8" // unpadded: the earlier format
	if signature.StandardCompatible(old) {
		t.Error("an unpadded secret is not standard base64")
	}
	// base64.StdEncoding skips line breaks; standard base64 has none, and
	// the other kits refuse them.
	for _, s := range []string{"whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n", "whsec_AAECAwQFBgcI\r\nCQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="} {
		if signature.StandardCompatible(s) {
			t.Errorf("StandardCompatible(%q): got true, want false (a line break)", s)
		}
	}
	if _, err := signature.SignStandard("msg", 1, nil, old); !errors.Is(err, signature.ErrSecretNotStandard) {
		t.Errorf("SignStandard with an old secret: got %v, want ErrSecretNotStandard", err)
	}
	// A well-formed entry, signed with the padded form of the same key, so
	// that the check gets past the header to the secrets: the old format is
	// no Standard Webhooks key, and with no usable secret the error says so.
	padded := "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	body := []byte("{}")
	sig, err := signature.SignStandard("msg", 1, body, padded)
	if err != nil {
		t.Fatal(err)
	}
	if err := signature.VerifyStandard("msg", "1", sig, body, time.Unix(1, 0), 0, old); !errors.Is(err, signature.ErrSecretNotStandard) {
		t.Errorf("VerifyStandard with only an old secret: got %v, want ErrSecretNotStandard", err)
	}
	// Beside a usable secret, the old one is passed over rather than fatal.
	if err := signature.VerifyStandard("msg", "1", sig, body, time.Unix(1, 0), 0, old, padded); err != nil {
		t.Errorf("VerifyStandard with an old and a usable secret: got %v, want nil", err)
	}
	for range 20 {
		s, err := signature.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != 50 || !signature.StandardCompatible(s) {
			t.Errorf("NewSecret %q: want whsec_ and 44 characters of standard base64", s)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
