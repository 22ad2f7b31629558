package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
)

// The API's error codes: the "code" of an error answer, and of a refused
// batch item. They are the service's (SPEC sections 8, 13 and 16), spelt
// exactly as on the wire.
const (
	// 400: the request is malformed.
	CodeInvalidRequest    = "invalid_request"
	CodeInvalidJSON       = "invalid_json"
	CodeUnknownField      = "unknown_field"
	CodeURLNotAllowed     = "url_not_allowed"
	CodeWrongResendAction = "wrong_resend_action"
	// 401: no key, or an unknown or revoked one.
	CodeUnauthorized = "unauthorized"
	// 403: an admin-only call made with an account key.
	CodeForbidden = "forbidden"
	// 404: missing, or another tenant's (the two are indistinguishable).
	CodeNotFound = "not_found"
	// 405
	CodeMethodNotAllowed = "method_not_allowed"
	// 409: conflicts with the current state.
	CodeIdempotencyKeyReused  = "idempotency_key_reused"
	CodeNIFTaken              = "nif_taken"
	CodeEventTypeExists       = "event_type_exists"
	CodeDeliveryNotResendable = "delivery_not_resendable"
	CodeOutsideResendWindow   = "outside_resend_window"
	CodeEndpointDisabled      = "endpoint_disabled"
	// 413: a request body over 256 KiB (4 MiB for a batch).
	CodeRequestTooLarge = "request_too_large"
	// 422: well-formed but not allowed.
	CodeUnprocessable       = "unprocessable"
	CodeInvalidProvisioning = "invalid_provisioning"
	CodeInvalidNIF          = "invalid_nif"
	CodeCompanyRequired     = "company_required"
	CodeUnknownCompany      = "unknown_company"
	CodeUnknownAccount      = "unknown_account"
	CodeSecretNotCompatible = "secret_not_compatible"
	CodeUnknownEventType    = "unknown_event_type"
	CodeInvalidEventData    = "invalid_event_data"
	// 500
	CodeInternalError = "internal_error"
	// 503: the service cannot reach its database; try again after
	// Retry-After.
	CodeServiceUnavailable = "service_unavailable"
)

// Error is an error the API answered: the HTTP status, and the code and
// message of its {"error": {"code", "message"}} body. A refused batch item
// carries one too, with the status the item was refused with. Use
// [errors.As] to reach it through the wrapping of a call that gave up
// after retries, or [IsCode].
//
// An answer that is not the API's error object (a proxy's HTML page, say)
// has an empty Code and a Message that says so.
type Error struct {
	// StatusCode is the HTTP status of the answer (or of the batch item).
	StatusCode int
	// Code is one of the Code constants; empty when the answer was not an
	// API error object.
	Code string
	// Message is the API's message, meant for a person.
	Message string
}

// Error returns the status, the code and the message.
func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("webhooks api: %d: %s", e.StatusCode, e.Message)
	}
	return fmt.Sprintf("webhooks api: %d %s: %s", e.StatusCode, e.Code, e.Message)
}

// IsCode reports whether err is, or wraps, an [*Error] with code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// StatusCode returns the HTTP status of the [*Error] err is or wraps, and 0
// when err is not an API error (a connection error, a timeout, a cancelled
// context) or is nil.
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// errorDetail is the API's error object.
type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// apiError reads the error of a non-2xx answer.
func apiError(status int, header http.Header, body []byte) *Error {
	var out struct {
		Error *errorDetail `json:"error"`
	}
	if err := json.Unmarshal(body, &out); err == nil && out.Error != nil && out.Error.Code != "" {
		return &Error{StatusCode: status, Code: out.Error.Code, Message: out.Error.Message}
	}
	kind := "no body"
	if len(body) > 0 {
		kind = "a body that is not an API error object"
		if ct, _, err := mime.ParseMediaType(header.Get("Content-Type")); err == nil {
			kind += " (" + ct + ")"
		}
	}
	return &Error{StatusCode: status, Message: fmt.Sprintf("%s, with %s", http.StatusText(status), kind)}
}
