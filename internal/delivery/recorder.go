package delivery

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// recorder holds the records of ended attempts until they are stored:
// with Config.RecordApart, by its own goroutine (run) as soon as they end,
// since an attempt's claim holds one of its endpoint's slots until its
// record commits and the sooner it is stored the sooner the dispatcher can
// hand the slot on; otherwise by the dispatcher's next claim. Records that
// end while a batch is being stored make the next batch, so the
// transactions grow with the load instead of multiplying.
type recorder struct {
	*Engine
	mu      sync.Mutex
	pending []*webhooks.AttemptRecord
	// unstored counts the records added and not yet stored by run: their
	// claims still hold slots.
	unstored atomic.Int64
	signal   chan struct{} // a record is pending
	done     chan struct{} // closed when run has stored the last records
}

func newRecorder(e *Engine) *recorder {
	return &recorder{Engine: e, signal: make(chan struct{}, 1), done: make(chan struct{})}
}

// add queues a record to store. It never blocks.
func (r *recorder) add(rec *webhooks.AttemptRecord) {
	r.unstored.Add(1)
	r.mu.Lock()
	r.pending = append(r.pending, rec)
	r.mu.Unlock()
	r.poke()
}

// putBack returns records that could not be stored to the pending ones.
func (r *recorder) putBack(records []*webhooks.AttemptRecord) {
	if len(records) == 0 {
		return
	}
	r.mu.Lock()
	r.pending = append(records, r.pending...)
	r.mu.Unlock()
}

// take returns the pending records and forgets them.
func (r *recorder) take() []*webhooks.AttemptRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	batch := r.pending
	r.pending = nil
	return batch
}

// run stores records until stop is closed, then stores the last ones,
// retrying for a while: an attempt whose record is lost is made again once
// its claim lapses, so the worst outcome of giving up is a repeated
// attempt.
func (r *recorder) run(stop <-chan struct{}) {
	defer close(r.done)
	var batch []*webhooks.AttemptRecord
	backoff := time.Duration(0)
	for {
		stopping := false
		select {
		case <-r.signal:
		case <-stop:
			stopping = true
		}
		batch = append(batch, r.take()...)
		if len(batch) == 0 {
			if stopping {
				return
			}
			continue
		}
		if stopping {
			r.flush(batch)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := r.cfg.Store.RecordAttempts(ctx, batch)
		cancel()
		if err != nil {
			backoff = min(max(2*backoff, 50*time.Millisecond), 5*time.Second)
			r.cfg.Logger.Error("delivery: recording attempts failed; retrying", "attempts", len(batch), "err", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-stop:
			}
			r.poke()
			continue
		}
		backoff = 0
		r.stored(batch)
		batch = nil
		r.Wake() // their endpoints' slots are free
	}
}

// poke makes run look at its pending records again.
func (r *recorder) poke() {
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

// flush stores the last batch, and whatever arrives meanwhile, retrying
// for up to 30 seconds.
func (r *recorder) flush(batch []*webhooks.AttemptRecord) {
	deadline := time.Now().Add(30 * time.Second)
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, 2*time.Second) {
		batch = append(batch, r.take()...)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := r.cfg.Store.RecordAttempts(ctx, batch)
		cancel()
		if err == nil {
			r.stored(batch)
			return
		}
		if time.Now().After(deadline) {
			r.cfg.Logger.Error("delivery: could not store the last attempts; they will be made again when their claims lapse", "attempts", len(batch), "err", err)
			return
		}
		time.Sleep(backoff)
	}
}

// stored reports records just stored.
func (r *recorder) stored(batch []*webhooks.AttemptRecord) {
	r.unstored.Add(-int64(len(batch)))
	for _, rec := range batch {
		r.cfg.Metrics.Recorded(rec)
	}
	if r.cfg.Recorded != nil {
		r.cfg.Recorded(batch)
	}
}
