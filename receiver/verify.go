package receiver

import (
	"fmt"
	"time"

	"github.com/factuarea/webhooks/signature"
)

// Tolerance is how far a signature's timestamp may be from the receiver's
// clock, in either direction: older signatures are refused as replays.
const Tolerance = signature.DefaultTolerance

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
	return verify(header, body, now, Tolerance, secrets)
}

func verify(header string, body []byte, now time.Time, tolerance time.Duration, secrets []string) error {
	if err := signature.Verify(header, body, now, tolerance, secrets...); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidSignature, err)
	}
	return nil
}
