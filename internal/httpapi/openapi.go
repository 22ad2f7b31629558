package httpapi

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the API reference: an OpenAPI 3.0 document of every route of
// this package. internal/e2e's contract test validates the service's real
// requests and responses against it, so it cannot drift from the code.
//
//go:embed openapi.yaml
var OpenAPI []byte

// registerDocRoutes serves the API reference, without a key.
func (s *Server) registerDocRoutes(mux *http.ServeMux) {
	s.public(mux, "GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(OpenAPI)
	})
}
