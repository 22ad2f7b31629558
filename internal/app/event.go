package app

import (
	"context"
	"crypto/sha256"
	"encoding/json"

	webhooks "github.com/factuarea/webhooks"
)

// EventInput is what a producer registers.
type EventInput struct {
	Type          string
	CompanyID     string
	AccountID     string
	CorrelationID string
	Livemode      *bool // nil: true
	// Object is data.object, the resource as JSON.
	Object json.RawMessage
	// IdempotencyKey, if set, makes a repeat within
	// webhooks.IdempotencyWindow return the first event.
	IdempotencyKey string
	// OrderingKey, if set, orders the event's deliveries to the endpoints
	// that ask for it (SPEC 18).
	OrderingKey string
}

// RegisterEvent registers an event and creates its deliveries in the same
// transaction. It returns the event and whether it was created now (false:
// the Idempotency-Key repeats a recent registration, whose event it
// returns, and nothing was registered). Once the catalog declares a type,
// an event of a type it does not declare is refused (EUNKNOWNEVENTTYPE),
// and so is one whose object its type's schema refuses
// (EINVALIDEVENTDATA). Admin only.
//
// Its span (see tracing) is a child of ctx's: the platform's request's.
func (a *App) RegisterEvent(ctx context.Context, c Caller, in EventInput) (ev *webhooks.Event, created bool, err error) {
	ctx, span := a.cfg.Tracing.StartRegistration(ctx, false)
	var deliveries []*webhooks.Delivery
	defer func() { span.End(ev, len(deliveries), created, err) }()
	if err := c.requireAdmin(); err != nil {
		return nil, false, err
	}
	ev, key, err := a.newEvent(in, "Idempotency-Key")
	if err != nil {
		return nil, false, err
	}
	span.Event(ev)
	got, deliveries, created, err := a.register(ctx, ev, key)
	if err != nil {
		return nil, false, err
	}
	if created {
		a.cfg.Registered()
	}
	return got, created, nil
}

// newEvent validates what a producer asks to register and returns the
// event, with its id and time, and its idempotency key (nil: none).
// keyField names the key in the producer's request, for the message of a
// key that is too long.
func (a *App) newEvent(in EventInput, keyField string) (*webhooks.Event, *webhooks.IdempotencyKey, error) {
	ev := &webhooks.Event{
		ID:            webhooks.NewID(),
		Type:          in.Type,
		APIVersion:    webhooks.LatestAPIVersion,
		Created:       a.cfg.Now(),
		Livemode:      in.Livemode == nil || *in.Livemode,
		CorrelationID: in.CorrelationID,
		AccountID:     in.AccountID,
		CompanyID:     in.CompanyID,
		Object:        in.Object,
		OrderingKey:   in.OrderingKey,
	}
	if err := ev.Validate(); err != nil {
		return nil, nil, err
	}
	if in.IdempotencyKey == "" {
		return ev, nil, nil
	}
	if err := webhooks.CheckLength(keyField, in.IdempotencyKey, webhooks.MaxIdempotencyKeyLen); err != nil {
		return nil, nil, err
	}
	return ev, &webhooks.IdempotencyKey{Key: in.IdempotencyKey, RequestHash: requestHash(ev), Created: ev.Created}, nil
}

// requestHash identifies what a producer asked to register, so that an
// Idempotency-Key sent again with another request is refused: the
// validated fields, whatever the request's white space, field order or
// defaults spelt out.
func requestHash(ev *webhooks.Event) []byte {
	fields := []any{ev.Type, ev.CompanyID, ev.AccountID, ev.CorrelationID, ev.Livemode, ev.Object}
	if ev.OrderingKey != "" {
		// Only when set: the keys stored before ordering keys existed
		// still match their requests.
		fields = append(fields, ev.OrderingKey)
	}
	b, _ := json.Marshal(fields)
	h := sha256.Sum256(b)
	return h[:]
}

// Event returns an event c may see.
func (a *App) Event(ctx context.Context, c Caller, id string) (*webhooks.Event, error) {
	if !webhooks.ValidID(id) {
		return nil, webhooks.NotFound("event")
	}
	ev, err := a.cfg.Store.FindEvent(ctx, id)
	if err != nil {
		return nil, err
	}
	if !c.canSee(ev.AccountID) {
		return nil, webhooks.NotFound("event")
	}
	return ev, nil
}

// EventQuery selects an event log: a company's, or an account's own (its
// account.* events and its companies' events), filtered.
type EventQuery struct {
	Owner      Owner
	Type       string
	CreatedGTE *int64 // unix seconds; nil: no bound
	CreatedLT  *int64
}

// ListEvents lists an event log, newest first.
func (a *App) ListEvents(ctx context.Context, c Caller, q EventQuery, p webhooks.Page) (*webhooks.List[*webhooks.Event], error) {
	if _, _, err := a.owner(ctx, c, q.Owner); err != nil {
		return nil, err
	}
	f := webhooks.EventFilter{Type: q.Type}
	if q.Owner.Scope == webhooks.ScopeCompany {
		f.CompanyID = q.Owner.ID
	} else {
		f.AccountID = q.Owner.ID
	}
	// Any text filters (a type that matches nothing lists nothing), but
	// only text every backend can compare.
	if err := webhooks.CheckLength("type", q.Type, webhooks.MaxEventTypeLength); err != nil {
		return nil, err
	}
	var err error
	if q.CreatedGTE != nil {
		if f.CreatedGTE, err = webhooks.UnixTime("created_gte", *q.CreatedGTE); err != nil {
			return nil, err
		}
	}
	if q.CreatedLT != nil {
		if f.CreatedLT, err = webhooks.UnixTime("created_lt", *q.CreatedLT); err != nil {
			return nil, err
		}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return a.cfg.Store.ListEvents(ctx, f, p)
}
