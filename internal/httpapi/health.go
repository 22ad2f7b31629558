package httpapi

import (
	"context"
	"net/http"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func (s *Server) registerHealthRoutes(mux *http.ServeMux) {
	// healthz: the process serves. readyz: and its database answers, so a
	// load balancer stops sending traffic to a process that cannot store.
	s.public(mux, "GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.public(mux, "GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.Ping(ctx); err != nil {
			s.Logger.Warn("readyz: database unreachable", "err", err)
			w.Header().Set("Retry-After", retryAfter)
			writeJSON(w, http.StatusServiceUnavailable, errorBody(webhooks.EUNAVAILABLE, "The database does not answer."))
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
}
