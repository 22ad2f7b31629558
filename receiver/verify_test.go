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
	"testing"
	"time"

	"github.com/factuarea/webhooks/receiver"
	"github.com/factuarea/webhooks/signature"
)

// vector is one entry of signature-vectors.json.
type vector struct {
	Name      string `json:"name"`
	Secret    string `json:"secret"`
	Timestamp int64  `json:"timestamp"`
	Body      string `json:"body"`
	Header    string `json:"header"`
	Valid     bool   `json:"valid"`
}

// loadVectors reads the vectors that both halves of the product must pass,
// from the signature package's copy.
func loadVectors(t *testing.T) []vector {
	t.Helper()
	raw, err := os.ReadFile("../signature/testdata/signature-vectors.json")
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

// signatureSentinels are the checks Verify can report.
var signatureSentinels = []error{
	signature.ErrMissingHeader, signature.ErrNoTimestamp, signature.ErrNoSignature,
	signature.ErrTimestampOutOfTolerance, signature.ErrNoMatch, signature.ErrNoSecret,
}

func TestVerify_Vectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			err := receiver.Verify(v.Header, []byte(v.Body), time.Unix(v.Timestamp, 0), v.Secret)
			if got := err == nil; got != v.Valid {
				t.Fatalf("got valid=%t (err %v), want %t", got, err, v.Valid)
			}
			if v.Valid {
				return
			}
			if !errors.Is(err, receiver.ErrInvalidSignature) {
				t.Errorf("got %v, want it to wrap ErrInvalidSignature", err)
			}
			named := false
			for _, s := range signatureSentinels {
				named = named || errors.Is(err, s)
			}
			if !named {
				t.Errorf("got %v, which wraps no signature sentinel", err)
			}
		})
	}
}

// TestHandler_Vectors runs every vector through the Handler, with the
// vector's clock: a valid one answers 200, an invalid one 401.
func TestHandler_Vectors(t *testing.T) {
	db := openSQLite(t)
	if err := receiver.CreateTable(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			h, err := receiver.New(receiver.Config{
				DB:      db,
				Secrets: []string{v.Secret},
				Handle:  func(context.Context, *sql.Tx, *receiver.Event) error { return nil },
				Now:     func() time.Time { return time.Unix(v.Timestamp, 0) },
				Logger:  slog.New(slog.DiscardHandler),
			})
			if err != nil {
				t.Fatal(err)
			}
			want := http.StatusUnauthorized
			if v.Valid {
				want = http.StatusOK
			}
			if w := deliverSigned(h, []byte(v.Body), v.Header); w.Code != want {
				t.Errorf("got %d %q, want %d", w.Code, bodyOf(w), want)
			}
		})
	}
}

func TestVerify_Errors(t *testing.T) {
	body := []byte(`{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"ping"}`)
	now := time.Unix(1790590562, 0)
	good := signature.Sign(now.Unix(), body, "whsec_a")
	for _, tc := range []struct {
		name    string
		header  string
		now     time.Time
		secrets []string
		want    error
	}{
		{"missing header", "", now, []string{"whsec_a"}, signature.ErrMissingHeader},
		{"no timestamp", good[len("t=1790590562,"):], now, []string{"whsec_a"}, signature.ErrNoTimestamp},
		{"no v1", "t=1790590562,v0=ab", now, []string{"whsec_a"}, signature.ErrNoSignature},
		{"301 s late", good, now.Add(301 * time.Second), []string{"whsec_a"}, signature.ErrTimestampOutOfTolerance},
		{"wrong secret", good, now, []string{"whsec_b"}, signature.ErrNoMatch},
		{"no secret", good, now, nil, signature.ErrNoSecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := receiver.Verify(tc.header, body, tc.now, tc.secrets...)
			if !errors.Is(err, tc.want) || !errors.Is(err, receiver.ErrInvalidSignature) {
				t.Errorf("got %v, want ErrInvalidSignature and %v", err, tc.want)
			}
		})
	}
	// Rotation: the header signs with the new and the old secret; a receiver
	// that knows either, or both, accepts it.
	rotated := signature.Sign(now.Unix(), body, "whsec_new", "whsec_old")
	for _, secrets := range [][]string{{"whsec_new"}, {"whsec_old"}, {"whsec_new", "whsec_old"}, {"whsec_x", "whsec_old"}} {
		if err := receiver.Verify(rotated, body, now, secrets...); err != nil {
			t.Errorf("rotation with %v: got %v, want nil", secrets, err)
		}
	}
	if err := receiver.Verify(good, body, now.Add(299*time.Second), "whsec_x", "whsec_a"); err != nil {
		t.Errorf("second secret, 299 s late: got %v, want nil", err)
	}
}

// standardVector is one entry of standard-webhooks-vectors.json.
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

// loadStandardVectors reads the Standard Webhooks vectors, from the
// signature package's copy.
func loadStandardVectors(t *testing.T) []standardVector {
	t.Helper()
	raw, err := os.ReadFile("../signature/testdata/standard-webhooks-vectors.json")
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
			err := receiver.VerifyStandard(v.ID, strconv.FormatInt(v.Timestamp, 10), v.Signature, []byte(v.Body), time.Unix(v.Now, 0), v.Secrets...)
			if got := err == nil; got != v.Valid {
				t.Fatalf("got valid=%t (err %v), want %t", got, err, v.Valid)
			}
			if v.Valid {
				return
			}
			if !errors.Is(err, receiver.ErrInvalidSignature) {
				t.Errorf("got %v, want it to wrap ErrInvalidSignature", err)
			}
			named := false
			for _, s := range signatureSentinels {
				named = named || errors.Is(err, s)
			}
			if !named {
				t.Errorf("got %v, which wraps no signature sentinel", err)
			}
		})
	}
}

// TestHandler_StandardVectors runs every Standard Webhooks vector through
// the Handler, with the vector's clock, under SchemeStandard and under
// SchemeAny with only the Standard Webhooks headers: a valid one answers
// 200, an invalid one 401. Where the vector has the same secret's
// Factuarea-Signature, the request carries it too, as the sender sends it,
// and every scheme accepts it.
func TestHandler_StandardVectors(t *testing.T) {
	db := openSQLite(t)
	if err := receiver.CreateTable(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	for _, v := range loadStandardVectors(t) {
		for _, scheme := range []receiver.Scheme{receiver.SchemeStandard, receiver.SchemeAny, receiver.SchemeFactuarea} {
			if scheme == receiver.SchemeFactuarea && v.Factuarea == "" {
				continue
			}
			t.Run(v.Name+"/"+scheme.String(), func(t *testing.T) {
				h, err := receiver.New(receiver.Config{
					DB:      db,
					Secrets: v.Secrets,
					Scheme:  scheme,
					Handle:  func(context.Context, *sql.Tx, *receiver.Event) error { return nil },
					Now:     func() time.Time { return time.Unix(v.Now, 0) },
					Logger:  slog.New(slog.DiscardHandler),
				})
				if err != nil {
					t.Fatal(err)
				}
				want := http.StatusUnauthorized
				if v.Valid {
					want = http.StatusOK
				}
				headers := map[string]string{
					signature.StandardIDHeader:        v.ID,
					signature.StandardTimestampHeader: strconv.FormatInt(v.Timestamp, 10),
					signature.StandardSignatureHeader: v.Signature,
				}
				if scheme == receiver.SchemeFactuarea {
					headers = map[string]string{signature.HeaderName: v.Factuarea}
					want = http.StatusOK // the Factuarea-Signature is always valid
				}
				if w := deliverHeaders(h, []byte(v.Body), headers); w.Code != want {
					t.Errorf("got %d %q, want %d", w.Code, bodyOf(w), want)
				}
				if v.Factuarea != "" && scheme != receiver.SchemeFactuarea {
					headers[signature.HeaderName] = v.Factuarea
					if scheme == receiver.SchemeAny {
						want = http.StatusOK // Factuarea-Signature decides
					}
					if w := deliverHeaders(h, []byte(v.Body), headers); w.Code != want {
						t.Errorf("with Factuarea-Signature too: got %d %q, want %d", w.Code, bodyOf(w), want)
					}
				}
			})
		}
	}
}
