package httpapi

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"

	webhooks "github.com/factuarea/webhooks"
)

// APIKeyPrefix starts every account key, so that a leaked key is
// recognizable (and secret scanners can match it).
const APIKeyPrefix = "fk_"

func (s *Server) registerAccountRoutes(mux *http.ServeMux) {
	s.handle(mux, "POST /v1/accounts", s.handleCreateAccount)
	s.handle(mux, "GET /v1/accounts/{account}", s.handleGetAccount)
	s.handle(mux, "POST /v1/accounts/{account}/api_keys", s.handleCreateAPIKey)
	s.handle(mux, "DELETE /v1/accounts/{account}/api_keys/{key}", s.handleRevokeAPIKey)
	s.handle(mux, "GET /v1/accounts/{account}/audit_log", s.handleListAudit)
}

func (s *Server) handleCreateAccount(w http.ResponseWriter, r *http.Request, p *principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in struct {
		Name          string  `json:"name"`
		ProvisionedBy *string `json:"provisioned_by"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	a := &webhooks.Account{ID: webhooks.NewID(), Name: in.Name, Created: s.Now()}
	if in.ProvisionedBy != nil {
		a.ProvisionedBy = *in.ProvisionedBy
	}
	if err := a.Validate(); err != nil {
		return err
	}
	if err := s.Store.CreateAccount(r.Context(), a); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, accountObject(a))
	return nil
}

// account returns the path's account if p may see it.
func (s *Server) account(r *http.Request, p *principal) (*webhooks.Account, error) {
	id := r.PathValue("account")
	if !webhooks.ValidID(id) || !p.canSee(id) {
		return nil, notFound("account")
	}
	return s.Store.FindAccount(r.Context(), id)
}

func (s *Server) handleGetAccount(w http.ResponseWriter, r *http.Request, p *principal) error {
	a, err := s.account(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, accountObject(a))
	return nil
}

func (s *Server) handleCreateAPIKey(w http.ResponseWriter, r *http.Request, p *principal) error {
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
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return err
	}
	key := APIKeyPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	h := hashKey(key)
	k := &webhooks.APIKey{ID: webhooks.NewID(), AccountID: a.ID, Hash: h[:], Created: s.Now()}
	if err := s.Store.CreateAPIKey(r.Context(), k, p.audit()); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, apiKeyJSON{ID: k.ID, Object: "api_key", AccountID: a.ID, Key: key, Created: k.Created.Unix()})
	return nil
}

func (s *Server) handleRevokeAPIKey(w http.ResponseWriter, r *http.Request, p *principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	a, err := s.account(r, p)
	if err != nil {
		return err
	}
	id := r.PathValue("key")
	if !webhooks.ValidID(id) {
		return notFound("api key")
	}
	if err := s.Store.RevokeAPIKey(r.Context(), a.ID, id, s.Now(), p.audit()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) handleListAudit(w http.ResponseWriter, r *http.Request, p *principal) error {
	a, err := s.account(r, p)
	if err != nil {
		return err
	}
	q := newQuery(r)
	page := q.page()
	if q.err != nil {
		return q.err
	}
	l, err := s.Store.ListAudit(r.Context(), a.ID, page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newList(l, auditObject))
	return nil
}
