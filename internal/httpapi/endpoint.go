package httpapi

import (
	"encoding/json"
	"net/http"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

func (s *Server) registerEndpointRoutes(mux *http.ServeMux, parent string) {
	base := parent + "/webhook_endpoints"
	s.handle(mux, "POST "+base, s.handleCreateEndpoint)
	s.list(mux, "GET "+base, s.handleListEndpoints)
	s.handle(mux, "GET "+base+"/{endpoint}", s.handleGetEndpoint)
	s.handle(mux, "PATCH "+base+"/{endpoint}", s.handleUpdateEndpoint)
	s.handle(mux, "DELETE "+base+"/{endpoint}", s.handleDeleteEndpoint)
	s.handle(mux, "GET "+base+"/{endpoint}/secret", s.handleGetSecret)
	s.handle(mux, "POST "+base+"/{endpoint}/rotate_secret", s.handleRotateSecret)
	s.handle(mux, "POST "+base+"/{endpoint}/test", s.handleSendTest)
	s.handle(mux, "POST "+base+"/{endpoint}/rehearsals", s.handleRehearsal)
	s.handle(mux, "POST "+base+"/{endpoint}/recover", s.handleRecover)
}

// rateLimit reads the rate_limit field: nil when it is absent, a pointer to
// 0 for null (no limit), or the deliveries per second.
func rateLimit(raw json.RawMessage) (*int, error) {
	if raw == nil {
		return nil, nil
	}
	if string(raw) == "null" {
		return new(int), nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil || n < 1 || n > webhooks.MaxRateLimit {
		return nil, webhooks.Errorf(webhooks.EINVALID, "rate_limit must be a whole number of deliveries per second from 1 to %d, or null for no limit.", webhooks.MaxRateLimit)
	}
	return &n, nil
}

// owner is the company, the account or the platform the path names.
func owner(r *http.Request) app.Owner {
	if id := r.PathValue("company"); id != "" {
		return app.CompanyOwner(id)
	}
	if id := r.PathValue("account"); id != "" {
		return app.AccountOwner(id)
	}
	return app.PlatformOwner()
}

// endpointRef is the endpoint the path names, under its owner.
func endpointRef(r *http.Request) app.EndpointRef {
	return app.EndpointRef{Owner: owner(r), ID: r.PathValue("endpoint")}
}

func (s *Server) handleCreateEndpoint(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct {
		URL              string                   `json:"url"`
		EnabledEvents    []string                 `json:"enabled_events"`
		Relationships    *[]webhooks.Relationship `json:"relationships"`
		APIVersion       string                   `json:"api_version"`
		Livemode         *bool                    `json:"livemode"`
		Description      string                   `json:"description"`
		StandardWebhooks bool                     `json:"standard_webhooks"`
		RateLimit        json.RawMessage          `json:"rate_limit"`
		Ordered          bool                     `json:"ordered"`
		AutoRecover      bool                     `json:"auto_recover"`
		Relay            bool                     `json:"relay"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	limit, err := rateLimit(in.RateLimit)
	if err != nil {
		return err
	}
	ep, err := s.App.CreateEndpoint(r.Context(), c, owner(r), app.EndpointInput{
		URL: in.URL, EnabledEvents: in.EnabledEvents, Relationships: in.Relationships,
		APIVersion: in.APIVersion, Livemode: in.Livemode, Description: in.Description,
		StandardWebhooks: in.StandardWebhooks, RateLimit: deref(limit), Ordered: in.Ordered, AutoRecover: in.AutoRecover,
		Relay: in.Relay,
	})
	if err != nil {
		return err
	}
	out := endpointObject(ep.Endpoint, s.Now())
	out.Secret = ep.Secret
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) handleListEndpoints(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	now := s.Now()
	return writeList(w, r, func(p webhooks.Page) (*webhooks.List[*webhooks.Endpoint], error) {
		return s.App.ListEndpoints(r.Context(), c, owner(r), p)
	},
		func(e *webhooks.Endpoint) endpointJSON { return endpointObject(e, now) })
}

func (s *Server) handleGetEndpoint(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	ep, err := s.App.Endpoint(r.Context(), c, endpointRef(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, endpointObject(ep.Endpoint, s.Now()))
	return nil
}

func (s *Server) handleUpdateEndpoint(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct {
		URL              *string                  `json:"url"`
		EnabledEvents    *[]string                `json:"enabled_events"`
		Relationships    *[]webhooks.Relationship `json:"relationships"`
		APIVersion       *string                  `json:"api_version"`
		Description      *string                  `json:"description"`
		Status           *string                  `json:"status"`
		StandardWebhooks *bool                    `json:"standard_webhooks"`
		RateLimit        json.RawMessage          `json:"rate_limit"`
		Ordered          *bool                    `json:"ordered"`
		AutoRecover      *bool                    `json:"auto_recover"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	limit, err := rateLimit(in.RateLimit)
	if err != nil {
		return err
	}
	ep, err := s.App.UpdateEndpoint(r.Context(), c, endpointRef(r), webhooks.EndpointUpdate{
		URL: in.URL, EnabledEvents: in.EnabledEvents, Relationships: in.Relationships,
		APIVersion: in.APIVersion, Description: in.Description, Status: in.Status,
		StandardWebhooks: in.StandardWebhooks, RateLimit: limit, Ordered: in.Ordered, AutoRecover: in.AutoRecover,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, endpointObject(ep, s.Now()))
	return nil
}

func (s *Server) handleDeleteEndpoint(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	if err := s.App.DeleteEndpoint(r.Context(), c, endpointRef(r)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) handleGetSecret(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	ep, err := s.App.RevealSecret(r.Context(), c, endpointRef(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Secret string `json:"secret"`
	}{ep.Secret})
	return nil
}

func (s *Server) handleRotateSecret(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct {
		ExpiresIn *int64 `json:"expires_in"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	rot, err := s.App.RotateSecret(r.Context(), c, endpointRef(r), in.ExpiresIn)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Secret                  string `json:"secret"`
		PreviousSecretExpiresAt int64  `json:"previous_secret_expires_at"`
	}{rot.Secret, rot.PreviousExpires.Unix()})
	return nil
}

func (s *Server) handleSendTest(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct{}
	if err := decode(r, &in); err != nil {
		return err
	}
	d, err := s.App.SendTestEvent(r.Context(), c, endpointRef(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, deliveryObject(d))
	return nil
}

func (s *Server) handleRehearsal(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct{}
	if err := decode(r, &in); err != nil {
		return err
	}
	d, err := s.App.SendRehearsal(r.Context(), c, endpointRef(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, deliveryObject(d))
	return nil
}

func (s *Server) handleRecover(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct {
		Since *int64 `json:"since"`
		Until *int64 `json:"until"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	n, err := s.App.Recover(r.Context(), c, endpointRef(r), app.RecoverInput{Since: in.Since, Until: in.Until})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Object string `json:"object"`
		Count  int    `json:"count"`
	}{"recovery", n})
	return nil
}
