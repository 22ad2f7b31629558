package signature

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// HeaderName is the HTTP header that carries the signature.
const HeaderName = "Factuarea-Signature"

// DefaultTolerance is how far a signature's timestamp may be from the
// verifier's clock, in either direction, before it is refused as a replay.
const DefaultTolerance = 300 * time.Second

// SecretPrefix starts every endpoint secret.
const SecretPrefix = "whsec_"

// Errors returned by Parse and Verify. They are sentinels so that callers can
// tell which check failed with errors.Is.
var (
	// ErrMissingHeader means the header is empty.
	ErrMissingHeader = errors.New("signature: header is missing")
	// ErrNoTimestamp means the header has no valid t= element.
	ErrNoTimestamp = errors.New("signature: header has no valid timestamp")
	// ErrNoSignature means the header has no well-formed v1= element.
	ErrNoSignature = errors.New("signature: header has no v1 signature")
	// ErrTimestampOutOfTolerance means t is too far from the verifier's clock.
	ErrTimestampOutOfTolerance = errors.New("signature: timestamp is outside the tolerance")
	// ErrNoMatch means no v1 matches any of the secrets.
	ErrNoMatch = errors.New("signature: no v1 signature matches the secret")
	// ErrNoSecret means Verify was called without a secret.
	ErrNoSecret = errors.New("signature: no secret to verify with")
)

// Header is a parsed Factuarea-Signature header.
type Header struct {
	// Timestamp is the t= element, unix seconds of the attempt.
	Timestamp int64
	// V1 holds the decoded v1= signatures in header order.
	V1 [][]byte
}

// NewSecret returns a new endpoint secret: "whsec_" and 32 random bytes in
// standard base64 with padding (44 characters), which Standard Webhooks
// libraries decode as their key.
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("signature: new secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:]), nil
}

// Compute returns the v1 signature of body at timestamp t with secret, as raw
// HMAC bytes.
func Compute(secret string, t int64, body []byte) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	var ts [20]byte
	mac.Write(strconv.AppendInt(ts[:0], t, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return mac.Sum(nil)
}

// Sign returns the header value for body at timestamp t: one v1 per secret,
// in the order given (the new secret first during a rotation).
func Sign(t int64, body []byte, secrets ...string) string {
	b := make([]byte, 0, 24+len(secrets)*68)
	b = append(b, "t="...)
	b = strconv.AppendInt(b, t, 10)
	for _, s := range secrets {
		b = append(b, ",v1="...)
		b = hex.AppendEncode(b, Compute(s, t, body))
	}
	return string(b)
}

// Parse reads a header value. Elements it does not know (other schemes, such
// as v0=) are ignored, so that new schemes can be added without breaking
// receivers; malformed v1 values are ignored too. It fails when no timestamp
// or no well-formed v1 remains.
func Parse(header string) (Header, error) {
	var h Header
	if strings.TrimSpace(header) == "" {
		return h, ErrMissingHeader
	}
	haveT := false
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 || haveT {
				return Header{}, ErrNoTimestamp
			}
			h.Timestamp, haveT = n, true
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil || len(sig) != sha256.Size {
				continue
			}
			h.V1 = append(h.V1, sig)
		}
	}
	if !haveT {
		return Header{}, ErrNoTimestamp
	}
	if len(h.V1) == 0 {
		return Header{}, ErrNoSignature
	}
	return h, nil
}

// Verify checks header against the raw body: the timestamp must be within
// tolerance of now, and at least one v1 must match one of the secrets. All
// signatures are compared in constant time. A tolerance of zero means
// DefaultTolerance.
func Verify(header string, body []byte, now time.Time, tolerance time.Duration, secrets ...string) error {
	if len(secrets) == 0 {
		return ErrNoSecret
	}
	h, err := Parse(header)
	if err != nil {
		return err
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if !within(h.Timestamp, now.Unix(), tolerance) {
		return ErrTimestampOutOfTolerance
	}
	// Every pair is compared, matching or not, so the time taken does not
	// depend on which signature matched.
	matched := false
	for _, s := range secrets {
		want := Compute(s, h.Timestamp, body)
		for _, got := range h.V1 {
			if hmac.Equal(got, want) {
				matched = true
			}
		}
	}
	if !matched {
		return ErrNoMatch
	}
	return nil
}
