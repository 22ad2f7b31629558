package app

import (
	"context"
	"sync"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/tracing"
)

// MaxBatchEvents bounds the events of one RegisterEvents: a batch stays
// within one or two of the stores' group commits, and its answer small.
const MaxBatchEvents = 100

// EventOutcome is what became of one event of a batch: the event and
// whether it was created now (false: its idempotency key repeats a
// registration, whose event it is), or the error that refused it.
type EventOutcome struct {
	Event   *webhooks.Event
	Created bool
	Err     error
}

// RegisterEvents registers events as RegisterEvent does, each on its own:
// one that is refused does not refuse the others. Every event registered
// is committed, with its deliveries, when it returns, and the outcomes are
// in the order of in. Admin only.
//
// The events are registered concurrently, so that the store's group commit
// writes them in one transaction instead of one each. Two events with the
// same idempotency key are not: the later one waits until the earlier is
// committed, and then repeats it (or is refused as a reuse of the key),
// exactly as if they had been sent one after the other, instead of racing
// to register the key twice.
//
// When no event was registered and the database did not answer for one
// (webhooks.EUNAVAILABLE), RegisterEvents returns that error instead of
// the outcomes: nothing was stored, so the caller may send the whole batch
// again.
//
// The batch's span is a child of ctx's (the platform's request's), and
// the parent of each event's.
func (a *App) RegisterEvents(ctx context.Context, c Caller, in []EventInput) (out []EventOutcome, err error) {
	ctx, batch := a.cfg.Tracing.StartBatch(ctx, len(in))
	defer func() { batch.End(refusedOf(out), err) }()
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	if len(in) > MaxBatchEvents {
		return nil, webhooks.Errorf(webhooks.EINVALID, "A batch holds at most %d events, not %d.", MaxBatchEvents, len(in))
	}
	type registration struct {
		i    int
		ev   *webhooks.Event
		key  *webhooks.IdempotencyKey
		ctx  context.Context // the event's span's
		span tracing.Registration
	}
	out = make([]EventOutcome, len(in))
	// Round n holds the n-th valid use of each idempotency key or
	// ordering key (and round 0 the events without one): the items of a
	// batch that share an ordering key are registered in the batch's
	// order, each after the one before it committed (SPEC 18).
	var rounds [][]registration
	uses := map[string]int{}
	orders := map[string]int{}
	for i, item := range in {
		ectx, span := a.cfg.Tracing.StartRegistration(ctx, true)
		ev, key, err := a.newEvent(item, "idempotency_key")
		if err != nil {
			out[i].Err = err
			span.End(nil, 0, false, err)
			continue
		}
		span.Event(ev)
		n := 0
		if key != nil {
			n = uses[key.Key]
		}
		if k := ev.OrderingKey; k != "" {
			n = max(n, orders[k])
			orders[k] = n + 1
		}
		if key != nil {
			uses[key.Key] = n + 1
		}
		for len(rounds) <= n {
			rounds = append(rounds, nil)
		}
		rounds[n] = append(rounds[n], registration{i, ev, key, ectx, span})
	}

	for _, round := range rounds {
		var wg sync.WaitGroup
		for _, r := range round {
			wg.Go(func() {
				got, deliveries, created, err := a.register(r.ctx, r.ev, r.key)
				out[r.i] = EventOutcome{Event: got, Created: created, Err: err}
				r.span.End(got, len(deliveries), created, err)
			})
		}
		wg.Wait()
	}

	registered := false
	var unavailable error
	for _, o := range out {
		if o.Created {
			a.cfg.Registered()
		}
		registered = registered || o.Event != nil
		if unavailable == nil && webhooks.ErrorCode(o.Err) == webhooks.EUNAVAILABLE {
			unavailable = o.Err
		}
	}
	if !registered && unavailable != nil {
		return nil, unavailable
	}
	return out, nil
}

// refusedOf counts the refused events of a batch's outcomes.
func refusedOf(out []EventOutcome) int {
	n := 0
	for _, o := range out {
		if o.Err != nil {
			n++
		}
	}
	return n
}
