package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// The local relay (SPEC 20): `webhooks listen` holds a relay endpoint
// with a GET whose answer is a stream of requests to carry, one JSON
// object a line, and posts the answer of each.
func (s *Server) registerRelayRoutes(mux *http.ServeMux, parent string) {
	base := parent + "/webhook_endpoints/{endpoint}/relay"
	s.handle(mux, "GET "+base, s.handleRelayConnect)
	s.handle(mux, "POST "+base+"/answers", s.handleRelayAnswer)
}

// relayLine is one line of the stream: "connected" once the connection
// holds the endpoint, "ping" every few seconds, and "request" for each
// attempt, whose headers (the signature among them) and body are to be
// sent as they are.
type relayLine struct {
	Type       string              `json:"type"`
	EndpointID string              `json:"endpoint_id,omitempty"`
	ID         string              `json:"id,omitempty"`
	DeliveryID string              `json:"delivery_id,omitempty"`
	Headers    map[string][]string `json:"headers,omitempty"`
	Body       []byte              `json:"body,omitempty"` // base64: the exact bytes signed
}

// relayWriteTimeout bounds each line's write: the server's WriteTimeout
// would end the stream after 30 s whatever it does, and a listener that
// stopped reading must not hold the connection.
const relayWriteTimeout = 30 * time.Second

func (s *Server) handleRelayConnect(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	rc := http.NewResponseController(w)
	ref := endpointRef(r)
	started := false
	err := s.App.ServeRelay(r.Context(), c, ref, func(req *webhooks.RelayRequest) error {
		line := relayLine{Type: "ping"}
		switch {
		case !started:
			started = true
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusOK)
			line = relayLine{Type: "connected", EndpointID: ref.ID}
		case req != nil:
			line = relayLine{Type: "request", ID: req.ID, DeliveryID: req.DeliveryID, Headers: req.Header, Body: req.Body}
		}
		b, err := json.Marshal(line)
		if err != nil {
			return err
		}
		rc.SetWriteDeadline(time.Now().Add(relayWriteTimeout))
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
		return rc.Flush()
	})
	if started {
		// The stream has begun: its end is the answer; the listener
		// reconnects.
		return nil
	}
	return err
}

func (s *Server) handleRelayAnswer(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var in struct {
		RequestID  string `json:"request_id"`
		Status     int    `json:"status"`
		DurationMS int64  `json:"duration_ms"`
		Body       string `json:"body"`
		Error      string `json:"error"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	a := webhooks.RelayAnswer{Status: in.Status, Duration: time.Duration(in.DurationMS) * time.Millisecond, Body: in.Body, Error: in.Error}
	if err := s.App.AnswerRelay(r.Context(), c, endpointRef(r), in.RequestID, a); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
