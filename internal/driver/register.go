package driver

import (
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Registrar is what the queue core's registration needs of a backend: one
// transaction per group of registrations (see queue.Registrar), whose
// reads the core makes through RegisterTx and whose writes it returns.
type Registrar interface {
	// RegisterGroup runs one group's durable transaction: fn reads what
	// the group needs through tx and returns what to write, which the
	// backend writes and commits (in one round trip where it can) before
	// it returns what was written. An error of fn rolls the transaction
	// back and is returned; so is one of the writes, for which nothing
	// was written.
	RegisterGroup(ctx context.Context, fn func(tx RegisterTx) (*GroupWrites, error)) (*GroupWritten, error)
	// GroupCommit says how the backend's registrations are best grouped.
	GroupCommit() GroupCommit
}

// GroupCommit is how a backend's registrations are grouped into
// transactions.
type GroupCommit struct {
	// Registrars is how many groups commit at once; MaxGroup bounds a
	// group, so that one transaction stays short; Window is how long,
	// under load, a registrar waits for its group to grow (0: not at
	// all).
	Registrars int
	MaxGroup   int
	Window     time.Duration
	// SharedWriter says that registrations and the engine's records share
	// one writer (SQLite's one write connection): the registrar makes way
	// for records, which free the slots new deliveries need.
	SharedWriter bool
	// RecordWindow is how long the engine's records of ended attempts may
	// wait for more before they are stored (delivery.Config.RecordWindow).
	RecordWindow time.Duration
	// Processes, if set, says how many processes share the database's
	// load now. Each process's windows are that many times Window and
	// RecordWindow (Scaled): a process that sees a third of the load
	// gathers its groups three times as long, so that the database's
	// transactions per event stay about what one process makes.
	Processes func() int
}

// Scaled is w times Processes() (see ScaleByProcesses).
func (g GroupCommit) Scaled(w time.Duration) time.Duration { return ScaleByProcesses(w, g.Processes) }

// ScaleByProcesses is w times processes(), w alone when processes is nil.
func ScaleByProcesses(w time.Duration, processes func() int) time.Duration {
	if processes == nil {
		return w
	}
	return w * time.Duration(max(processes(), 1))
}

// RegisterTx is a registration group's transaction.
type RegisterTx interface {
	// Begin makes the group's reads, in one round trip where the backend
	// can: it takes the routes locks of r.Locks shared (see
	// Tx.LockRoutes), then reads the versions of routing and of the
	// catalog, the stored idempotency keys r.Keys names (each locked, so
	// that a concurrent registration of one key waits for this one and
	// then finds it), and the owners of r.Owners (as ReadOwners).
	Begin(ctx context.Context, r GroupReads) (*GroupFacts, error)
	// ReadOwners reads the owners of keys, each owner's routes locked
	// shared before its endpoints are read (webhooks.Owners.Locks): a
	// change of those endpoints, which locks them exclusive, commits
	// before the read or waits for this transaction.
	ReadOwners(ctx context.Context, keys []webhooks.OwnersKey) ([]*webhooks.Owners, error)
	// Tails locks each chain (see Chains) and returns its last pending
	// delivery.
	Tails(ctx context.Context, chains []webhooks.OrderKey) (map[webhooks.OrderKey]string, error)
}

// Chains is what a transaction that adds to chains of ordered deliveries
// (SPEC 18) needs of a backend.
type Chains interface {
	// Tails locks each chain until commit, against the other transactions
	// that add to it and those that end one of its deliveries, in one
	// order (chains sorted by endpoint, then key), and returns each one's
	// last pending delivery: the one no pending delivery waits behind
	// (absent when the chain has none pending).
	Tails(ctx context.Context, chains []webhooks.OrderKey) (map[webhooks.OrderKey]string, error)
}

// GroupReads are a group's reads.
type GroupReads struct {
	Locks  []string             // routes keys to lock shared first (those of the cached owners)
	Keys   []string             // idempotency keys
	Owners []webhooks.OwnersKey // owners to read
}

// GroupFacts are what Begin read.
type GroupFacts struct {
	// RoutingVersion counts the changes of what routes events (accounts,
	// companies, endpoints), CatalogVersion those of the catalog; each
	// moves in the changing transaction.
	RoutingVersion int64
	CatalogVersion int64
	// Keys holds the stored keys found, by key.
	Keys map[string]*StoredKey
	// Owners[i] is GroupReads.Owners[i]'s.
	Owners []*webhooks.Owners
}

// StoredKey is a stored idempotency key and the event it registered.
type StoredKey struct {
	webhooks.IdempotencyKey
	EventID string
}

// GroupWrites are what a group writes.
type GroupWrites struct {
	// Events are written with their keys (Keys[i] is Events[i]'s, or nil;
	// a stored key that expired is replaced).
	Events []*webhooks.Event
	Keys   []*webhooks.IdempotencyKey
	// Deliveries are written; the pending ones whose ids Leases holds are
	// inserted claimed with the lease (the engine's, handed to it once
	// committed), the other pending ones due for a claim.
	Deliveries []*webhooks.Delivery
	Leases     map[string]Lease
	// Firsts are events to read back (the first events of repeated keys).
	Firsts []string
}

// Lease is a claim's token and end.
type Lease struct {
	Token string
	Until time.Time
}

// GroupWritten is what a group wrote.
type GroupWritten struct {
	// Inserted holds the ids of the deliveries inserted: an original
	// delivery that exists already for its endpoint and event is not.
	Inserted map[string]bool
	// Firsts holds the events GroupWrites.Firsts named, by id.
	Firsts map[string]*webhooks.Event
}
