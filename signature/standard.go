package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers (https://www.standardwebhooks.com), sent
// beside Factuarea-Signature to an endpoint that asks for them.
const (
	StandardIDHeader        = "webhook-id"
	StandardTimestampHeader = "webhook-timestamp"
	StandardSignatureHeader = "webhook-signature"
)

// ErrSecretNotStandard means a secret's part after "whsec_" is not standard
// base64, so Standard Webhooks libraries cannot use it as a key. Secrets made
// before the format changed (unpadded base64url) are such; rotating gives a
// compatible one.
var ErrSecretNotStandard = errors.New("signature: the secret is not standard base64 after whsec_")

// StandardKey returns the Standard Webhooks HMAC key of a secret: the
// standard-base64 decoding of what follows "whsec_", which must be padded
// and canonical (base64.StdEncoding.Strict()), with no line break.
// Factuarea-Signature keys with the whole string instead, so one secret
// serves both schemes.
func StandardKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	// The decoder skips line breaks, which standard base64 does not have:
	// a secret with one is refused, as the other kits refuse it.
	if !ok || rest == "" || strings.ContainsAny(rest, "\r\n") {
		return nil, ErrSecretNotStandard
	}
	key, err := base64.StdEncoding.Strict().DecodeString(rest)
	if err != nil || len(key) == 0 {
		return nil, ErrSecretNotStandard
	}
	return key, nil
}

// StandardCompatible reports whether secret can sign Standard Webhooks
// headers.
func StandardCompatible(secret string) bool {
	_, err := StandardKey(secret)
	return err == nil
}

// ComputeStandard returns the raw Standard Webhooks HMAC of body for the
// message id at timestamp t.
func ComputeStandard(key []byte, id string, t int64, body []byte) []byte {
	mac := hmac.New(sha256.New, key)
	var ts [20]byte
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(ts[:0], t, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return mac.Sum(nil)
}

// SignStandard returns the webhook-signature header value for body: one
// "v1,<base64>" per secret, separated by a space, in the order given (the new
// secret first during a rotation). It fails if a secret is not compatible.
func SignStandard(id string, t int64, body []byte, secrets ...string) (string, error) {
	b := make([]byte, 0, len(secrets)*48)
	for i, s := range secrets {
		key, err := StandardKey(s)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, "v1,"...)
		b = base64.StdEncoding.AppendEncode(b, ComputeStandard(key, id, t, body))
	}
	return string(b), nil
}

// VerifyStandard checks the three Standard Webhooks headers against the raw
// body: the timestamp must be within tolerance of now (zero means
// DefaultTolerance), and at least one "v1," signature must match one of the
// secrets, compared in constant time. Entries of other versions are ignored.
// It returns the same sentinels as Verify, and ErrSecretNotStandard when no
// secret can be used as a Standard Webhooks key.
func VerifyStandard(id, timestamp, header string, body []byte, now time.Time, tolerance time.Duration, secrets ...string) error {
	if len(secrets) == 0 {
		return ErrNoSecret
	}
	if strings.TrimSpace(header) == "" || id == "" {
		return ErrMissingHeader
	}
	ts, err := strconv.ParseInt(strings.TrimSpace(timestamp), 10, 64)
	if err != nil || ts <= 0 {
		return ErrNoTimestamp
	}
	var sigs [][]byte
	for _, part := range strings.Fields(header) {
		v, ok := strings.CutPrefix(part, "v1,")
		if !ok {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(sig) != sha256.Size {
			continue
		}
		sigs = append(sigs, sig)
	}
	if len(sigs) == 0 {
		return ErrNoSignature
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if !within(ts, now.Unix(), tolerance) {
		return ErrTimestampOutOfTolerance
	}
	matched, usable := false, false
	for _, s := range secrets {
		key, err := StandardKey(s)
		if err != nil {
			continue
		}
		usable = true
		want := ComputeStandard(key, id, ts, body)
		for _, got := range sigs {
			if hmac.Equal(got, want) {
				matched = true
			}
		}
	}
	switch {
	case !usable:
		return ErrSecretNotStandard
	case !matched:
		return ErrNoMatch
	}
	return nil
}

// within reports whether unix seconds t and n are at most tolerance apart,
// computed as an unsigned difference: a timestamp centuries away would
// overflow a time.Duration and could wrap into the tolerance.
func within(t, n int64, tolerance time.Duration) bool {
	if t < n {
		t, n = n, t
	}
	return uint64(t)-uint64(n) <= uint64(tolerance/time.Second)
}
