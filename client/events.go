package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Batch bounds of POST /v1/events/batch.
const (
	// MaxBatchEvents is the most events the service takes in one batch
	// request; CreateEvents splits longer lists.
	MaxBatchEvents = 100
	// maxBatchBytes is the service's bound on a batch's body (4 MiB),
	// less a margin; CreateEvents splits a list whose items add up to
	// more.
	maxBatchBytes = 4<<20 - 1024
)

// CreateEvent registers an event (POST /v1/events; admin key) and returns
// it. The request carries an Idempotency-Key, the same on every attempt:
// the one given with WithIdempotencyKey, or else in.IdempotencyKey, or
// else a random one made for this call. So a retry of an attempt whose
// answer was lost (a timeout, a connection reset after the service
// committed) returns the event the first attempt registered, and the event
// is registered once. A 201 (registered now) and a 200 (the key's first
// event) both return the event.
//
// An error is an [*Error] for the API's refusals (409
// CodeIdempotencyKeyReused: the key was used with another event; 422
// CodeUnknownCompany, CodeUnknownEventType, …), possibly wrapped after
// retries; or a connection error or timeout after the retry budget ended,
// in which case the event may or may not be registered: send it again
// with the same key to know.
func (c *Client) CreateEvent(ctx context.Context, in EventInput, opts ...CallOption) (*Event, error) {
	var o callOptions
	for _, f := range opts {
		f(&o)
	}
	key := o.idempotencyKey
	if key == "" {
		key = in.IdempotencyKey
	}
	if key == "" {
		key = NewIdempotencyKey()
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("client: POST /v1/events: encoding the event: %w", err)
	}
	var ev Event
	req := &request{method: http.MethodPost, path: "/v1/events", body: b, key: key, idempotent: true}
	if err := c.call(ctx, req, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// BatchItemResult is the outcome of one event of CreateEvents.
type BatchItemResult struct {
	// Status is what POST /v1/events would have answered the event: 201
	// (registered now), 200 (its idempotency key's first event, nothing
	// registered), or the status of Err. It is 0 when the event's outcome
	// is not known, because CreateEvents returned an error before the
	// service answered for it: send it again with the same IdempotencyKey.
	Status int
	// Event is the event of a 201 or a 200.
	Event *Event
	// Err is the refusal of any other status (e.g. 422 CodeUnknownCompany,
	// 409 CodeIdempotencyKeyReused, 503 CodeServiceUnavailable when the
	// retry budget ended before the service could register it).
	Err *Error
	// IdempotencyKey is the key the event was sent with: its
	// IdempotencyKey, or the one the client made.
	IdempotencyKey string
}

// batchItem is one item of a batch: an event and its key.
type batchItem struct {
	EventInput
	IdempotencyKey string `json:"idempotency_key"`
}

// batchOutcome is one item of a batch's answer.
type batchOutcome struct {
	Status int          `json:"status"`
	Event  *Event       `json:"event"`
	Error  *errorDetail `json:"error"`
}

// CreateEvents registers events (POST /v1/events/batch; admin key) and
// returns one result per event, in the order of events. It sends them in
// batches of at most MaxBatchEvents (and at most 4 MiB), one after the
// other, each event with its own idempotency key (its IdempotencyKey, or a
// random one), the same on every retry. Each event is registered or
// refused on its own: a refused event is a result with its status and
// Err, not an error of the call.
//
// A batch is retried as CreateEvent is (every item carries a key, so it is
// safe to send again); its items that the service answered 503
// service_unavailable, while it registered the others, are sent again
// within the same retry budget, and keep their 503 result if it ends.
//
// The error is not nil when a batch failed as a whole (a 401, a
// connection error after the retry budget, a cancelled context):
// CreateEvents stops there, and returns the error with the results. The
// events the service gave no outcome for (that batch's, and the later
// batches') have Status 0; sending them again with their IdempotencyKey
// is safe.
func (c *Client) CreateEvents(ctx context.Context, events []EventInput) ([]BatchItemResult, error) {
	results := make([]BatchItemResult, len(events))
	items := make([][]byte, len(events))
	for i, ev := range events {
		key := ev.IdempotencyKey
		if key == "" {
			key = NewIdempotencyKey()
		}
		results[i].IdempotencyKey = key
		b, err := json.Marshal(batchItem{ev, key})
		if err != nil {
			return nil, fmt.Errorf("client: events[%d]: encoding the event: %w", i, err)
		}
		items[i] = b
	}
	for lo := 0; lo < len(items); {
		hi, size := lo, 0
		for hi < len(items) && hi-lo < MaxBatchEvents && (hi == lo || size+len(items[hi])+1 <= maxBatchBytes) {
			size += len(items[hi]) + 1
			hi++
		}
		if err := c.sendBatch(ctx, items, results, lo, hi); err != nil {
			return results, fmt.Errorf("client: events[%d:%d]: %w", lo, hi, err)
		}
		lo = hi
	}
	return results, nil
}

// sendBatch registers items[lo:hi] in one batch request, retried as the
// policy says, and fills their results.
func (c *Client) sendBatch(ctx context.Context, items [][]byte, results []BatchItemResult, lo, hi int) error {
	rt := c.newRetrier()
	pending := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		pending = append(pending, i)
	}
	for {
		var body bytes.Buffer
		body.WriteString(`{"events":[`)
		for j, i := range pending {
			if j > 0 {
				body.WriteByte(',')
			}
			body.Write(items[i])
		}
		body.WriteString(`]}`)
		req := &request{method: http.MethodPost, path: "/v1/events/batch", body: body.Bytes(), idempotent: true}
		a, err := c.send(ctx, rt, req)
		if err != nil {
			return err
		}
		var out struct {
			Data []batchOutcome `json:"data"`
		}
		if err := decodeAnswer(req, a, &out); err != nil {
			return err
		}
		if len(out.Data) != len(pending) {
			return fmt.Errorf("client: POST /v1/events/batch: the answer has %d outcomes for %d events", len(out.Data), len(pending))
		}
		var again []int
		var last error
		for j, o := range out.Data {
			i := pending[j]
			r := BatchItemResult{Status: o.Status, IdempotencyKey: results[i].IdempotencyKey}
			switch {
			case (o.Status == http.StatusOK || o.Status == http.StatusCreated) && o.Event != nil:
				r.Event = o.Event
			case o.Error != nil:
				r.Err = &Error{StatusCode: o.Status, Code: o.Error.Code, Message: o.Error.Message}
			default:
				r.Err = &Error{StatusCode: o.Status, Message: "the outcome has neither an event nor an error"}
			}
			results[i] = r
			if o.Status == http.StatusServiceUnavailable {
				again = append(again, i)
				last = r.Err
			}
		}
		if len(again) == 0 {
			return nil
		}
		if err := rt.wait(ctx, noRetryAfter, last); err != nil {
			if ctx.Err() != nil {
				return err
			}
			return nil // the budget ended: they keep their 503 results
		}
		pending = again
	}
}

// GetEvent returns an event (GET /v1/events/{event}).
func (c *Client) GetEvent(ctx context.Context, eventID string) (*Event, error) {
	p, err := id("event", eventID)
	if err != nil {
		return nil, err
	}
	var ev Event
	if err := c.get(ctx, "/v1/events/"+p, nil, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// EventListParams filters and pages an event log. The zero value lists
// every event, newest first, in pages of the service's default size.
type EventListParams struct {
	// Type keeps the events of this exact type.
	Type string
	// CreatedGTE and CreatedLT keep the events created at or after, and
	// before, these times (unix seconds on the wire); zero: no bound.
	CreatedGTE, CreatedLT time.Time
	// Limit is the page size, 1 to 100; 0: the service's default (20).
	Limit int
	// StartingAfter starts the list after the event with this id.
	StartingAfter string
}

func (p *EventListParams) query() url.Values {
	q := url.Values{}
	if p == nil {
		return q
	}
	if p.Type != "" {
		q.Set("type", p.Type)
	}
	if !p.CreatedGTE.IsZero() {
		q.Set("created_gte", strconv.FormatInt(p.CreatedGTE.Unix(), 10))
	}
	if !p.CreatedLT.IsZero() {
		q.Set("created_lt", strconv.FormatInt(p.CreatedLT.Unix(), 10))
	}
	pageQuery(q, p.Limit, p.StartingAfter)
	return q
}

// ListEventsPage returns one page of an event log: the company's events
// (GET /v1/companies/{company}/events) or the account's own
// (GET /v1/accounts/{account}/events), newest first.
func (c *Client) ListEventsPage(ctx context.Context, owner Owner, params *EventListParams) (*List[Event], error) {
	base, err := owner.path()
	if err != nil {
		return nil, err
	}
	var l List[Event]
	if err := c.get(ctx, base+"/events", params.query(), &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// ListEvents walks an event log, newest first, page after page (see
// ListEventsPage): each page starts after the last event of the one
// before, until one says has_more is false. An error ends the walk: it is
// yielded once, with a nil event. Events registered while it walks are
// newer than its cursor, so it lists every event that existed when it
// began exactly once.
//
//	for ev, err := range c.ListEvents(ctx, client.CompanyOwner(id), nil) {
//		if err != nil {
//			return err
//		}
//		…
//	}
func (c *Client) ListEvents(ctx context.Context, owner Owner, params *EventListParams) iter.Seq2[*Event, error] {
	p := EventListParams{}
	if params != nil {
		p = *params
	}
	return paginate(p.StartingAfter, func(after string) (*List[Event], error) {
		p.StartingAfter = after
		return c.ListEventsPage(ctx, owner, &p)
	}, func(ev *Event) string { return ev.ID })
}

// pageQuery sets limit and starting_after.
func pageQuery(q url.Values, limit int, after string) {
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if after != "" {
		q.Set("starting_after", after)
	}
}

// paginate walks the pages that page returns, from the one after after,
// yielding each item.
func paginate[T any](after string, page func(after string) (*List[T], error), id func(*T) string) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		for {
			l, err := page(after)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range l.Data {
				if !yield(&l.Data[i], nil) {
					return
				}
			}
			if !l.HasMore || len(l.Data) == 0 {
				return
			}
			after = id(&l.Data[len(l.Data)-1])
		}
	}
}
