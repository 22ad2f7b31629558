package httpapi

import (
	"net/http"
	"strings"

	webhooks "github.com/factuarea/webhooks"
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

// handleCreatePortalSession issues a portal link (admin key only). The
// link is signed, not stored: every process with the same admin key
// accepts it.
func (s *Server) handleCreatePortalSession(w http.ResponseWriter, r *http.Request, p *principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in struct{}
	if err := decode(r, &in); err != nil {
		return err
	}
	a, err := s.account(r, p)
	if err != nil {
		return err
	}
	if s.Portal == nil {
		return webhooks.Errorf(webhooks.EUNAVAILABLE, "The portal is not configured on this server.")
	}
	token, expires := s.Portal.Issue(a.ID, s.Now())
	writeJSON(w, http.StatusCreated, portalSessionJSON{
		Object:    "portal_session",
		URL:       strings.TrimRight(s.PublicURL, "/") + "/portal/sessions/" + token,
		ExpiresAt: expires.Unix(),
	})
	return nil
}
