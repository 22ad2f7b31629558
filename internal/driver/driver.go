// Package driver is the contract between a storage backend and the code
// above it: the types and narrow interfaces a backend implements, each
// declared for the consumer that needs it. The use cases (internal/app)
// need Store and its transactions' steps (Tx); the queue core
// (internal/queue) needs Registrar and Queue; the service's background
// work needs Maintenance.
//
// A backend imports the domain (the root package) and this package, and
// nothing above them: it never calls back up. The algorithms (routing and
// its cache, idempotency, the hand-off to the engine, claims within caps,
// the health of endpoints, operational events) live above, once; a
// backend supplies the SQL steps they are made of, in as few round trips
// as it can. The few rules that run inside SQL for speed (a selection, a
// filter) are named where their step is declared, and the store suite
// (internal/storetest) holds every backend to them.
package driver

import (
	"context"
	"time"
)

// Driver is a complete storage backend.
type Driver interface {
	Store
	Registrar
	Queue
	Maintenance
	Relay
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// StoreBytes returns the bytes the store's tables and indexes take
	// (the webhooks_store_bytes gauge, and the bench's bytes per event).
	StoreBytes(ctx context.Context) (int64, error)
	// Close releases the backend's resources.
	Close() error
}

// ClusterKeys are the keys every process on one database shares: the hash
// of the platform's admin key, stored by the first process to start, and
// the key that signs portal links, session cookies and CSRF tokens.
type ClusterKeys struct {
	AdminKeyHash []byte // SHA-256 of the admin key
	PortalKey    []byte // 32 random bytes
	Updated      time.Time
}

// Durability of a write transaction.
type Durability int

const (
	// Durable commits wait for the disk: everything the API accepts.
	Durable Durability = iota
	// Lazy commits do not: bookkeeping whose last commits a crash may lose
	// at no cost (the purge, which runs again).
	Lazy
)
