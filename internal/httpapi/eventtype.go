package httpapi

import (
	"encoding/json"
	"net/http"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

func (s *Server) registerEventTypeRoutes(mux *http.ServeMux) {
	s.handle(mux, "POST /v1/event_types", s.handleCreateEventType)
	s.list(mux, "GET /v1/event_types", s.handleListEventTypes)
	s.handle(mux, "GET /v1/event_types/{name}", s.handleGetEventType)
	s.handle(mux, "PATCH /v1/event_types/{name}", s.handleUpdateEventType)
	s.handle(mux, "DELETE /v1/event_types/{name}", s.handleArchiveEventType)
}

type eventTypeJSON struct {
	Object      string          `json:"object"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Example     json.RawMessage `json:"example"` // null when none
	Schema      json.RawMessage `json:"schema"`  // null when none
	Archived    bool            `json:"archived"`
	Created     int64           `json:"created"`
	Updated     int64           `json:"updated"`
}

func eventTypeObject(t *webhooks.EventType) eventTypeJSON {
	return eventTypeJSON{
		Object: "event_type", Name: t.Name, Description: t.Description, Example: t.Example, Schema: t.Schema,
		Archived: t.Archived, Created: t.Created.Unix(), Updated: t.Updated.Unix(),
	}
}

func (s *Server) handleCreateEventType(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Example     json.RawMessage `json:"example"`
		Schema      json.RawMessage `json:"schema"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	t, err := s.App.CreateEventType(r.Context(), c, app.EventTypeInput{Name: in.Name, Description: in.Description, Example: in.Example, Schema: in.Schema})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, eventTypeObject(t))
	return nil
}

func (s *Server) handleListEventTypes(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	return writeList(w, r, func(p webhooks.Page) (*webhooks.List[*webhooks.EventType], error) {
		return s.App.ListEventTypes(r.Context(), c, p)
	}, eventTypeObject)
}

func (s *Server) handleGetEventType(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	t, err := s.App.EventType(r.Context(), c, r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, eventTypeObject(t))
	return nil
}

func (s *Server) handleUpdateEventType(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	// A document given as null is removed; one left out is kept (nil).
	var in struct {
		Description *string         `json:"description"`
		Example     json.RawMessage `json:"example"`
		Schema      json.RawMessage `json:"schema"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	u := webhooks.EventTypeUpdate{Description: in.Description}
	if in.Example != nil {
		u.Example = &in.Example
	}
	if in.Schema != nil {
		u.Schema = &in.Schema
	}
	t, err := s.App.UpdateEventType(r.Context(), c, r.PathValue("name"), u)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, eventTypeObject(t))
	return nil
}

// handleArchiveEventType answers the archived type (200), not 204: the
// type is not deleted, and stays readable.
func (s *Server) handleArchiveEventType(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	t, err := s.App.ArchiveEventType(r.Context(), c, r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, eventTypeObject(t))
	return nil
}
