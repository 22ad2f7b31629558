package httpapi

import (
	"net/http"

	"github.com/factuarea/webhooks/internal/app"
)

func (s *Server) registerCompanyRoutes(mux *http.ServeMux) {
	s.handle(mux, "POST /v1/companies", s.handleCreateCompany)
	s.handle(mux, "GET /v1/companies/{company}", s.handleGetCompany)
	s.handle(mux, "PATCH /v1/companies/{company}", s.handleUpdateCompany)
	s.handle(mux, "DELETE /v1/companies/{company}", s.handleDeleteCompany)
}

func (s *Server) handleCreateCompany(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct {
		AccountID string `json:"account_id"`
		NIF       string `json:"nif"`
		Name      string `json:"name"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	co, err := s.App.CreateCompany(r.Context(), c, in.AccountID, in.NIF, in.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, companyObject(co))
	return nil
}

func (s *Server) handleGetCompany(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	co, err := s.App.Company(r.Context(), c, r.PathValue("company"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, companyObject(co))
	return nil
}

func (s *Server) handleUpdateCompany(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct {
		Name *string `json:"name"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	co, err := s.App.UpdateCompany(r.Context(), c, r.PathValue("company"), in.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, companyObject(co))
	return nil
}

func (s *Server) handleDeleteCompany(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	if err := s.App.DeleteCompany(r.Context(), c, r.PathValue("company")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
