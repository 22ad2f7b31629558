package httpapi

import (
	"net/http"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

func (s *Server) registerDeliveryRoutes(mux *http.ServeMux, parent string) {
	base := parent + "/webhook_endpoints/{endpoint}/deliveries"
	s.list(mux, "GET "+base, s.handleListDeliveries)
	s.handle(mux, "GET "+base+"/{delivery}", s.handleGetDelivery)
	s.handle(mux, "POST "+base+"/{delivery}/retry", s.handleResend(webhooks.ActionRetry, http.StatusOK))
	s.handle(mux, "POST "+base+"/{delivery}/replay", s.handleResend(webhooks.ActionReplay, http.StatusCreated))
}

func (s *Server) handleListDeliveries(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	q := newQuery(r, "status", "event_id")
	f := app.DeliveryQuery{Status: q.str("status"), EventID: q.str("event_id")}
	p := q.page()
	if q.err != nil {
		return q.err
	}
	l, err := s.App.ListDeliveries(r.Context(), c, endpointRef(r), f, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newList(l, deliveryObject))
	return nil
}

func (s *Server) handleGetDelivery(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	_, d, err := s.App.Delivery(r.Context(), c, endpointRef(r), r.PathValue("delivery"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deliveryObject(d))
	return nil
}

// handleResend serves retry and replay. Each answers the other's scope
// with wrong_resend_action, naming the right one.
func (s *Server) handleResend(action string, status int) func(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	return func(w http.ResponseWriter, r *http.Request, c app.Caller) error {
		var in struct{}
		if err := decode(r, &in); err != nil {
			return err
		}
		d, err := s.App.Resend(r.Context(), c, endpointRef(r), r.PathValue("delivery"), action)
		if err != nil {
			return err
		}
		writeJSON(w, status, deliveryObject(d))
		return nil
	}
}
