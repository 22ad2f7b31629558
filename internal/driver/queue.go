package driver

import (
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Queue is what the queue core's claims and records need of a backend:
// the work queue's transactions. They commit lazily (synchronous commit
// off): a crash may lose their last commits, which only repeats attempts
// or leaves a claim to lapse, and never loses an event.
type Queue interface {
	// Claim runs one claim's transaction: fn reads what it needs through
	// tx and returns what to write, which the backend writes and commits
	// (in one round trip where it can), returning the claims made.
	Claim(ctx context.Context, fn func(tx QueueTx) (*QueueWrites, error)) ([]*webhooks.Claim, error)
	// ReleaseClaims hands back claimed deliveries without an attempt: due
	// again at once (one that ended meanwhile keeps its end). A release
	// whose token the delivery no longer holds is dropped.
	ReleaseClaims(ctx context.Context, token string, ids []string) error
	// DeferClaims hands back claimed deliveries without an attempt, each
	// due again at its Until (one that ended meanwhile keeps its end). A
	// deferral whose token the delivery no longer holds is dropped.
	DeferClaims(ctx context.Context, deferrals []webhooks.Deferral) error
	// NextScheduled returns the earliest next attempt due after now, or
	// the zero time when nothing is scheduled.
	NextScheduled(ctx context.Context, now time.Time) (time.Time, error)
}

// QueueTx is a claim's transaction.
type QueueTx interface {
	// Begin makes the claim's first reads and stores its records, in one
	// round trip where the backend can, in this order (which is the order
	// every transaction that changes endpoints and their deliveries locks
	// them in, so that none deadlocks):
	//
	//  0. It locks the chains (see Chains) of the records' deliveries that
	//     belong to one (AttemptRecord.Delivery.OrderingKey).
	//
	//  1. It locks the endpoints of r.Streaks that have a streak of
	//     failures or are in r.Failed, and returns their streaks as they
	//     were: the others have none, and a batch of successes leaves
	//     them so.
	//  2. It stores r.Records: each attempt, and its delivery's new state,
	//     if the delivery still holds the record's claim (fencing: a
	//     lapsed claim records nothing of the delivery; the backend sets
	//     its Lapsed). While the delivery is pending the transition
	//     decides its state; one that ended meanwhile (its endpoint was
	//     disabled or deleted) keeps its end unless the transition
	//     webhooks.Transition.OverridesEnd: the rule runs in SQL, in the
	//     statement that stores the record. Of two records of one
	//     delivery, the first that holds the claim counts. The backend
	//     sets Exhausted on a record whose delivery it stored
	//     failed_permanently. A record that ends a delivery of a chain
	//     releases the one that waits behind it, which is due then.
	//  3. With r.Limit > 0 it reads the candidates of the claim (each
	//     locked, skipping those another transaction holds): the claims
	//     held per endpoint at r.Now (with r.Cap), the parked deliveries of
	//     each endpoint up to its free slots (all of them without a cap)
	//     and r.Limit in all, oldest due first, and the first r.Chunk
	//     deliveries due at r.Now that no unexpired claim holds and that
	//     are not parked, oldest due first (with those whose claim lapsed,
	//     r.Limit at most).
	Begin(ctx context.Context, r QueueReads) (*QueueFacts, error)
	// Scan reads the next n due deliveries after the candidate after (a
	// Cursor), as Begin's third step does (lapsed claims aside), and
	// returns them with the new cursor.
	Scan(ctx context.Context, now time.Time, after Candidate, n int) ([]Candidate, Candidate, error)
}

// QueueReads are a claim's first reads and its records.
type QueueReads struct {
	Now     time.Time
	Records []*webhooks.AttemptRecord
	// Streaks are the records' endpoints, Failed those with a failed
	// record among them.
	Streaks []string
	Failed  []string
	// Limit bounds the claim (0: records only); Cap is the claims an
	// endpoint may hold (0: no cap); Chunk is how many due deliveries to
	// read at first.
	Limit int
	Cap   int
	Chunk int
}

// QueueFacts are what Begin read.
type QueueFacts struct {
	// Streaks holds the locked endpoints' streaks before the records.
	Streaks map[string]webhooks.Streak
	// Held counts the unexpired claims of each endpoint (with a cap).
	Held map[string]int
	// Parked and Due are the claim's candidates. Cursor is the last due
	// delivery read from the due index (lapsed claims aside), where Scan
	// goes on; More says the index may have more (Chunk were read).
	Parked []Candidate
	Due    []Candidate
	Cursor Candidate
	More   bool
}

// Candidate is a delivery a claim may take.
type Candidate struct {
	ID, EndpointID string
	Due            time.Time
	Parked         bool
}

// QueueWrites are what a claim writes: streaks and outbox entries (the
// records' consequences), claims and parked deliveries.
type QueueWrites struct {
	Streaks []StreakUpdate
	Outbox  []*webhooks.OutboxEntry
	// Claim are the deliveries to claim with Token until LeaseUntil, in
	// order, each only while its endpoint holds fewer than Cap claims at
	// Now (0: no cap), counted again under a lock of the endpoint's that
	// its claimers take in turn, so that the cap on claims holds across
	// processes (the picks were counted without it); one that does not
	// fit is parked. Park are those to park (out of the due index until
	// their endpoint has a free slot). Traceparents asks for each claim's
	// event's.
	Claim        []string
	Token        string
	LeaseUntil   time.Time
	Now          time.Time
	Cap          int
	Traceparents bool
	Park         []string
}

// StreakUpdate is an endpoint's new streak of failures.
type StreakUpdate struct {
	EndpointID string
	webhooks.Streak
}
