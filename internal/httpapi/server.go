// Package httpapi is the JSON API of SPEC section 13 on net/http's
// method-and-path patterns. Each handler decodes its request, calls the
// use case in internal/app with the caller its key names, and writes what
// that returns; every error goes through one exit (see errors.go).
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/tracing"
)

// MaxBodyBytes bounds every request body but a batch's; a larger one
// answers 413.
const MaxBodyBytes = 256 << 10

// MaxBatchBodyBytes bounds the body of POST /v1/events/batch. A batch is
// read whole before its items are decoded, and each item is then copied
// once more as it is validated, so the bound is what one request may hold
// in memory: 4 MiB lets 100 events of 40 KiB each through (an invoice
// event is 1 to 2 KiB), where 100 events at MaxBodyBytes would be 25 MiB.
const MaxBatchBodyBytes = 4 << 20

// Server serves the API.
type Server struct {
	App *app.App
	// Ping checks that the database answers (GET /readyz).
	Ping func(ctx context.Context) error
	Now  func() time.Time
	// Extra routes (metrics, portal) mounted beside the API.
	Extra  map[string]http.Handler
	Logger *slog.Logger
	// Observe, if set, is called after each request with its route pattern,
	// status and duration (for metrics).
	Observe func(pattern string, status int, d time.Duration)
	// Tracing, if set, joins a registration's span to the trace of the
	// platform's request (its traceparent header).
	Tracing *tracing.Tracing
}

// Handler returns the API's handler.
func (s *Server) Handler() http.Handler {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	s.registerAccountRoutes(mux)
	s.registerCompanyRoutes(mux)
	s.registerEventRoutes(mux)
	s.registerEventTypeRoutes(mux)
	// "/v1" holds the platform endpoints (admin key only), which receive
	// the operational events.
	for _, parent := range []string{"/v1/companies/{company}", "/v1/accounts/{account}", "/v1"} {
		s.registerEndpointRoutes(mux, parent)
		s.registerDeliveryRoutes(mux, parent)
		if parent != "/v1" {
			// Relay endpoints belong to a company or an account.
			s.registerRelayRoutes(mux, parent)
		}
	}
	s.registerHealthRoutes(mux)
	s.registerIndexRoutes(mux)
	s.registerDocRoutes(mux)
	s.registerPortalRoutes(mux)
	for pattern, h := range s.Extra {
		mux.Handle(pattern, h)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// This catch-all matches every method, so the mux never answers
		// 405 by itself: a path served with other methods is told here.
		if allow := allowedMethods(mux, r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.error(w, r, webhooks.Errorf(webhooks.EMETHOD, "%s is not allowed on %s; allowed: %s.", r.Method, r.URL.Path, strings.Join(allow, ", ")))
			return
		}
		s.error(w, r, webhooks.Errorf(webhooks.ENOTFOUND, "No route %s %s.", r.Method, r.URL.Path))
	})
	return s.middleware(mux)
}

// allowedMethods returns the methods mux serves r's path with through a
// route of its own (not the catch-all).
func allowedMethods(mux *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	return allow
}

// handler is an API route's handler: it gets the caller its key names,
// and any error it returns goes through the one error exit.
type handler func(w http.ResponseWriter, r *http.Request, c app.Caller) error

// public registers a route that needs no key (the index, health checks,
// the API reference). Like every route that is not a list, it refuses
// query parameters.
func (s *Server) public(mux *http.ServeMux, pattern string, h http.HandlerFunc) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := noQuery(r); err != nil {
			s.error(w, r, err)
			return
		}
		h(w, r)
	})
}

// noQuery refuses the query parameters of a route that takes none.
func noQuery(r *http.Request) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	return webhooks.Errorf(webhooks.EUNKNOWNFIELD, "%s %s takes no query parameters.", r.Method, r.Pattern)
}

// handle registers a route that takes no query parameters: any it is sent
// is refused, so that a misplaced filter is an error instead of ignored.
func (s *Server) handle(mux *http.ServeMux, pattern string, h handler) {
	mux.HandleFunc(pattern, s.serve(h, false, MaxBodyBytes))
}

// handleLarge registers a route as handle does, whose body may be up to
// limit bytes instead of MaxBodyBytes.
func (s *Server) handleLarge(mux *http.ServeMux, pattern string, limit int64, h handler) {
	mux.HandleFunc(pattern, s.serve(h, false, limit))
}

// list registers a list's route; its handler reads its query parameters
// with newQuery, which refuses the ones it does not know.
func (s *Server) list(mux *http.ServeMux, pattern string, h handler) {
	mux.HandleFunc(pattern, s.serve(h, true, MaxBodyBytes))
}

func (s *Server) serve(h handler, query bool, limit int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			key = "" // no key at all: 401
		}
		c, err := s.App.Authenticate(r.Context(), strings.TrimSpace(key))
		if err == nil && !query {
			err = noQuery(r)
		}
		if err == nil {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
			err = h(w, r, c)
		}
		if err != nil {
			s.error(w, r, err)
		}
	}
}
