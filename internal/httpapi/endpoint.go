package httpapi

import (
	"net/http"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/signature"
)

func (s *Server) registerEndpointRoutes(mux *http.ServeMux, parent string) {
	base := parent + "/webhook_endpoints"
	s.handle(mux, "POST "+base, s.handleCreateEndpoint)
	s.handle(mux, "GET "+base, s.handleListEndpoints)
	s.handle(mux, "GET "+base+"/{endpoint}", s.handleGetEndpoint)
	s.handle(mux, "PATCH "+base+"/{endpoint}", s.handleUpdateEndpoint)
	s.handle(mux, "DELETE "+base+"/{endpoint}", s.handleDeleteEndpoint)
	s.handle(mux, "GET "+base+"/{endpoint}/secret", s.handleGetSecret)
	s.handle(mux, "POST "+base+"/{endpoint}/rotate_secret", s.handleRotateSecret)
	s.handle(mux, "POST "+base+"/{endpoint}/test", s.handleSendTest)
	s.handle(mux, "POST "+base+"/{endpoint}/recover", s.handleRecover)
}

// owner is the parent of a path's endpoints: a company or an account.
type owner struct {
	scope     webhooks.Scope
	companyID string
	accountID string // the account the owner belongs to (the company's)
}

// owner resolves the path's company or account, if p may see it.
func (s *Server) owner(r *http.Request, p *principal) (*owner, error) {
	if r.PathValue("company") != "" {
		c, err := s.company(r, p)
		if err != nil {
			return nil, err
		}
		return &owner{scope: webhooks.ScopeCompany, companyID: c.ID, accountID: c.AccountID}, nil
	}
	a, err := s.account(r, p)
	if err != nil {
		return nil, err
	}
	return &owner{scope: webhooks.ScopeAccount, accountID: a.ID}, nil
}

// endpoint resolves the path's endpoint under its owner: an endpoint of
// another company or account is "not found", whoever asks.
func (s *Server) endpoint(r *http.Request, p *principal) (*owner, *webhooks.Endpoint, error) {
	o, err := s.owner(r, p)
	if err != nil {
		return nil, nil, err
	}
	id := r.PathValue("endpoint")
	if !webhooks.ValidID(id) {
		return nil, nil, notFound("webhook endpoint")
	}
	ep, err := s.Store.FindEndpoint(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	if ep.Scope != o.scope || ep.CompanyID != o.companyID || (o.scope == webhooks.ScopeAccount && ep.AccountID != o.accountID) {
		return nil, nil, notFound("webhook endpoint")
	}
	return o, ep, nil
}

// checkURL runs the SSRF guard's creation-time check.
func (s *Server) checkURL(r *http.Request, ep *webhooks.Endpoint) error {
	if s.URLs == nil {
		return nil
	}
	u, err := s.URLs.CheckURL(r.Context(), ep.URL, ep.Livemode && !s.AllowHTTP)
	if err != nil {
		return err
	}
	ep.URL = u.String()
	return nil
}

func (s *Server) handleCreateEndpoint(w http.ResponseWriter, r *http.Request, p *principal) error {
	o, err := s.owner(r, p)
	if err != nil {
		return err
	}
	var in struct {
		URL           string                   `json:"url"`
		EnabledEvents []string                 `json:"enabled_events"`
		Relationships *[]webhooks.Relationship `json:"relationships"`
		APIVersion    string                   `json:"api_version"`
		Livemode      *bool                    `json:"livemode"`
		Description   string                   `json:"description"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	now := s.Now()
	ep := &webhooks.Endpoint{
		ID: webhooks.NewID(), Scope: o.scope, CompanyID: o.companyID, URL: in.URL, EnabledEvents: in.EnabledEvents,
		APIVersion: in.APIVersion, Livemode: in.Livemode == nil || *in.Livemode, Description: in.Description,
		Status: webhooks.EndpointEnabled, Created: now, Updated: now,
	}
	if o.scope == webhooks.ScopeAccount {
		ep.AccountID = o.accountID
	}
	if in.Relationships != nil {
		if o.scope != webhooks.ScopeAccount {
			return webhooks.Errorf(webhooks.EINVALID, "relationships only apply to account endpoints.")
		}
		ep.Relationships = *in.Relationships
		if ep.Relationships == nil {
			ep.Relationships = []webhooks.Relationship{}
		}
	}
	if err := ep.Validate(); err != nil {
		return err
	}
	if err := s.checkURL(r, ep); err != nil {
		return err
	}
	if ep.Secret, err = signature.NewSecret(); err != nil {
		return err
	}
	if err := s.Store.CreateEndpoint(r.Context(), ep, p.audit()); err != nil {
		return err
	}
	out := endpointObject(ep, now)
	out.Secret = ep.Secret
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) handleListEndpoints(w http.ResponseWriter, r *http.Request, p *principal) error {
	o, err := s.owner(r, p)
	if err != nil {
		return err
	}
	q := newQuery(r)
	page := q.page()
	if q.err != nil {
		return q.err
	}
	f := webhooks.EndpointFilter{CompanyID: o.companyID}
	if o.scope == webhooks.ScopeAccount {
		f.AccountID = o.accountID
	}
	l, err := s.Store.ListEndpoints(r.Context(), f, page)
	if err != nil {
		return err
	}
	now := s.Now()
	writeJSON(w, http.StatusOK, newList(l, func(e *webhooks.Endpoint) endpointJSON { return endpointObject(e, now) }))
	return nil
}

func (s *Server) handleGetEndpoint(w http.ResponseWriter, r *http.Request, p *principal) error {
	_, ep, err := s.endpoint(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, endpointObject(ep, s.Now()))
	return nil
}

func (s *Server) handleUpdateEndpoint(w http.ResponseWriter, r *http.Request, p *principal) error {
	o, ep, err := s.endpoint(r, p)
	if err != nil {
		return err
	}
	var in struct {
		URL           *string                  `json:"url"`
		EnabledEvents *[]string                `json:"enabled_events"`
		Relationships *[]webhooks.Relationship `json:"relationships"`
		APIVersion    *string                  `json:"api_version"`
		Description   *string                  `json:"description"`
		Status        *string                  `json:"status"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	u := &webhooks.EndpointUpdate{URL: in.URL, EnabledEvents: in.EnabledEvents, Relationships: in.Relationships,
		APIVersion: in.APIVersion, Description: in.Description, Status: in.Status}
	// Validate on a copy first, so that a bad URL is refused before the
	// guard resolves it, and the guard sees the final URL. A refused change
	// is audited (a URL pointed at an internal address is worth knowing of).
	check := *ep
	if err := u.Apply(&check); err != nil {
		return s.refuse(r, p, o, webhooks.AuditEndpointUpdated, webhooks.TargetEndpoint, ep.ID, err)
	}
	if in.URL != nil {
		if err := s.checkURL(r, &check); err != nil {
			return s.refuse(r, p, o, webhooks.AuditEndpointUpdated, webhooks.TargetEndpoint, ep.ID, err)
		}
		u.URL = &check.URL
	}
	now := s.Now()
	updated, err := s.Store.UpdateEndpoint(r.Context(), ep.ID, u, now, p.audit())
	if err != nil {
		return s.refuse(r, p, o, webhooks.AuditEndpointUpdated, webhooks.TargetEndpoint, ep.ID, err)
	}
	writeJSON(w, http.StatusOK, endpointObject(updated, now))
	return nil
}

func (s *Server) handleDeleteEndpoint(w http.ResponseWriter, r *http.Request, p *principal) error {
	_, ep, err := s.endpoint(r, p)
	if err != nil {
		return err
	}
	if err := s.Store.DeleteEndpoint(r.Context(), ep.ID, s.Now(), p.audit()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) handleGetSecret(w http.ResponseWriter, r *http.Request, p *principal) error {
	o, ep, err := s.endpoint(r, p)
	if err != nil {
		return err
	}
	e := p.audit()
	e.AccountID, e.Action, e.TargetType, e.TargetID = o.accountID, webhooks.AuditEndpointSecretRevealed, webhooks.TargetEndpoint, ep.ID
	e.Outcome, e.Created = webhooks.AuditSucceeded, s.Now()
	if err := s.Store.RecordAudit(r.Context(), e); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Secret string `json:"secret"`
	}{ep.Secret})
	return nil
}

func (s *Server) handleRotateSecret(w http.ResponseWriter, r *http.Request, p *principal) error {
	o, ep, err := s.endpoint(r, p)
	if err != nil {
		return err
	}
	var in struct {
		ExpiresIn *int64 `json:"expires_in"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	overlap := webhooks.DefaultSecretOverlap
	if in.ExpiresIn != nil {
		overlap = time.Duration(*in.ExpiresIn) * time.Second
		if *in.ExpiresIn < 0 || overlap > webhooks.MaxSecretOverlap {
			return s.refuse(r, p, o, webhooks.AuditEndpointSecretRotated, webhooks.TargetEndpoint, ep.ID,
				webhooks.Errorf(webhooks.EINVALID, "expires_in must be from 0 (the old secret stops now) to %d seconds (7 days).", int64(webhooks.MaxSecretOverlap/time.Second)))
		}
	}
	secret, err := signature.NewSecret()
	if err != nil {
		return err
	}
	now := s.Now()
	// Truncated to whole seconds: the API shows unix seconds, and the old
	// secret must stop exactly at the moment announced.
	expires := now.Add(overlap).Truncate(time.Second)
	if _, err := s.Store.RotateSecret(r.Context(), ep.ID, secret, expires, now, p.audit()); err != nil {
		return err
	}
	out := struct {
		Secret                  string `json:"secret"`
		PreviousSecretExpiresAt int64  `json:"previous_secret_expires_at"`
	}{secret, expires.Unix()}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleSendTest(w http.ResponseWriter, r *http.Request, p *principal) error {
	o, ep, err := s.endpoint(r, p)
	if err != nil {
		return err
	}
	var in struct{}
	if err := decode(r, &in); err != nil {
		return err
	}
	d, err := s.Store.SendTestEvent(r.Context(), ep.ID, s.Now(), p.audit())
	if err != nil {
		return s.refuse(r, p, o, webhooks.AuditEndpointTestSent, webhooks.TargetEndpoint, ep.ID, err)
	}
	s.Wake()
	writeJSON(w, http.StatusCreated, deliveryObject(d))
	return nil
}

func (s *Server) handleRecover(w http.ResponseWriter, r *http.Request, p *principal) error {
	o, ep, err := s.endpoint(r, p)
	if err != nil {
		return err
	}
	var in struct {
		Since *int64 `json:"since"`
		Until *int64 `json:"until"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	now := s.Now()
	if in.Since == nil {
		return webhooks.Errorf(webhooks.EINVALID, "since is required: the start of the range, in unix seconds.")
	}
	since, until := time.Unix(*in.Since, 0), now
	if in.Until != nil {
		until = time.Unix(*in.Until, 0)
	}
	if !since.Before(until) {
		return webhooks.Errorf(webhooks.EINVALID, "since must be before until (which defaults to now).")
	}
	n, err := s.Store.Recover(r.Context(), ep.ID, since, until, now, p.audit())
	if err != nil {
		return s.refuse(r, p, o, webhooks.AuditEndpointRecovered, webhooks.TargetEndpoint, ep.ID, err)
	}
	if n > 0 {
		s.Wake()
	}
	writeJSON(w, http.StatusOK, struct {
		Object string `json:"object"`
		Count  int    `json:"count"`
	}{"recovery", n})
	return nil
}

// refuse records a refused change in the audit log and returns its error.
// Only the caller's own objects get here, so the log never shows another
// tenant's ids.
func (s *Server) refuse(r *http.Request, p *principal, o *owner, action, targetType, targetID string, err error) error {
	code := webhooks.ErrorCode(err)
	if code == webhooks.EINTERNAL || code == webhooks.ENOTFOUND {
		return err
	}
	e := p.audit()
	e.AccountID, e.Action, e.TargetType, e.TargetID = o.accountID, action, targetType, targetID
	e.Outcome, e.ErrorCode, e.Created = webhooks.AuditRefused, code, s.Now()
	if aerr := s.Store.RecordAudit(r.Context(), e); aerr != nil {
		s.Logger.Error("audit: recording a refused change failed", "action", action, "err", aerr)
	}
	return err
}
