package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// batchRequest is the body of POST /v1/events/batch. Its items stay raw
// until each is decoded on its own, so that a malformed item refuses only
// itself.
type batchRequest struct {
	Events []json.RawMessage `json:"events"`
}

// batchItem is one item of a batch: an event request, and the idempotency
// key POST /v1/events takes as a header.
type batchItem struct {
	eventRequest
	IdempotencyKey *string `json:"idempotency_key"`
}

// batchResultJSON is the answer of a batch: one outcome per item, in the
// items' order.
type batchResultJSON struct {
	Object string             `json:"object"`
	Data   []batchOutcomeJSON `json:"data"`
}

// batchOutcomeJSON is an item's outcome: the status POST /v1/events would
// have answered it, and the event or the error object it would have
// answered.
type batchOutcomeJSON struct {
	Status int          `json:"status"`
	Event  *eventJSON   `json:"event,omitempty"`
	Error  *errorDetail `json:"error,omitempty"`
}

func (s *Server) handleCreateEvents(w http.ResponseWriter, r *http.Request, c app.Caller) error {
	var req batchRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	switch {
	case req.Events == nil:
		return webhooks.Errorf(webhooks.EINVALID, "events is required: an array of 1 to %d events.", app.MaxBatchEvents)
	case len(req.Events) == 0:
		return webhooks.Errorf(webhooks.EINVALID, "events is empty: send 1 to %d events.", app.MaxBatchEvents)
	case len(req.Events) > app.MaxBatchEvents:
		return webhooks.Errorf(webhooks.EINVALID, "events holds %d events; a batch holds at most %d.", len(req.Events), app.MaxBatchEvents)
	}
	// The header would otherwise be ignored, and a producer that relies on
	// it would register its batch again on every retry.
	if r.Header.Get("Idempotency-Key") != "" {
		return webhooks.Errorf(webhooks.EINVALID, "A batch takes no Idempotency-Key header: give each event its own idempotency_key.")
	}

	out := batchResultJSON{Object: "batch_result", Data: make([]batchOutcomeJSON, len(req.Events))}
	var inputs []app.EventInput
	var items []int // the item of each input
	for i, raw := range req.Events {
		in, err := batchInput(raw)
		if err != nil {
			out.Data[i] = s.refusedItem(r, err)
			continue
		}
		inputs = append(inputs, in)
		items = append(items, i)
	}
	outcomes, err := s.App.RegisterEvents(s.Tracing.Extract(r.Context(), r.Header), c, inputs)
	if err != nil {
		return err
	}
	for j, o := range outcomes {
		i := items[j]
		if o.Err != nil {
			out.Data[i] = s.refusedItem(r, o.Err)
			continue
		}
		ev := eventObject(o.Event)
		out.Data[i] = batchOutcomeJSON{Status: http.StatusOK, Event: &ev}
		if o.Created {
			out.Data[i].Status = http.StatusCreated
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// batchInput decodes one item of a batch with the checks of a request
// body, and the bound of one: the events of a batch are those POST
// /v1/events would take.
func batchInput(raw json.RawMessage) (app.EventInput, error) {
	if len(raw) > MaxBodyBytes {
		return app.EventInput{}, webhooks.Errorf(webhooks.ETOOLARGE, "The event is over %s, the most POST /v1/events takes.", sizeText(MaxBodyBytes))
	}
	// decodeBytes would take null for an empty object, and say "the
	// request body" of anything else that is not an object.
	if !bytes.HasPrefix(raw, []byte("{")) {
		return app.EventInput{}, webhooks.Errorf(webhooks.EINVALIDJSON, "Each item of events must be a JSON object.")
	}
	var item batchItem
	if err := decodeBytes(raw, &item); err != nil {
		return app.EventInput{}, err
	}
	key := ""
	if item.IdempotencyKey != nil {
		if *item.IdempotencyKey == "" {
			return app.EventInput{}, webhooks.Errorf(webhooks.EINVALID, "idempotency_key is empty: leave it out, or null, for an event without one.")
		}
		key = *item.IdempotencyKey
	}
	return item.input(key)
}

// refusedItem is the outcome of an item refused with err: what the error
// exit would have answered POST /v1/events.
func (s *Server) refusedItem(r *http.Request, err error) batchOutcomeJSON {
	status, detail := s.failure(r, err)
	return batchOutcomeJSON{Status: status, Error: &detail}
}
