package httpapi

import (
	"net/http"

	webhooks "github.com/factuarea/webhooks"

	"github.com/factuarea/webhooks/internal/app"
)

func (s *Server) registerAccountRoutes(mux *http.ServeMux) {
	s.handle(mux, "POST /v1/accounts", s.handleCreateAccount)
	s.list(mux, "GET /v1/accounts", s.handleListAccounts)
	s.handle(mux, "GET /v1/accounts/{account}", s.handleGetAccount)
	s.handle(mux, "PATCH /v1/accounts/{account}", s.handleUpdateAccount)
	s.handle(mux, "DELETE /v1/accounts/{account}", s.handleDeleteAccount)
	s.list(mux, "GET /v1/accounts/{account}/companies", s.handleListCompanies)
	s.handle(mux, "POST /v1/accounts/{account}/api_keys", s.handleCreateAPIKey)
	s.list(mux, "GET /v1/accounts/{account}/api_keys", s.handleListAPIKeys)
	s.handle(mux, "DELETE /v1/accounts/{account}/api_keys/{key}", s.handleRevokeAPIKey)
	s.list(mux, "GET /v1/accounts/{account}/audit_log", s.handleListAudit)
	s.list(mux, "GET /v1/audit_log", s.handleListPlatformAudit)
}

func (s *Server) handleCreateAccount(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct {
		Name          string  `json:"name"`
		ProvisionedBy *string `json:"provisioned_by"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	a, err := s.App.CreateAccount(r.Context(), c, in.Name, deref(in.ProvisionedBy))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, accountObject(a))
	return nil
}

func (s *Server) handleListAccounts(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	return writeList(w, r, func(p webhooks.Page) (*webhooks.List[*webhooks.Account], error) {
		return s.App.ListAccounts(r.Context(), c, p)
	}, accountObject)
}

func (s *Server) handleListCompanies(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	return writeList(w, r, func(p webhooks.Page) (*webhooks.List[*webhooks.Company], error) {
		return s.App.ListCompanies(r.Context(), c, r.PathValue("account"), p)
	}, companyObject)
}

func (s *Server) handleListAPIKeys(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	return writeList(w, r, func(p webhooks.Page) (*webhooks.List[*webhooks.APIKey], error) {
		return s.App.ListAPIKeys(r.Context(), c, r.PathValue("account"), p)
	}, apiKeyObject)
}

func (s *Server) handleGetAccount(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	a, err := s.App.Account(r.Context(), c, r.PathValue("account"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, accountObject(a))
	return nil
}

func (s *Server) handleCreateAPIKey(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct{}
	if err := decode(r, &in); err != nil {
		return err
	}
	k, key, err := s.App.CreateAPIKey(r.Context(), c, r.PathValue("account"))
	if err != nil {
		return err
	}
	out := apiKeyObject(k)
	out.Key = key
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) handleRevokeAPIKey(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	if err := s.App.RevokeAPIKey(r.Context(), c, r.PathValue("account"), r.PathValue("key")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) handleListAudit(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	return writeList(w, r, func(p webhooks.Page) (*webhooks.List[*webhooks.AuditEntry], error) {
		return s.App.ListAudit(r.Context(), c, r.PathValue("account"), p)
	}, auditObject)
}

func (s *Server) handleListPlatformAudit(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	return writeList(w, r, func(p webhooks.Page) (*webhooks.List[*webhooks.AuditEntry], error) {
		return s.App.ListPlatformAudit(r.Context(), c, p)
	}, auditObject)
}

func (s *Server) handleUpdateAccount(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct {
		Name *string `json:"name"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	a, err := s.App.UpdateAccount(r.Context(), c, r.PathValue("account"), in.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, accountObject(a))
	return nil
}

func (s *Server) handleDeleteAccount(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	if err := s.App.DeleteAccount(r.Context(), c, r.PathValue("account")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
