package receiver

import "errors"

// Errors of the kit. They are sentinels so that callers can tell what failed
// with errors.Is; the Handler maps each to its HTTP status.
var (
	// ErrInvalidSignature means the delivery's signature did not verify
	// (401). The error also wraps the signature package's sentinel for the
	// check that failed.
	ErrInvalidSignature = errors.New("receiver: invalid signature")
	// ErrInvalidEvent means the body is not an event: not JSON, or without a
	// canonical UUID id or a type (400).
	ErrInvalidEvent = errors.New("receiver: invalid event")
	// ErrBodyTooLarge means the body is over Config.MaxBodyBytes (413).
	ErrBodyTooLarge = errors.New("receiver: body too large")
	// ErrHandlerPanicked means the HandleFunc panicked; the transaction was
	// rolled back (500).
	ErrHandlerPanicked = errors.New("receiver: handler panicked")
	// ErrUnknownDialect means the dialect could not be detected from the
	// database driver; set Config.Dialect.
	ErrUnknownDialect = errors.New("receiver: unknown SQL dialect")
)
