package httpapi

import (
	"net/http"

	"github.com/factuarea/webhooks/internal/app"
)

func (s *Server) registerPortalRoutes(mux *http.ServeMux) {
	s.handle(mux, "POST /v1/accounts/{account}/portal_sessions", s.handleCreatePortalSession)
}

// portalSessionJSON is the answer of POST …/portal_sessions: a one-hour
// link that opens the portal for the account.
type portalSessionJSON struct {
	Object    string `json:"object"`
	URL       string `json:"url"`
	ExpiresAt int64  `json:"expires_at"`
}

func (s *Server) handleCreatePortalSession(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct{}
	if err := decode(r, &in); err != nil {
		return err
	}
	link, err := s.App.CreatePortalSession(r.Context(), c, r.PathValue("account"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, portalSessionJSON{Object: "portal_session", URL: link.URL, ExpiresAt: link.Expires.Unix()})
	return nil
}
