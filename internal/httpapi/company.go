package httpapi

import (
	"net/http"

	webhooks "github.com/factuarea/webhooks"
)

func (s *Server) registerCompanyRoutes(mux *http.ServeMux) {
	s.handle(mux, "POST /v1/companies", s.handleCreateCompany)
	s.handle(mux, "GET /v1/companies/{company}", s.handleGetCompany)
}

func (s *Server) handleCreateCompany(w http.ResponseWriter, r *http.Request, p *principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in struct {
		AccountID string `json:"account_id"`
		NIF       string `json:"nif"`
		Name      string `json:"name"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	c := &webhooks.Company{ID: webhooks.NewID(), AccountID: in.AccountID, NIF: in.NIF, Name: in.Name, Created: s.Now()}
	if err := c.Validate(); err != nil {
		return err
	}
	if err := s.Store.CreateCompany(r.Context(), c); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, companyObject(c))
	return nil
}

// company returns the path's company if p may see it; another account's
// company is "not found", exactly as a missing one.
func (s *Server) company(r *http.Request, p *principal) (*webhooks.Company, error) {
	id := r.PathValue("company")
	if !webhooks.ValidID(id) {
		return nil, notFound("company")
	}
	c, err := s.Store.FindCompany(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if !p.canSee(c.AccountID) {
		return nil, notFound("company")
	}
	return c, nil
}

func (s *Server) handleGetCompany(w http.ResponseWriter, r *http.Request, p *principal) error {
	c, err := s.company(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, companyObject(c))
	return nil
}
