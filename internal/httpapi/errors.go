package httpapi

import (
	"net/http"
	"strconv"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// statuses maps every error code to its HTTP status, in one table.
var statuses = map[string]int{
	webhooks.EINVALID:             http.StatusBadRequest,
	webhooks.EINVALIDJSON:         http.StatusBadRequest,
	webhooks.EUNKNOWNFIELD:        http.StatusBadRequest,
	webhooks.EURLNOTALLOWED:       http.StatusBadRequest,
	webhooks.EWRONGRESEND:         http.StatusBadRequest,
	webhooks.EUNAUTHORIZED:        http.StatusUnauthorized,
	webhooks.EFORBIDDEN:           http.StatusForbidden,
	webhooks.ENOTFOUND:            http.StatusNotFound,
	webhooks.EMETHOD:              http.StatusMethodNotAllowed,
	webhooks.EIDEMPOTENCYREUSED:   http.StatusConflict,
	webhooks.ENIFTAKEN:            http.StatusConflict,
	webhooks.EEVENTTYPEEXISTS:     http.StatusConflict,
	webhooks.ENOTRESENDABLE:       http.StatusConflict,
	webhooks.EOUTSIDEWINDOW:       http.StatusConflict,
	webhooks.EENDPOINTDISABLED:    http.StatusConflict,
	webhooks.EEVENTERASED:         http.StatusConflict,
	webhooks.EHASMANAGEDACCOUNTS:  http.StatusConflict,
	webhooks.ETOOLARGE:            http.StatusRequestEntityTooLarge,
	webhooks.EUNPROCESSABLE:       http.StatusUnprocessableEntity,
	webhooks.EINVALIDPROVISIONING: http.StatusUnprocessableEntity,
	webhooks.EINVALIDNIF:          http.StatusUnprocessableEntity,
	webhooks.ECOMPANYREQUIRED:     http.StatusUnprocessableEntity,
	webhooks.EUNKNOWNCOMPANY:      http.StatusUnprocessableEntity,
	webhooks.EUNKNOWNACCOUNT:      http.StatusUnprocessableEntity,
	webhooks.ESECRETNOTCOMPATIBLE: http.StatusUnprocessableEntity,
	webhooks.EUNKNOWNEVENTTYPE:    http.StatusUnprocessableEntity,
	webhooks.EINVALIDEVENTDATA:    http.StatusUnprocessableEntity,
	webhooks.EINTERNAL:            http.StatusInternalServerError,
	webhooks.EUNAVAILABLE:         http.StatusServiceUnavailable,
}

// StatusOf returns the HTTP status of an error code.
func StatusOf(code string) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// retryAfter is a 503's Retry-After, in seconds.
var retryAfter = strconv.Itoa(int(webhooks.RetryAfterUnavailable / time.Second))

// error is the one exit for errors: the spec's JSON shape, and a log line
// for internal errors and an unavailable database only (whose details
// never reach the caller).
func (s *Server) error(w http.ResponseWriter, r *http.Request, err error) {
	status, detail := s.failure(r, err)
	switch detail.Code {
	case webhooks.EUNAVAILABLE:
		w.Header().Set("Retry-After", retryAfter)
	case webhooks.EUNAUTHORIZED:
		w.Header().Set("WWW-Authenticate", `Bearer realm="webhooks"`)
	}
	writeJSON(w, status, errorJSON{detail})
}

// failure returns the status and the error object err answers, and logs
// err if it is an internal error or an unavailable database. It is the
// error exit's, and a batch's for each of its items.
func (s *Server) failure(r *http.Request, err error) (int, errorDetail) {
	code := webhooks.ErrorCode(err)
	switch code {
	case webhooks.EINTERNAL:
		s.Logger.Error("http: internal error", "method", r.Method, "route", r.Pattern, "err", err)
	case webhooks.EUNAVAILABLE:
		s.Logger.Warn("http: service unavailable", "method", r.Method, "route", r.Pattern, "err", err)
	}
	return StatusOf(code), errorDetail{code, webhooks.ErrorMessage(err)}
}

// errorDetail is the error object: {"code": …, "message": …}.
type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// errorJSON is an error answer's body.
type errorJSON struct {
	Error errorDetail `json:"error"`
}

func errorBody(code, message string) any { return errorJSON{errorDetail{code, message}} }
