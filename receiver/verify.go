package receiver

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/factuarea/webhooks/signature"
)

// Tolerance is how far a signature's timestamp may be from the receiver's
// clock, in either direction: older signatures are refused as replays.
const Tolerance = signature.DefaultTolerance

// Scheme is the signature scheme a Handler verifies.
type Scheme int

// The schemes.
const (
	// SchemeAny verifies Factuarea-Signature when the request carries it,
	// and the Standard Webhooks headers otherwise. A Factuarea-Signature
	// that does not verify is refused, whatever the other headers say: the
	// sender always sends it, so a delivery whose Factuarea-Signature fails
	// is not genuine, and checking the other scheme could only accept what
	// the first refused.
	SchemeAny Scheme = iota
	// SchemeFactuarea verifies Factuarea-Signature only.
	SchemeFactuarea
	// SchemeStandard verifies the Standard Webhooks headers only
	// (webhook-id, webhook-timestamp, webhook-signature), which the sender
	// adds for an endpoint with standard_webhooks on. webhook-id must be the
	// body's event id.
	SchemeStandard
)

// String returns "any", "factuarea" or "standard".
func (s Scheme) String() string {
	switch s {
	case SchemeAny:
		return "any"
	case SchemeFactuarea:
		return "factuarea"
	case SchemeStandard:
		return "standard"
	}
	return fmt.Sprintf("Scheme(%d)", int(s))
}

// Verify checks the Factuarea-Signature header value against the raw request
// body, as received, before any JSON decoding: re-encoding changes the bytes
// and breaks the signature. It accepts the delivery when the timestamp is
// within [Tolerance] of now and any v1 signature matches any of the secrets
// (pass the old and the new secret during a rotation). Signatures are
// compared in constant time.
//
// A failure wraps [ErrInvalidSignature] and the signature package's sentinel
// that names the check that failed: [signature.ErrMissingHeader],
// [signature.ErrNoTimestamp], [signature.ErrNoSignature],
// [signature.ErrTimestampOutOfTolerance], [signature.ErrNoMatch] or
// [signature.ErrNoSecret].
func Verify(header string, body []byte, now time.Time, secrets ...string) error {
	if err := signature.Verify(header, body, now, Tolerance, secrets...); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidSignature, err)
	}
	return nil
}

// VerifyStandard checks the Standard Webhooks headers' values (webhook-id,
// webhook-timestamp and webhook-signature) against the raw request body, as
// Verify does Factuarea-Signature: the timestamp must be within [Tolerance]
// of now, and any "v1," signature must match any of the secrets, compared
// in constant time. The key is the standard base64 decoding of what follows
// "whsec_"; a secret made before that format (see
// [signature.StandardCompatible]) cannot verify these headers.
//
// webhook-id is the event id. The signature binds it to the body, but only
// the caller can check that it is the body's id: do, after [ParseEvent], as
// the Handler does, because the id is the deduplication key.
//
// A failure wraps [ErrInvalidSignature] and the signature package's sentinel
// of the check that failed, as Verify's does, or
// [signature.ErrSecretNotStandard] when no secret can be a Standard
// Webhooks key.
func VerifyStandard(id, timestamp, sig string, body []byte, now time.Time, secrets ...string) error {
	err := signature.VerifyStandard(id, timestamp, sig, body, now, Tolerance, secrets...)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, signature.ErrMissingHeader):
		var missing []string
		if strings.TrimSpace(id) == "" {
			missing = append(missing, signature.StandardIDHeader)
		}
		if strings.TrimSpace(sig) == "" {
			missing = append(missing, signature.StandardSignatureHeader)
		}
		return fmt.Errorf("%w: %w: %s", ErrInvalidSignature, err, strings.Join(missing, ", "))
	}
	return fmt.Errorf("%w: %w", ErrInvalidSignature, err)
}

// verifyRequest checks a request's signature by scheme and returns the
// scheme it checked: SchemeFactuarea or SchemeStandard.
func verifyRequest(scheme Scheme, header http.Header, body []byte, now time.Time, secrets []string) (Scheme, error) {
	if scheme == SchemeAny {
		scheme = SchemeStandard
		if _, ok := header[signature.HeaderName]; ok {
			scheme = SchemeFactuarea
		} else if !hasStandardHeaders(header) {
			return SchemeAny, fmt.Errorf("%w: %w: neither %s nor %s", ErrInvalidSignature, signature.ErrMissingHeader,
				signature.HeaderName, signature.StandardSignatureHeader)
		}
	}
	if scheme == SchemeStandard {
		return scheme, VerifyStandard(header.Get(signature.StandardIDHeader), header.Get(signature.StandardTimestampHeader),
			header.Get(signature.StandardSignatureHeader), body, now, secrets...)
	}
	return scheme, Verify(header.Get(signature.HeaderName), body, now, secrets...)
}

// hasStandardHeaders reports whether any of the Standard Webhooks headers is
// there.
func hasStandardHeaders(h http.Header) bool {
	for _, name := range []string{signature.StandardIDHeader, signature.StandardTimestampHeader, signature.StandardSignatureHeader} {
		if _, ok := h[http.CanonicalHeaderKey(name)]; ok {
			return true
		}
	}
	return false
}
