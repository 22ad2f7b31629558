package probe

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/factuarea/webhooks/signature"
)

// readVectors decodes the "vectors" of one of the published vector files,
// from the signature package's copy.
func readVectors(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile("../../signature/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &struct {
		Vectors any `json:"vectors"`
	}{v}); err != nil {
		t.Fatal(err)
	}
}

// probeRequestHeaders signs body as the probe does, at the vector's time
// with the vector's secrets, and returns the headers of the request it
// would send.
func probeRequestHeaders(t *testing.T, cfg Config, eventID string, body []byte, at int64) map[string]string {
	t.Helper()
	cfg.URL = "http://127.0.0.1:1/webhook"
	p, err := newProber(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := p.newRequest(context.Background(), p.signed(eventID, body, time.Unix(at, 0)))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		signature.HeaderName:              req.Header.Get(signature.HeaderName),
		signature.StandardIDHeader:        req.Header.Get(signature.StandardIDHeader),
		signature.StandardTimestampHeader: req.Header.Get(signature.StandardTimestampHeader),
		signature.StandardSignatureHeader: req.Header.Get(signature.StandardSignatureHeader),
	}
}

// TestSign_Vectors checks the probe's Factuarea-Signature against every
// valid vector of signature-vectors.json: signed with the vector's secret
// at its time, it is "t=<t>,v1=<one of the vector's v1>".
func TestSign_Vectors(t *testing.T) {
	var vectors []struct {
		Name      string `json:"name"`
		Secret    string `json:"secret"`
		Timestamp int64  `json:"timestamp"`
		Body      string `json:"body"`
		Header    string `json:"header"`
		Valid     bool   `json:"valid"`
	}
	readVectors(t, "signature-vectors.json", &vectors)
	checked := 0
	for _, v := range vectors {
		if !v.Valid {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			h, err := signature.Parse(v.Header)
			if err != nil {
				t.Fatal(err)
			}
			got := probeRequestHeaders(t, Config{Secrets: []string{v.Secret}}, "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31", []byte(v.Body), h.Timestamp)
			ts, sig, _ := strings.Cut(got[signature.HeaderName], ",")
			if ts != "t="+strconv.FormatInt(h.Timestamp, 10) || !slices.Contains(strings.Split(v.Header, ","), sig) {
				t.Errorf("Factuarea-Signature: got %q, want t=%d and one of the v1 of %q", got[signature.HeaderName], h.Timestamp, v.Header)
			}
			if got[signature.StandardSignatureHeader] != "" {
				t.Errorf("webhook-signature: got %q without StandardWebhooks, want none", got[signature.StandardSignatureHeader])
			}
		})
		checked++
	}
	if checked == 0 {
		t.Fatal("no valid vector")
	}
}

// TestSign_StandardVectors checks the probe's Standard Webhooks headers
// against every valid vector of standard-webhooks-vectors.json: webhook-id
// is the event id, webhook-timestamp the vector's, webhook-signature one of
// the vector's entries (exactly the vector's when it has one), and the
// Factuarea-Signature of the same request the vector's.
func TestSign_StandardVectors(t *testing.T) {
	var vectors []struct {
		Name      string   `json:"name"`
		Secrets   []string `json:"secrets"`
		ID        string   `json:"id"`
		Timestamp int64    `json:"timestamp"`
		Body      string   `json:"body"`
		Signature string   `json:"signature"`
		Valid     bool     `json:"valid"`
		Factuarea string   `json:"factuarea_signature"`
	}
	readVectors(t, "standard-webhooks-vectors.json", &vectors)
	checked := 0
	for _, v := range vectors {
		if !v.Valid {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			got := probeRequestHeaders(t, Config{Secrets: v.Secrets, StandardWebhooks: true}, v.ID, []byte(v.Body), v.Timestamp)
			if got[signature.StandardIDHeader] != v.ID {
				t.Errorf("webhook-id: got %q, want %q", got[signature.StandardIDHeader], v.ID)
			}
			if want := strconv.FormatInt(v.Timestamp, 10); got[signature.StandardTimestampHeader] != want {
				t.Errorf("webhook-timestamp: got %q, want %q", got[signature.StandardTimestampHeader], want)
			}
			sig := got[signature.StandardSignatureHeader]
			entries := strings.Split(v.Signature, " ")
			if !slices.Contains(entries, sig) {
				t.Errorf("webhook-signature: got %q, want one of %q", sig, entries)
			}
			if v.Factuarea != "" && got[signature.HeaderName] != v.Factuarea {
				t.Errorf("Factuarea-Signature: got %q, want %q", got[signature.HeaderName], v.Factuarea)
			}
		})
		checked++
	}
	if checked == 0 {
		t.Fatal("no valid vector")
	}
}
