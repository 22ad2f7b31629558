package delivery

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// observer hands the stored records that may change an endpoint's health
// (SPEC 14) to Config.Observe, in the order they were stored, on a
// goroutine of its own: what it does (disable an endpoint, register
// operational events) takes transactions that the dispatcher must not wait
// for.
type observer struct {
	fn      func(context.Context, []*webhooks.AttemptRecord)
	mu      sync.Mutex
	todo    []*webhooks.AttemptRecord
	pending atomic.Int64 // records added and not observed yet
	wake    chan struct{}
	done    chan struct{}
}

func newObserver(fn func(context.Context, []*webhooks.AttemptRecord)) *observer {
	return &observer{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// noteworthy reports whether r may change its endpoint's health: its
// streak is failing or ended a failing one, it answered 410 Gone, or its
// delivery ended failed_permanently. A healthy endpoint's 2xx is not.
func noteworthy(r *webhooks.AttemptRecord) bool {
	if h := r.Health; h != nil && (h.After >= webhooks.FailingAfter || h.Recovered != nil || h.Failing != nil) {
		return true
	}
	return r.Attempt.ResponseStatus == http.StatusGone || r.Transition.Status == webhooks.DeliveryFailedPermanently
}

// add queues the noteworthy records of a stored batch.
func (o *observer) add(records []*webhooks.AttemptRecord) {
	if o == nil {
		return
	}
	o.mu.Lock()
	n := len(o.todo)
	for _, r := range records {
		if noteworthy(r) {
			o.todo = append(o.todo, r)
		}
	}
	added := len(o.todo) > n
	o.pending.Add(int64(len(o.todo) - n))
	o.mu.Unlock()
	if added {
		select {
		case o.wake <- struct{}{}:
		default:
		}
	}
}

// run observes until ctx ends, then what is left, within a few seconds.
func (o *observer) run(ctx context.Context) {
	defer close(o.done)
	for {
		select {
		case <-o.wake:
			o.observe(ctx)
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			o.observe(last)
			cancel()
			return
		}
	}
}

func (o *observer) observe(ctx context.Context) {
	for {
		o.mu.Lock()
		todo := o.todo
		o.todo = nil
		o.mu.Unlock()
		if len(todo) == 0 {
			return
		}
		o.fn(ctx, todo)
		o.pending.Add(-int64(len(todo)))
	}
}

// Observing reports whether records wait for Config.Observe or are being
// observed: tests wait for it to be false before they count what the
// observations registered.
func (e *Engine) Observing() bool {
	return e.observer != nil && e.observer.pending.Load() > 0
}
