package httpapi

import (
	"encoding/json"
	"net/http"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

func (s *Server) registerEventRoutes(mux *http.ServeMux) {
	s.handle(mux, "POST /v1/events", s.handleCreateEvent)
	s.handleLarge(mux, "POST /v1/events/batch", MaxBatchBodyBytes, s.handleCreateEvents)
	s.handle(mux, "GET /v1/events/{event}", s.handleGetEvent)
	s.handle(mux, "POST /v1/events/{event}/erase", s.handleEraseEvent)
	s.list(mux, "GET /v1/companies/{company}/events", s.handleListEvents)
	s.list(mux, "GET /v1/accounts/{account}/events", s.handleListEvents)
}

// eventRequest is the body of POST /v1/events.
type eventRequest struct {
	Type          string  `json:"type"`
	CompanyID     *string `json:"company_id"`
	AccountID     *string `json:"account_id"`
	CorrelationID *string `json:"correlation_id"`
	OrderingKey   *string `json:"ordering_key"`
	Livemode      *bool   `json:"livemode"`
	Data          *struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// input is the use case's input of an event request, with its
// idempotency key (empty: none).
func (in *eventRequest) input(key string) (app.EventInput, error) {
	if in.Data == nil {
		return app.EventInput{}, webhooks.Errorf(webhooks.EINVALID, "data is required: {\"object\": {…}}.")
	}
	if in.OrderingKey != nil && *in.OrderingKey == "" {
		return app.EventInput{}, webhooks.Errorf(webhooks.EINVALID, "ordering_key is empty: leave it out, or null, for an event without one.")
	}
	return app.EventInput{
		Type: in.Type, CompanyID: deref(in.CompanyID), AccountID: deref(in.AccountID),
		CorrelationID: deref(in.CorrelationID), Livemode: in.Livemode, Object: in.Data.Object,
		IdempotencyKey: key, OrderingKey: deref(in.OrderingKey),
	}, nil
}

func (s *Server) handleCreateEvent(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var req eventRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	in, err := req.input(r.Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	ev, created, err := s.App.RegisterEvent(s.Tracing.Extract(r.Context(), r.Header), c, in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, eventObject(ev))
	return nil
}

func (s *Server) handleGetEvent(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	ev, err := s.App.Event(r.Context(), c, r.PathValue("event"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, eventObject(ev))
	return nil
}

// handleListEvents serves a company's or an account's event log.
func (s *Server) handleListEvents(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	q := newQuery(r, "type", "created_gte", "created_lt")
	f := app.EventQuery{Owner: owner(r), Type: q.str("type"), CreatedGTE: q.unix("created_gte"), CreatedLT: q.unix("created_lt")}
	p := q.page()
	if q.err != nil {
		return q.err
	}
	l, err := s.App.ListEvents(r.Context(), c, f, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newList(l, eventObject))
	return nil
}

func (s *Server) handleEraseEvent(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct{}
	if err := decode(r, &in); err != nil {
		return err
	}
	ev, err := s.App.EraseEvent(r.Context(), c, r.PathValue("event"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, eventObject(ev))
	return nil
}
