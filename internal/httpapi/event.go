package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"net/http"

	webhooks "github.com/factuarea/webhooks"
)

// MaxIdempotencyKeyLength bounds a producer's Idempotency-Key.
const MaxIdempotencyKeyLength = 255

func (s *Server) registerEventRoutes(mux *http.ServeMux) {
	s.handle(mux, "POST /v1/events", s.handleCreateEvent)
	s.handle(mux, "GET /v1/events/{event}", s.handleGetEvent)
	s.handle(mux, "GET /v1/companies/{company}/events", s.handleListCompanyEvents)
	s.handle(mux, "GET /v1/accounts/{account}/events", s.handleListAccountEvents)
}

func (s *Server) handleCreateEvent(w http.ResponseWriter, r *http.Request, p *principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var in struct {
		Type          string  `json:"type"`
		CompanyID     *string `json:"company_id"`
		AccountID     *string `json:"account_id"`
		CorrelationID *string `json:"correlation_id"`
		Livemode      *bool   `json:"livemode"`
		Data          *struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	if err := decodeBytes(body, &in); err != nil {
		return err
	}
	if in.Data == nil {
		return webhooks.Errorf(webhooks.EINVALID, "data is required: {\"object\": {…}}.")
	}
	ev := &webhooks.Event{
		ID:         webhooks.NewID(),
		Type:       in.Type,
		APIVersion: webhooks.LatestAPIVersion,
		Created:    s.Now(),
		Livemode:   in.Livemode == nil || *in.Livemode,
		Object:     in.Data.Object,
	}
	if in.CompanyID != nil {
		ev.CompanyID = *in.CompanyID
	}
	if in.AccountID != nil {
		ev.AccountID = *in.AccountID
	}
	if in.CorrelationID != nil {
		ev.CorrelationID = *in.CorrelationID
	}
	if err := ev.Validate(); err != nil {
		return err
	}
	var key *webhooks.IdempotencyKey
	if k := r.Header.Get("Idempotency-Key"); k != "" {
		if len(k) > MaxIdempotencyKeyLength {
			return webhooks.Errorf(webhooks.EINVALID, "Idempotency-Key must be at most %d characters.", MaxIdempotencyKeyLength)
		}
		// Whitespace does not make a different request.
		var compact bytes.Buffer
		json.Compact(&compact, body)
		h := sha256.Sum256(compact.Bytes())
		key = &webhooks.IdempotencyKey{Key: k, RequestHash: h[:], Created: ev.Created}
	}
	got, deliveries, created, err := s.Store.RegisterEvent(r.Context(), ev, key)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		if s.Registered != nil {
			s.Registered()
		}
		for _, d := range deliveries {
			if d.Status == webhooks.DeliveryPending {
				s.Wake()
				break
			}
		}
	}
	writeJSON(w, status, eventObject(got))
	return nil
}

func (s *Server) handleGetEvent(w http.ResponseWriter, r *http.Request, p *principal) error {
	id := r.PathValue("event")
	if !webhooks.ValidID(id) {
		return notFound("event")
	}
	ev, err := s.Store.FindEvent(r.Context(), id)
	if err != nil {
		return err
	}
	if !p.canSee(ev.AccountID) {
		return notFound("event")
	}
	writeJSON(w, http.StatusOK, eventObject(ev))
	return nil
}

// eventFilter reads the event log's filters.
func eventFilter(r *http.Request) (webhooks.EventFilter, webhooks.Page, error) {
	q := newQuery(r, "type", "created_gte", "created_lt")
	f := webhooks.EventFilter{Type: q.str("type"), CreatedGTE: q.unix("created_gte"), CreatedLT: q.unix("created_lt")}
	page := q.page()
	return f, page, q.err
}

func (s *Server) handleListCompanyEvents(w http.ResponseWriter, r *http.Request, p *principal) error {
	c, err := s.company(r, p)
	if err != nil {
		return err
	}
	f, page, err := eventFilter(r)
	if err != nil {
		return err
	}
	f.CompanyID = c.ID
	return s.listEvents(w, r, f, page)
}

func (s *Server) handleListAccountEvents(w http.ResponseWriter, r *http.Request, p *principal) error {
	a, err := s.account(r, p)
	if err != nil {
		return err
	}
	f, page, err := eventFilter(r)
	if err != nil {
		return err
	}
	f.AccountID = a.ID
	return s.listEvents(w, r, f, page)
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, f webhooks.EventFilter, page webhooks.Page) error {
	l, err := s.Store.ListEvents(r.Context(), f, page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newList(l, eventObject))
	return nil
}
