package signature_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/factuarea/webhooks/signature"
)

// The shared vectors' secrets and bodies (testdata/signature-vectors.json),
// the seeds of FuzzVerify.
const (
	secret1     = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
	secret2     = "whsec_ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1-f4CBgoM"
	compactBody = `{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"invoice.sent","api_version":"2026-09-23","created":1790590561,"livemode":true,"test":false,"correlation_id":"01a0e783-aa84-7b48-8c63-1a5e9d2f4b70","data":{"type":"invoice.sent","object":{"object":"invoice","id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42","number":"FAC-2026-00042","status":"sent","total":"1210.00","currency":"EUR"}}}`
	prettyBody  = `{
  "id": "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31",
  "type": "invoice.sent",
  "api_version": "2026-09-23",
  "created": 1790590561,
  "livemode": true,
  "test": false,
  "correlation_id": "01a0e783-aa84-7b48-8c63-1a5e9d2f4b70",
  "data": {
    "type": "invoice.sent",
    "object": {
      "object": "invoice",
      "id": "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42",
      "number": "FAC-2026-00042",
      "status": "sent",
      "total": "1210.00",
      "currency": "EUR"
    }
  }
}`
	rotationBody = `{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"account.updated","data":{"object":{"object":"account","name":"Fusteria Martí, S.L. — Girona"}}}`
)

// format writes h back as a header, the way Sign writes one.
func format(h signature.Header) string {
	var b strings.Builder
	b.WriteString("t=" + strconv.FormatInt(h.Timestamp, 10))
	for _, v := range h.V1 {
		b.WriteString(",v1=" + hex.EncodeToString(v))
	}
	return b.String()
}

// within reports whether a and b are at most tol apart, without overflow.
func within(a, b, tol int64) bool {
	if a < b {
		a, b = b, a
	}
	return uint64(a)-uint64(b) <= uint64(tol)
}

// matches reports whether one of h's signatures is the one secret makes.
func matches(h signature.Header, secret string, body []byte) bool {
	want := signature.Compute(secret, h.Timestamp, body)
	for _, v := range h.V1 {
		if bytes.Equal(v, want) {
			return true
		}
	}
	return false
}

// FuzzParse checks that Parse never panics, that what it accepts has a
// positive timestamp and 32-byte signatures and survives a format and parse
// round trip, and that such a header verifies exactly when one of its
// signatures is the secret's, and always once the secret's is appended.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		// Well-formed.
		"t=1790590562,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
		"t=1790590562,v1=98e285c96c1426ceb1b3bf0200e03576f5285242746bf7e5f860c7bf83209a93,v1=e3c4d2d52f2e6240acfa5044fd4b5b39655aacea5c232aea7c5801922e030850",
		// Unknown schemes and malformed v1 are ignored.
		"t=1790590562,v0=deadbeef,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
		"t=1790590562,v1=zz,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
		"t=1790590562,v1=835FF71CE3ACACA4BA642B7D52A11C0D4FF91D089777E67E5D4800CCB1D00FDD",
		// Spaces, signs and leading zeros.
		" t=1790590562 , v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd ",
		"t=+1790590562,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
		"t=01790590562,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
		// Extreme timestamps.
		"t=1,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
		"t=9223372036854775807,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
		"t=9223372036854775808,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
		"t=0,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
		"t=-1,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
		// Refused.
		"",
		"   ",
		"t=1790590562",
		"v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
		"t=1790590562,t=1790590563,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
		"t=1790590562,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00f",
		"t=abc,v1=zz,,=,",
		"t=1790590562;v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd",
	} {
		f.Add(seed)
	}
	body := []byte(`{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31"}`)
	f.Fuzz(func(t *testing.T, header string) {
		h, err := signature.Parse(header)
		if err != nil {
			if !errors.Is(err, signature.ErrMissingHeader) && !errors.Is(err, signature.ErrNoTimestamp) && !errors.Is(err, signature.ErrNoSignature) {
				t.Fatalf("Parse(%q): got error %v, not one of the documented sentinels", header, err)
			}
			if !reflect.DeepEqual(h, signature.Header{}) {
				t.Fatalf("Parse(%q): got %+v with error %v, want the zero Header", header, h, err)
			}
			return
		}
		if h.Timestamp <= 0 || len(h.V1) == 0 {
			t.Fatalf("Parse(%q): got %+v, want a positive timestamp and a signature", header, h)
		}
		for _, v := range h.V1 {
			if len(v) != 32 {
				t.Fatalf("Parse(%q): got a %d-byte signature, want 32", header, len(v))
			}
		}
		formatted := format(h)
		h2, err := signature.Parse(formatted)
		if err != nil || !reflect.DeepEqual(h, h2) {
			t.Fatalf("Parse(%q) = %+v; Parse(%q) = %+v, %v", header, h, formatted, h2, err)
		}
		now := time.Unix(h.Timestamp, 0)
		for _, secret := range []string{"whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", ""} {
			err := signature.Verify(header, body, now, 0, secret)
			if matched := matches(h, secret, body); matched != (err == nil) || (err != nil && !errors.Is(err, signature.ErrNoMatch)) {
				t.Errorf("Verify(%q): got %v, want a match %t", header, err, matched)
			}
			if err2 := signature.Verify(formatted, body, now, 0, secret); (err == nil) != (err2 == nil) {
				t.Errorf("Verify(%q) = %v, but Verify(%q) = %v", header, err, formatted, err2)
			}
			good := header + ",v1=" + hex.EncodeToString(signature.Compute(secret, h.Timestamp, body))
			if err := signature.Verify(good, body, now, 0, secret); err != nil {
				t.Errorf("Verify(%q): got %v with the secret's signature appended, want nil", good, err)
			}
		}
	})
}

// FuzzVerify checks Verify against a model of its rules (the header parses,
// its timestamp is within the tolerance of now, one signature is the
// secret's), and that what Sign writes verifies at the moment it was signed
// and not 301 seconds later.
func FuzzVerify(f *testing.F) {
	// single secret, compact body (valid: true)
	f.Add("t=1790590562,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd", compactBody, secret1, int64(1790590562))
	// the same event pretty-printed is a different raw body (valid: true)
	f.Add("t=1790590562,v1=4fb65ebaa435225fb6987fa9cd62c8e025cc32416d5ac2ca9ec4bcc6ca65ad48", prettyBody, secret1, int64(1790590562))
	// signature of the compact body does not verify the pretty-printed one (valid: false)
	f.Add("t=1790590562,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd", prettyBody, secret1, int64(1790590562))
	// rotation overlap: new and old secret both sign; non-ASCII UTF-8 body (valid: true)
	f.Add("t=1790590562,v1=98e285c96c1426ceb1b3bf0200e03576f5285242746bf7e5f860c7bf83209a93,v1=e3c4d2d52f2e6240acfa5044fd4b5b39655aacea5c232aea7c5801922e030850", rotationBody, secret2, int64(1790590562))
	// rotation overlap verified with the old secret (valid: true)
	f.Add("t=1790590562,v1=98e285c96c1426ceb1b3bf0200e03576f5285242746bf7e5f860c7bf83209a93,v1=e3c4d2d52f2e6240acfa5044fd4b5b39655aacea5c232aea7c5801922e030850", rotationBody, secret1, int64(1790590562))
	// wrong secret (valid: false)
	f.Add("t=1790590562,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd", compactBody, secret2, int64(1790590562))
	// timestamp changed after signing (valid: false)
	f.Add("t=1790590563,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd", compactBody, secret1, int64(1790590563))
	// unknown scheme ignored, v1 still checked (valid: true)
	f.Add("t=1790590562,v0=deadbeef,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd", compactBody, secret1, int64(1790590562))
	// no v1 at all (valid: false)
	f.Add("t=1790590562,v0=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd", compactBody, secret1, int64(1790590562))
	// no timestamp (valid: false)
	f.Add("v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd", compactBody, secret1, int64(1790590562))
	// truncated signature (valid: false)
	f.Add("t=1790590562,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00f", compactBody, secret1, int64(1790590562))
	// empty header (valid: false)
	f.Add("", compactBody, secret1, int64(1790590562))
	// garbage header (valid: false)
	f.Add("t=abc,v1=zz,,=,", compactBody, secret1, int64(1790590562))
	// verifier clock 299 s after t: inside the 300 s tolerance (valid: true)
	f.Add("t=1790590562,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd", compactBody, secret1, int64(1790590861))
	// verifier clock 301 s after t: stale, refused (valid: false)
	f.Add("t=1790590562,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd", compactBody, secret1, int64(1790590863))
	// verifier clock 301 s before t: from the future, refused (valid: false)
	f.Add("t=1790590562,v1=835ff71ce3acaca4ba642b7d52a11c0d4ff91d089777e67e5d4800ccb1d00fdd", compactBody, secret1, int64(1790590261))
	// A timestamp 292 years away from now: the distance overflowed a
	// time.Duration and could wrap into the tolerance (found by fuzzing,
	// testdata/fuzz/FuzzVerify/f1faa8b25472d92a).
	f.Add("t=11100000000,v1="+strings.Repeat("0", 64), "0", "0", int64(1790590572))
	f.Add("t=9223372036854775807,v1="+strings.Repeat("0", 64), "", "", int64(1))
	f.Fuzz(func(t *testing.T, header, body, secret string, now int64) {
		err := signature.Verify(header, []byte(body), time.Unix(now, 0), 0, secret)
		h, perr := signature.Parse(header)
		var want error
		switch {
		case perr != nil:
			want = perr
		case !within(now, h.Timestamp, 300):
			want = signature.ErrTimestampOutOfTolerance
		case !matches(h, secret, []byte(body)):
			want = signature.ErrNoMatch
		}
		if !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Fatalf("Verify(%q, now %d): got %v, want %v", header, now, err, want)
		}

		if now <= 0 {
			return // not a timestamp Sign can write
		}
		signed := signature.Sign(now, []byte(body), secret, secret+"-old")
		if err := signature.Verify(signed, []byte(body), time.Unix(now, 0), 0, secret); err != nil {
			t.Fatalf("Verify(Sign(%d)) with the new secret: got %v, want nil", now, err)
		}
		if err := signature.Verify(signed, []byte(body), time.Unix(now, 0), 0, secret+"-old"); err != nil {
			t.Fatalf("Verify(Sign(%d)) with the old secret: got %v, want nil", now, err)
		}
		if err := signature.Verify(signed, []byte(body+" "), time.Unix(now, 0), 0, secret); !errors.Is(err, signature.ErrNoMatch) {
			t.Fatalf("Verify(Sign(%d)) of another body: got %v, want %v", now, err, signature.ErrNoMatch)
		}
		if now < 1<<62 {
			if err := signature.Verify(signed, []byte(body), time.Unix(now+301, 0), 0, secret); !errors.Is(err, signature.ErrTimestampOutOfTolerance) {
				t.Fatalf("Verify(Sign(%d)) 301 s later: got %v, want %v", now, err, signature.ErrTimestampOutOfTolerance)
			}
		}
	})
}
