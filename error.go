package webhooks

import (
	"errors"
	"fmt"
	"time"
)

// Error codes. They are part of the public API (the "code" of an error
// response), so they follow the spec exactly. Each maps to one HTTP status in
// internal/httpapi.
const (
	// 400: the request is malformed.
	EINVALID       = "invalid_request"
	EINVALIDJSON   = "invalid_json"
	EUNKNOWNFIELD  = "unknown_field"
	EURLNOTALLOWED = "url_not_allowed"
	EWRONGRESEND   = "wrong_resend_action"
	// 401
	EUNAUTHORIZED = "unauthorized"
	// 403: an admin-only route called with an account key.
	EFORBIDDEN = "forbidden"
	// 404: missing, or another tenant's (the two are indistinguishable).
	ENOTFOUND = "not_found"
	// 405
	EMETHOD = "method_not_allowed"
	// 409: conflicts with the current state.
	EIDEMPOTENCYREUSED = "idempotency_key_reused"
	ENIFTAKEN          = "nif_taken"
	EEVENTTYPEEXISTS   = "event_type_exists"
	ENOTRESENDABLE     = "delivery_not_resendable"
	EOUTSIDEWINDOW     = "outside_resend_window"
	EENDPOINTDISABLED  = "endpoint_disabled"
	EEVENTERASED       = "event_erased"
	// EHASMANAGEDACCOUNTS refuses the deletion of an account that
	// provisioned an account that still exists.
	EHASMANAGEDACCOUNTS = "account_has_managed_accounts"
	// 413
	ETOOLARGE = "request_too_large"
	// 422: well-formed but not allowed.
	EUNPROCESSABLE       = "unprocessable"
	EINVALIDPROVISIONING = "invalid_provisioning"
	EINVALIDNIF          = "invalid_nif"
	ECOMPANYREQUIRED     = "company_required"
	EUNKNOWNCOMPANY      = "unknown_company"
	EUNKNOWNACCOUNT      = "unknown_account"
	ESECRETNOTCOMPATIBLE = "secret_not_compatible"
	EUNKNOWNEVENTTYPE    = "unknown_event_type"
	EINVALIDEVENTDATA    = "invalid_event_data"
	// 500: anything that is not an *Error.
	EINTERNAL = "internal_error"
	// 503
	EUNAVAILABLE = "service_unavailable"
)

// Error is an error the service reports to its callers: a code from the list
// above and a message a person can act on. Any other error is internal.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("webhooks error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err if it is, or wraps, an *Error, and
// EINTERNAL otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return EINTERNAL
}

// ErrUnavailable is the error of a database that does not answer (down,
// restarting, unreachable, out of connections): the caller is told to try
// again shortly (503 with Retry-After), never that the service failed.
// Stores wrap the database's error with it: fmt.Errorf("%w: %w",
// ErrUnavailable, err).
var ErrUnavailable = &Error{Code: EUNAVAILABLE, Message: "The service cannot reach its database right now: try again in a moment."}

// RetryAfterUnavailable is how long a caller told ErrUnavailable is asked
// to wait (Retry-After): about what a database restart or a failover
// takes.
const RetryAfterUnavailable = 5 * time.Second

// NotFound is the error of an object that does not exist, or that belongs
// to another tenant: the two answers are the same, so that ids cannot be
// probed.
func NotFound(kind string) *Error {
	return Errorf(ENOTFOUND, "No such %s.", kind)
}

// ErrorMessage returns the message of err if it is an *Error, and a generic
// message otherwise, so that internal details never reach a caller.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}
