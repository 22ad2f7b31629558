package driver

import (
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Store is what the use cases need of a backend: the reads, and
// transactions whose steps (Tx) they compose. A method returns a
// *webhooks.Error with the code its comment names, or an internal error
// (webhooks.EUNAVAILABLE when the database does not answer).
type Store interface {
	// FindAPIKey returns the key with this hash. Returns ENOTFOUND if there
	// is none (or it was revoked).
	FindAPIKey(ctx context.Context, hash []byte) (*webhooks.APIKey, error)
	// FindAccount, FindCompany, FindEndpoint (not deleted) and FindEvent
	// return ENOTFOUND if the object does not exist.
	FindAccount(ctx context.Context, id string) (*webhooks.Account, error)
	FindCompany(ctx context.Context, id string) (*webhooks.Company, error)
	FindEndpoint(ctx context.Context, id string) (*webhooks.Endpoint, error)
	FindEvent(ctx context.Context, id string) (*webhooks.Event, error)
	// FindAccount and FindCompany leave out deleted accounts and
	// companies (SPEC 19). FindEvent (and ListEvents) answer an event as
	// erased (ErasedAt set, no Object) once it is, and already while an
	// erasure of its company or account is under way (its ErasedAt is
	// then the erasure's time), test pings and operational events aside.
	// FindDeletedAccount returns a deleted account (its name erased, its
	// Deleted set); ENOTFOUND for any other id.
	FindDeletedAccount(ctx context.Context, id string) (*webhooks.Account, error)
	// FindDelivery returns the delivery with its attempts, read in one
	// snapshot. Returns ENOTFOUND.
	FindDelivery(ctx context.Context, id string) (*webhooks.Delivery, error)

	// ListEndpoints lists a company's or an account's endpoints.
	ListEndpoints(ctx context.Context, f webhooks.EndpointFilter, p webhooks.Page) (*webhooks.List[*webhooks.Endpoint], error)
	// ListEvents lists events newest first.
	ListEvents(ctx context.Context, f webhooks.EventFilter, p webhooks.Page) (*webhooks.List[*webhooks.Event], error)
	// ListDeliveries lists an endpoint's deliveries newest first, without
	// their bodies: a page of them shows states (the API's delivery
	// object has no body); FindDelivery reads one with it.
	ListDeliveries(ctx context.Context, f webhooks.DeliveryFilter, p webhooks.Page) (*webhooks.List[*webhooks.Delivery], error)
	// ListAudit lists an account's audit entries newest first; accountID
	// "" lists the platform's own (SPEC 8: the changes to platform
	// endpoints, which belong to no account), and no account's list
	// holds them. Only the admin reads the platform's: the use cases
	// check it (app.ListPlatformAudit), never pass "" for an account.
	ListAudit(ctx context.Context, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.AuditEntry], error)
	// ListAccounts lists every account, ListCompanies an account's
	// companies and ListAPIKeys an account's keys (their hashes, never
	// the keys), newest first.
	ListAccounts(ctx context.Context, p webhooks.Page) (*webhooks.List[*webhooks.Account], error)
	ListCompanies(ctx context.Context, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.Company], error)
	ListAPIKeys(ctx context.Context, accountID string, p webhooks.Page) (*webhooks.List[*webhooks.APIKey], error)
	// Lists return EINVALID when p.StartingAfter is not an item of the
	// list.

	// ListAccountCompanies returns every company of the account.
	ListAccountCompanies(ctx context.Context, accountID string) ([]*webhooks.Company, error)
	// ListAccountEndpoints returns every endpoint of the account: its
	// account endpoints and its companies' endpoints, oldest first.
	ListAccountEndpoints(ctx context.Context, accountID string) ([]*webhooks.Endpoint, error)
	// CountDeliveries counts the deliveries of the endpoints created at
	// or after since that f selects, by endpoint, state and bucket of time
	// (bucket 0 starts at since), without reading them.
	CountDeliveries(ctx context.Context, endpointIDs []string, since time.Time, bucket time.Duration, f CountFilter) ([]webhooks.DeliveryCount, error)
	// ListEventDeliveries returns the deliveries of the events to the
	// endpoints, oldest first, without their bodies.
	ListEventDeliveries(ctx context.Context, eventIDs, endpointIDs []string) ([]*webhooks.Delivery, error)
	// LastAttempts returns the last attempt of each of the deliveries
	// that has one, without its response body.
	LastAttempts(ctx context.Context, deliveryIDs []string) ([]*webhooks.Attempt, error)

	// Catalog returns the event-type catalog's version and every type in
	// it, archived ones too, read in one snapshot. The version moves with
	// every change to the catalog, in the transaction that makes it.
	Catalog(ctx context.Context) (version int64, types []*webhooks.EventType, err error)
	// FindEventType returns the declared type. Returns ENOTFOUND.
	FindEventType(ctx context.Context, name string) (*webhooks.EventType, error)
	// ListEventTypes lists the catalog, archived types too, in name order:
	// p.StartingAfter is the name of the last type of the previous page
	// (EINVALID if the catalog has no such type).
	ListEventTypes(ctx context.Context, p webhooks.Page) (*webhooks.List[*webhooks.EventType], error)

	// InitClusterKeys stores k unless the database has keys already, and
	// returns the database's: the first process to start sets them for
	// every other (processes starting together get the one stored).
	InitClusterKeys(ctx context.Context, k *ClusterKeys) (*ClusterKeys, error)
	// FindClusterKeys returns the database's keys. Returns ENOTFOUND
	// before the first InitClusterKeys.
	FindClusterKeys(ctx context.Context) (*ClusterKeys, error)

	// InTx runs fn in one durable transaction, committed if fn returns
	// nil.
	InTx(ctx context.Context, fn func(tx Tx) error) error
	// InLazyTx runs fn as InTx does, committed with Lazy durability: for
	// work that a crash may lose and that is then done again, such as a
	// chunk of an erasure, whose job and cursor roll back with it. The
	// next durable commit makes it durable too.
	InLazyTx(ctx context.Context, fn func(tx Tx) error) error
}

// CountFilter selects the deliveries CountDeliveries counts.
type CountFilter int

const (
	// CountAll counts every delivery.
	CountAll CountFilter = iota
	// CountRetrying counts the deliveries being retried on the schedule:
	// pending after at least one failed attempt, and not sent by hand (a
	// manual retry under way is pending, not retrying). The rule is
	// webhooks.Delivery.Retrying's, in SQL so that the store counts them
	// where it holds the pending deliveries (SQLite: the endpoints'
	// status index; PostgreSQL: the queue), not in the whole history.
	CountRetrying
)

// Tx is one transaction's steps. Those that change several deliveries
// lock them in one order, so that concurrent transactions never deadlock.
type Tx interface {
	// FindAccount, FindCompany and FindEvent read as the Store's do, in
	// the transaction.
	FindAccount(ctx context.Context, id string) (*webhooks.Account, error)
	FindCompany(ctx context.Context, id string) (*webhooks.Company, error)
	FindEvent(ctx context.Context, id string) (*webhooks.Event, error)

	// InsertAccount, InsertAPIKey and InsertEndpoint store new objects
	// whose references the caller checked in this transaction.
	InsertAccount(ctx context.Context, a *webhooks.Account) error
	InsertAPIKey(ctx context.Context, k *webhooks.APIKey) error
	InsertEndpoint(ctx context.Context, e *webhooks.Endpoint) error
	// InsertCompany returns ENIFTAKEN if another company has the NIF.
	InsertCompany(ctx context.Context, c *webhooks.Company) error
	// DeleteAPIKey deletes an account's key. Returns ENOTFOUND if the
	// account has no such key.
	DeleteAPIKey(ctx context.Context, accountID, keyID string) error

	// LockRoutes orders this transaction against the registration of
	// events routed to the owner's (a company's, an account's, or the
	// platform's: webhooks.PlatformRoutes) endpoints: a registration
	// either commits before it, and a change of an endpoint that follows
	// sees the registration's deliveries, or after it, and routes by the
	// change.
	LockRoutes(ctx context.Context, ownerID string) error
	// ReadOwners reads what routing events of keys needs, as a
	// registration does (RegisterTx.ReadOwners): each owner's routes locked
	// shared first.
	ReadOwners(ctx context.Context, keys []webhooks.OwnersKey) ([]*webhooks.Owners, error)
	// LockEndpoint reads an endpoint (not deleted) this transaction may
	// change, locked until commit. ShareEndpoint reads one that must not
	// change until commit; other transactions may share it. Both return
	// ENOTFOUND.
	LockEndpoint(ctx context.Context, id string) (*webhooks.Endpoint, error)
	ShareEndpoint(ctx context.Context, id string) (*webhooks.Endpoint, error)
	// UpdateEndpoint writes e's settings, status, secrets and health.
	UpdateEndpoint(ctx context.Context, e *webhooks.Endpoint) error
	// DeleteEndpoint marks the endpoint deleted and forgets its secrets;
	// its deliveries stay in the history.
	DeleteEndpoint(ctx context.Context, id string, now time.Time) error
	// EndPending ends the endpoint's pending deliveries failed with
	// reason. One being attempted keeps its claim, so that its attempt
	// still records (only a success then changes its state).
	EndPending(ctx context.Context, endpointID, reason string, now time.Time) error

	// InsertEvent stores an event (a test event, or an operational one:
	// the Registrar stores the producers').
	InsertEvent(ctx context.Context, ev *webhooks.Event) error
	// InsertDeliveries stores ds and returns those stored: an original
	// delivery that already exists for its endpoint and event is skipped.
	// A pending one is due at its NextAttemptAt, unless it waits behind
	// another of its chain (WaitingFor).
	InsertDeliveries(ctx context.Context, ds []*webhooks.Delivery) ([]*webhooks.Delivery, error)
	// Tails is as the registration's (driver.Chains).
	Tails(ctx context.Context, chains []webhooks.OrderKey) (map[webhooks.OrderKey]string, error)
	// LockDelivery reads a delivery (without attempts), locked until
	// commit. Returns ENOTFOUND.
	LockDelivery(ctx context.Context, id string) (*webhooks.Delivery, error)
	// Rearm writes the state webhooks.Delivery.Rearm gave each delivery
	// (locked by this transaction), its chain and what it waits behind
	// too, and makes it due then (unless it waits). A claim still held on
	// one is dropped: that attempt records nothing.
	Rearm(ctx context.Context, ds []*webhooks.Delivery) error
	// RecoverCandidates returns, locked, the deliveries a recovery
	// considers: those of f.EndpointID created in [f.CreatedGTE,
	// f.CreatedLT) in one of f.Statuses that are the newest delivery of
	// their event to the endpoint (a replay of a replay would send the
	// event twice more), each with its event's time and test flag. The
	// rule "the newest delivery of its event" is in SQL for speed (an
	// index answers it).
	RecoverCandidates(ctx context.Context, f webhooks.RecoverFilter) ([]webhooks.RecoverCandidate, error)

	// LockAccount reads an account (not deleted), locked until commit:
	// a deletion of it and the creation of a company or a managed account
	// of it take turns. Returns ENOTFOUND.
	LockAccount(ctx context.Context, id string) (*webhooks.Account, error)
	// UpdateAccount and UpdateCompany write the name of an account or a
	// company that exists (not deleted).
	UpdateAccount(ctx context.Context, a *webhooks.Account) error
	UpdateCompany(ctx context.Context, c *webhooks.Company) error
	// AccountCompanies returns, in the transaction, every company of the
	// account (not deleted), oldest first.
	AccountCompanies(ctx context.Context, accountID string) ([]*webhooks.Company, error)
	// HasManagedAccounts reports whether an account that the account
	// provisioned exists (not deleted).
	HasManagedAccounts(ctx context.Context, accountID string) (bool, error)
	// DeleteCompany marks the company deleted at now, erases its name and
	// frees its NIF for a new company; the row stays, so that its events
	// keep their owner. DeleteAccount does the same for an account (its
	// name) and deletes its API keys: they stop working at once. Neither
	// touches endpoints or events: the caller deletes the endpoints and
	// stores an Erasure for the events.
	DeleteCompany(ctx context.Context, id string, now time.Time) error
	DeleteAccount(ctx context.Context, id string, now time.Time) error
	// EraseEvents erases the events (webhooks.Event.Erase, erased_at at,
	// unless an event was erased before): each one's object and
	// traceparent, its deliveries' bodies and their attempts' response
	// bodies; each pending delivery of theirs ends failed with
	// webhooks.ReasonEventErased (one being attempted keeps its claim, as
	// EndPending's do, and its attempt, recorded later, is stored without
	// its response body: the statement that stores a record knows an
	// erased delivery by its empty body, which no other delivery has).
	// Ids that name no event are skipped.
	EraseEvents(ctx context.Context, ids []string, at time.Time) error
	// EndPendingOf ends failed, with webhooks.ReasonEventErased, the
	// endpoint's pending deliveries of the events the erasure will erase,
	// as EndPending does: a deletion does it at once on the endpoints
	// that stay (the account's and the provisioning account's), so that
	// nothing of the deleted owner is sent while its erasure is under way.
	EndPendingOf(ctx context.Context, endpointID string, e *webhooks.Erasure, now time.Time) error
	// InsertErasure stores an erasure job. NextErasure returns the oldest
	// one, locked until commit (one another transaction holds is
	// skipped), or nil when there is none. EraseChunk erases, as
	// EraseEvents does with erased_at e.Created, the next limit events of
	// the erasure (its owner's events, test pings and operational events
	// aside, oldest first after those of its earlier chunks, ties in
	// created broken as the backend's lists break them),
	// records how far it went, and returns how many it erased: fewer than
	// limit means none is left. DeleteErasure deletes a finished job.
	InsertErasure(ctx context.Context, e *webhooks.Erasure) error
	NextErasure(ctx context.Context) (*webhooks.Erasure, error)
	EraseChunk(ctx context.Context, e *webhooks.Erasure, limit int) (int, error)
	DeleteErasure(ctx context.Context, id string) error

	// InsertAudit stores a complete audit entry: an account's, or the
	// platform's when its AccountID is "".
	InsertAudit(ctx context.Context, e *webhooks.AuditEntry) error

	// InsertOutbox stores outbox entries (see webhooks.OutboxEntry).
	InsertOutbox(ctx context.Context, entries []*webhooks.OutboxEntry) error
	// Outbox returns up to limit entries, oldest first, locked until
	// commit; an entry another transaction holds is skipped.
	Outbox(ctx context.Context, limit int) ([]*webhooks.OutboxEntry, error)
	// DeleteOutbox deletes entries.
	DeleteOutbox(ctx context.Context, ids []string) error

	// LockClusterKeys reads the database's keys, locked until commit.
	// Returns ENOTFOUND. UpdateClusterKeys replaces them.
	LockClusterKeys(ctx context.Context) (*ClusterKeys, error)
	UpdateClusterKeys(ctx context.Context, k *ClusterKeys) error
	// LockCatalog orders this transaction, which changes the catalog,
	// after the registrations that read the catalog's version before it
	// and before those that read it after, and against the other changes
	// of the catalog.
	LockCatalog(ctx context.Context) error
	// FindEventType reads as the Store's does, in the transaction.
	FindEventType(ctx context.Context, name string) (*webhooks.EventType, error)
	// InsertEventType stores a new type, and UpdateEventType writes every
	// field of one that exists; each moves the catalog's version.
	InsertEventType(ctx context.Context, t *webhooks.EventType) error
	UpdateEventType(ctx context.Context, t *webhooks.EventType) error
}
