// Package httpapi is the JSON API of SPEC section 13 on net/http's
// method-and-path patterns.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/portal"
)

// MaxBodyBytes bounds every request body; a larger one answers 413.
const MaxBodyBytes = 256 << 10

// URLChecker refuses endpoint URLs the service must not call (the SSRF
// guard's creation-time check).
type URLChecker interface {
	CheckURL(ctx context.Context, raw string, requireHTTPS bool) (*url.URL, error)
}

// Server serves the API.
type Server struct {
	Store webhooks.Store
	// Wake tells the delivery engine that new deliveries are due.
	Wake func()
	// URLs checks endpoint URLs at creation and update.
	URLs URLChecker
	// AdminKey is the platform's key.
	AdminKey string
	// AllowHTTP lets live-mode endpoints use plain http.
	AllowHTTP bool
	Now       func() time.Time
	Logger    *slog.Logger
	// Extra routes (health, metrics, portal) mounted beside the API.
	Extra map[string]http.Handler
	// Portal issues the links of POST /v1/accounts/{account}/portal_sessions;
	// PublicURL is the base of those links.
	Portal    *portal.Sessions
	PublicURL string
	// Observe, if set, is called after each request with its route pattern,
	// status and duration (for metrics).
	Observe func(pattern string, status int, d time.Duration)
	// Registered, if set, is called for each event registered.
	Registered func()

	adminHash [32]byte
}

// Handler returns the API's handler.
func (s *Server) Handler() http.Handler {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Wake == nil {
		s.Wake = func() {}
	}
	s.adminHash = hashKey(s.AdminKey)
	mux := http.NewServeMux()
	s.registerAccountRoutes(mux)
	s.registerCompanyRoutes(mux)
	s.registerEventRoutes(mux)
	for _, parent := range []string{"/v1/companies/{company}", "/v1/accounts/{account}"} {
		s.registerEndpointRoutes(mux, parent)
		s.registerDeliveryRoutes(mux, parent)
	}
	s.registerHealthRoutes(mux)
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

// handle registers an API route: the handler gets the caller, and any
// error it returns goes through the one error exit.
func (s *Server) handle(mux *http.ServeMux, pattern string, h func(w http.ResponseWriter, r *http.Request, p *principal) error) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticate(r)
		if err == nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
			err = h(w, r, p)
		}
		if err != nil {
			s.error(w, r, err)
		}
	})
}
