// Package queue is the queue's core: the algorithms of the work queue,
// written once above the storage backends (internal/driver). It registers
// events in groups (Registrar: idempotency, the catalog's check,
// attribution, routing with one cache, the hand-off of new deliveries to
// this process's engine, the wake-up of the others), and it claims due
// deliveries and records attempts for the delivery engine (Queue), where
// the domain decides which records count, what each endpoint's streak of
// failures becomes and what fires; what fires is stored as outbox entries
// in the same transaction (see webhooks.OutboxEntry).
//
// A backend supplies the SQL steps, in as few round trips as it can; it
// never calls back up. The core hands the engine what it registers itself.
package queue

import (
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Engine is this process's delivery engine as the registrar hands it the
// deliveries it registers: inserted already claimed by the engine, in the
// registering transaction, and passed over in memory once committed, so
// that the common case costs the engine no claim transaction. The claim
// still protects a crash: when it lapses, any process may claim the
// delivery.
type Engine interface {
	// Lease takes a slot for an attempt to the endpoint now, within the
	// engine's concurrency, and returns the claim's token and end; ok is
	// false when there is no room (the delivery is then left for a
	// claim).
	Lease(endpointID string, now time.Time) (token string, until time.Time, ok bool)
	// Hand passes over the claims of leases that committed; the engine
	// attempts them at once.
	Hand(claims []*webhooks.Claim)
	// Unlease gives back leases that did not commit, one per endpoint id.
	Unlease(endpointIDs []string)
	// HasRoom reports whether the engine is running below its
	// concurrency.
	HasRoom() bool
	// Pace waits, at most max, for the engine to store its next records,
	// if it is waiting to store some now or full is set (the registrar
	// found it without room): with a backend whose registrations and
	// records share one writer, the registrar calls it before each group,
	// so that registration makes way for the records that free the slots
	// new deliveries need, and cannot outrun delivery into a backlog.
	Pace(ctx context.Context, full bool, max time.Duration)
}
