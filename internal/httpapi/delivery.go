package httpapi

import (
	"net/http"

	webhooks "github.com/factuarea/webhooks"
)

func (s *Server) registerDeliveryRoutes(mux *http.ServeMux, parent string) {
	base := parent + "/webhook_endpoints/{endpoint}/deliveries"
	s.handle(mux, "GET "+base, s.handleListDeliveries)
	s.handle(mux, "GET "+base+"/{delivery}", s.handleGetDelivery)
	s.handle(mux, "POST "+base+"/{delivery}/retry", s.handleResend(webhooks.ActionRetry))
	s.handle(mux, "POST "+base+"/{delivery}/replay", s.handleResend(webhooks.ActionReplay))
}

var deliveryStatuses = map[string]bool{
	webhooks.DeliveryPending: true, webhooks.DeliveryDelivered: true,
	webhooks.DeliveryFailed: true, webhooks.DeliveryFailedPermanently: true,
}

func (s *Server) handleListDeliveries(w http.ResponseWriter, r *http.Request, p *principal) error {
	_, ep, err := s.endpoint(r, p)
	if err != nil {
		return err
	}
	q := newQuery(r, "status", "event_id")
	f := webhooks.DeliveryFilter{EndpointID: ep.ID, Status: q.str("status"), EventID: q.str("event_id")}
	page := q.page()
	if f.Status != "" && !deliveryStatuses[f.Status] {
		q.fail(webhooks.Errorf(webhooks.EINVALID, "status must be pending, delivered, failed or failed_permanently."))
	}
	if f.EventID != "" && !webhooks.ValidID(f.EventID) {
		q.fail(webhooks.Errorf(webhooks.EINVALID, "event_id must be an event id."))
	}
	if q.err != nil {
		return q.err
	}
	l, err := s.Store.ListDeliveries(r.Context(), f, page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newList(l, deliveryObject))
	return nil
}

// delivery resolves the path's delivery under its endpoint.
func (s *Server) delivery(r *http.Request, p *principal) (*owner, *webhooks.Endpoint, *webhooks.Delivery, error) {
	o, ep, err := s.endpoint(r, p)
	if err != nil {
		return nil, nil, nil, err
	}
	id := r.PathValue("delivery")
	if !webhooks.ValidID(id) {
		return nil, nil, nil, notFound("webhook delivery")
	}
	d, err := s.Store.FindDelivery(r.Context(), id)
	if err != nil {
		return nil, nil, nil, err
	}
	if d.EndpointID != ep.ID {
		return nil, nil, nil, notFound("webhook delivery")
	}
	return o, ep, d, nil
}

func (s *Server) handleGetDelivery(w http.ResponseWriter, r *http.Request, p *principal) error {
	_, _, d, err := s.delivery(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deliveryObject(d))
	return nil
}

// handleResend serves retry and replay. Each answers the other's scope
// with wrong_resend_action, naming the right one.
func (s *Server) handleResend(action string) func(w http.ResponseWriter, r *http.Request, p *principal) error {
	auditAction, status := webhooks.AuditDeliveryRetried, http.StatusOK
	if action == webhooks.ActionReplay {
		auditAction, status = webhooks.AuditDeliveryReplayed, http.StatusCreated
	}
	return func(w http.ResponseWriter, r *http.Request, p *principal) error {
		o, _, d, err := s.delivery(r, p)
		if err != nil {
			return err
		}
		var in struct{}
		if err := decode(r, &in); err != nil {
			return err
		}
		resend := s.Store.RetryDelivery
		if action == webhooks.ActionReplay {
			resend = s.Store.ReplayDelivery
		}
		out, err := resend(r.Context(), d.ID, s.Now(), p.audit())
		if err != nil {
			return s.refuse(r, p, o, auditAction, webhooks.TargetDelivery, d.ID, err)
		}
		s.Wake()
		writeJSON(w, status, deliveryObject(out))
		return nil
	}
}
