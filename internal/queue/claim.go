package queue

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// Queue is the work queue the delivery engine takes deliveries from and
// records attempts in (delivery.Queue), over a backend's steps.
type Queue struct {
	drv   driver.Queue
	rule  webhooks.HealthRule
	drain func()
	now   func() time.Time
}

// QueueConfig configures a Queue.
type QueueConfig struct {
	// Health decides what attempts make happen to their endpoints.
	Health webhooks.HealthRule
	// Drain, if set, is called after a transaction stored outbox entries:
	// it wakes what drains them.
	Drain func()
	// Now is the clock of records stored without a claim.
	Now func() time.Time
}

// NewQueue returns the queue on drv.
func NewQueue(drv driver.Queue, cfg QueueConfig) *Queue {
	q := &Queue{drv: drv, rule: cfg.Health, drain: cfg.Drain, now: cfg.Now}
	if q.drain == nil {
		q.drain = func() {}
	}
	if q.now == nil {
		q.now = time.Now
	}
	return q
}

// Claim sizes.
const (
	// maxChunk is how many due deliveries a claim reads at a time past the
	// first chunk, which is twice what it wants (20 at least).
	maxChunk = 200
	// maxRounds bounds the chunks one claim reads past the first, so that
	// one transaction stays short; the rest waits for the next claim.
	maxRounds = 10
)

// ClaimDeliveries stores r.Records, then claims up to r.Limit due
// deliveries (none when r.Limit is 0), oldest due first, each endpoint
// within r.PerEndpoint claims. A due delivery whose endpoint holds its cap
// is parked instead of being read again at every claim: a deep backlog on
// one endpoint is read once, and cannot keep other endpoints' due
// deliveries out of a claim. The parked deliveries are the endpoint's
// queue: each claim takes, oldest first, as many of them as the endpoint
// has free slots (claims recorded, handed back or lapsed).
//
// The records' consequences are stored in the same transaction: each
// endpoint's streak of failures, and the operational events and disables
// they call for, as outbox entries (see webhooks.HealthRule).
func (q *Queue) ClaimDeliveries(ctx context.Context, r webhooks.ClaimRequest) ([]*webhooks.Claim, error) {
	var outbox bool
	claims, err := q.drv.Claim(ctx, func(tx driver.QueueTx) (*driver.QueueWrites, error) {
		steps := webhooks.StreakSteps(r.Records)
		reads := driver.QueueReads{Now: r.Now, Records: r.Records, Limit: r.Limit, Cap: r.PerEndpoint, Chunk: min(maxChunk, max(2*r.Limit, 20))}
		for _, st := range steps {
			reads.Streaks = append(reads.Streaks, st.EndpointID)
			if st.Failed() {
				reads.Failed = append(reads.Failed, st.EndpointID)
			}
		}
		for _, rec := range r.Records {
			rec.Lapsed, rec.Exhausted, rec.Health = false, false, nil
		}
		facts, err := tx.Begin(ctx, reads)
		if err != nil {
			return nil, err
		}
		w := &driver.QueueWrites{Token: r.Token, LeaseUntil: r.LeaseUntil, Now: r.Now, Cap: r.PerEndpoint, Traceparents: r.Traceparents}
		q.fold(steps, r.Records, facts.Streaks, w)
		outbox = len(w.Outbox) > 0
		if r.Limit > 0 {
			if err := pick(ctx, tx, r, facts, w); err != nil {
				return nil, err
			}
		}
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	if outbox {
		q.drain()
	}
	if r.Hold != nil {
		for _, c := range claims {
			r.Hold(c.Endpoint.ID)
		}
	}
	return claims, nil
}

// RecordAttempts stores records (see ClaimDeliveries), without a claim.
func (q *Queue) RecordAttempts(ctx context.Context, records []*webhooks.AttemptRecord) error {
	if len(records) == 0 {
		return nil
	}
	_, err := q.ClaimDeliveries(ctx, webhooks.ClaimRequest{Now: q.now(), Records: records})
	return err
}

// ReleaseClaims hands back claimed deliveries without an attempt.
func (q *Queue) ReleaseClaims(ctx context.Context, token string, ids []string) error {
	return q.drv.ReleaseClaims(ctx, token, ids)
}

// DeferClaims hands back claimed deliveries without an attempt, each due
// again at its Until: those a rate limit or a cap held back (SPEC 14).
func (q *Queue) DeferClaims(ctx context.Context, deferrals []webhooks.Deferral) error {
	return q.drv.DeferClaims(ctx, deferrals)
}

// NextScheduled returns the earliest next attempt due after now, or the
// zero time when nothing is scheduled.
func (q *Queue) NextScheduled(ctx context.Context, now time.Time) (time.Time, error) {
	return q.drv.NextScheduled(ctx, now)
}

// fold applies the records to their endpoints' streaks (each endpoint's
// last record gets the Health), and adds to w the new streaks and what the
// health rule makes of them, as of the end of the endpoint's last attempt
// (the engine's clock, whoever stores the records). Every record counts, a
// lapsed claim's too: the receiver's answer is real (SPEC 14).
func (q *Queue) fold(steps []webhooks.StreakStep, records []*webhooks.AttemptRecord, streaks map[string]webhooks.Streak, w *driver.QueueWrites) {
	for _, st := range steps {
		old, locked := streaks[st.EndpointID]
		if !locked && st.Failed() {
			continue // no such endpoint (one that exists is locked)
		}
		h := st.Apply(old.Length, old.Since)
		if locked && (h.After != old.Length || !h.FailingSince.Equal(old.Since)) {
			w.Streaks = append(w.Streaks, driver.StreakUpdate{EndpointID: st.EndpointID, Streak: webhooks.Streak{Length: h.After, Since: h.FailingSince}})
		}
		records[st.Last].Health = &h
		var ep *webhooks.Endpoint
		var now time.Time
		own := make([]*webhooks.AttemptRecord, len(st.Records))
		for i, j := range st.Records {
			own[i] = records[j]
			if ep == nil {
				ep = records[j].Endpoint
			}
			if end := records[j].Attempt.StartedAt.Add(records[j].Attempt.Duration); end.After(now) {
				now = end
			}
		}
		if ep != nil {
			w.Outbox = append(w.Outbox, q.rule.Entries(ep, h, own, now)...)
		}
	}
}

// pick chooses what the claim takes among the candidates Begin read, and
// reads on through the due index while the claim has room and the index
// has more (a chunk all of endpoints at their cap, say), so many chunks
// at most.
func pick(ctx context.Context, tx driver.QueueTx, r webhooks.ClaimRequest, facts *driver.QueueFacts, w *driver.QueueWrites) error {
	held := map[string]int{}
	for id, n := range facts.Held {
		held[id] = n
	}
	taken := map[string]bool{}
	cands := slices.Concat(facts.Parked, facts.Due)
	cursor, more := facts.Cursor, facts.More
	for round := 0; ; round++ {
		// Oldest due first, wherever it waited: an endpoint's queue or the
		// due index.
		slices.SortFunc(cands, func(a, b driver.Candidate) int {
			return cmp.Or(a.Due.Compare(b.Due), strings.Compare(a.ID, b.ID))
		})
		for _, c := range cands {
			if len(w.Claim) == r.Limit {
				return nil
			}
			if taken[c.ID] {
				continue
			}
			taken[c.ID] = true
			if r.PerEndpoint > 0 && held[c.EndpointID] >= r.PerEndpoint {
				if !c.Parked {
					w.Park = append(w.Park, c.ID) // over the cap: it waits in its endpoint's queue
				}
				continue
			}
			held[c.EndpointID]++
			w.Claim = append(w.Claim, c.ID)
		}
		if !more || round == maxRounds {
			return nil
		}
		// Past the first chunk, read whole chunks: this is a backlog.
		var err error
		if cands, cursor, err = tx.Scan(ctx, r.Now, cursor, maxChunk); err != nil {
			return err
		}
		more = len(cands) == maxChunk
	}
}
