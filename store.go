package webhooks

import (
	"context"
	"time"
)

// Page selects one page of a list, newest first.
type Page struct {
	Limit         int    // 1 to 100; the API defaults it to 20
	StartingAfter string // the id of the last item of the previous page
}

// List is one page of a list.
type List[T any] struct {
	Data    []T
	HasMore bool
}

// EndpointFilter selects the endpoints of one company or one account (the
// account's account endpoints, not its companies').
type EndpointFilter struct {
	CompanyID string
	AccountID string
}

// EventFilter selects events: those of a company, or an account's own
// (its account.* events and its companies' events). Test events are never
// listed.
type EventFilter struct {
	CompanyID  string
	AccountID  string
	Type       string
	CreatedGTE time.Time // zero: no bound
	CreatedLT  time.Time // zero: no bound
}

// DeliveryFilter selects an endpoint's deliveries.
type DeliveryFilter struct {
	EndpointID string
	Status     string // empty: any
	EventID    string // empty: any
}

// DeliveryCount is how many deliveries of an endpoint, in one state, were
// created in one bucket of time (see Store.CountDeliveries).
type DeliveryCount struct {
	EndpointID string
	Bucket     int // 0 for the bucket that starts at the since asked for
	Status     string
	N          int
}

// IdempotencyKey is a producer's Idempotency-Key for POST /v1/events: the
// same key within IdempotencyWindow returns the first event.
type IdempotencyKey struct {
	Key         string
	RequestHash []byte // a hash of the request body, to refuse a reused key
	Created     time.Time
}

// IdempotencyWindow is how long a producer's Idempotency-Key is remembered.
const IdempotencyWindow = 24 * time.Hour

// ClaimRequest asks for due deliveries to attempt.
type ClaimRequest struct {
	Now   time.Time
	Limit int
	// Token identifies this claim; the attempt is recorded only if the
	// delivery still holds it.
	Token string
	// LeaseUntil is when the claim lapses if no attempt is recorded: then
	// another worker may claim the delivery again.
	LeaseUntil time.Time
	// PerEndpoint caps the unexpired claims an endpoint may hold, counting
	// claims held by every worker on the database (0: no cap).
	PerEndpoint int
	// Records are stored first, in the same transaction (as RecordAttempts
	// would): the claims they end free their endpoints' slots for this
	// claim, without a commit in between.
	Records []*AttemptRecord
}

// Claim is a delivery claimed for an attempt, with what the attempt needs
// of its endpoint (the URL and secrets at attempt time, not at creation).
type Claim struct {
	Delivery *Delivery // without Attempts
	Endpoint *Endpoint // ID, Scope, URL and secrets
	Token    string
}

// AttemptRecord is the result of an attempt on a claimed delivery.
type AttemptRecord struct {
	Token      string
	Attempt    *Attempt
	Transition Transition
}

// QueueStats describes the work queue at one moment.
type QueueStats struct {
	// Due counts the pending deliveries whose attempt is due and not
	// started (not claimed, or claimed by a worker that is gone).
	Due int
	// OldestDue is when the oldest of them became due (zero when none).
	OldestDue time.Time
	// InFlight counts the deliveries claimed now, by every worker.
	InFlight int
}

// Store keeps everything the service knows. Each method is one transaction.
// Methods return *Error values with the codes their comments name, and
// internal errors otherwise. Times are stored with millisecond precision.
type Store interface {
	// CreateAccount stores a new account. Returns EINVALIDPROVISIONING if
	// ProvisionedBy is unknown or itself managed.
	CreateAccount(ctx context.Context, a *Account) error
	// FindAccount returns ENOTFOUND if the account does not exist.
	FindAccount(ctx context.Context, id string) (*Account, error)

	// CreateAPIKey stores a key's hash. Returns ENOTFOUND if the account
	// does not exist.
	CreateAPIKey(ctx context.Context, k *APIKey, audit *AuditEntry) error
	// RevokeAPIKey deletes an account's key. Returns ENOTFOUND if the
	// account has no such key.
	RevokeAPIKey(ctx context.Context, accountID, keyID string, now time.Time, audit *AuditEntry) error
	// FindAPIKey returns the key with this hash. Returns ENOTFOUND if there
	// is none (or it was revoked).
	FindAPIKey(ctx context.Context, hash []byte) (*APIKey, error)

	// CreateCompany returns EUNKNOWNACCOUNT if the account does not exist
	// and ENIFTAKEN if the NIF belongs to another company.
	CreateCompany(ctx context.Context, c *Company) error
	// FindCompany returns ENOTFOUND if the company does not exist.
	FindCompany(ctx context.Context, id string) (*Company, error)
	// ListCompanies lists an account's companies, newest first.
	ListCompanies(ctx context.Context, accountID string, p Page) (*List[*Company], error)

	// CreateEndpoint stores a validated endpoint. Returns ENOTFOUND if its
	// company or account does not exist.
	CreateEndpoint(ctx context.Context, e *Endpoint, audit *AuditEntry) error
	// FindEndpoint returns ENOTFOUND if the endpoint does not exist or was
	// deleted.
	FindEndpoint(ctx context.Context, id string) (*Endpoint, error)
	// ListEndpoints lists a company's or an account's endpoints.
	ListEndpoints(ctx context.Context, f EndpointFilter, p Page) (*List[*Endpoint], error)
	// UpdateEndpoint applies u. Disabling the endpoint ends its pending
	// deliveries failed with ReasonEndpointDisabled. Returns ENOTFOUND, or
	// the validation error of u.Apply.
	UpdateEndpoint(ctx context.Context, id string, u *EndpointUpdate, now time.Time, audit *AuditEntry) (*Endpoint, error)
	// DeleteEndpoint deletes the endpoint; its pending deliveries end failed
	// with ReasonEndpointDeleted and its history is kept. Returns ENOTFOUND.
	DeleteEndpoint(ctx context.Context, id string, now time.Time, audit *AuditEntry) error
	// RotateSecret makes secret the endpoint's secret; the old one keeps
	// signing until previousExpires (ending at once any older one still in
	// its overlap). Returns ENOTFOUND.
	RotateSecret(ctx context.Context, id, secret string, previousExpires, now time.Time, audit *AuditEntry) (*Endpoint, error)

	// RegisterEvent stores ev and, in the same transaction, its deliveries
	// (Route over the endpoints existing now). With a key, a key seen within
	// IdempotencyWindow returns the first event and created false, and
	// registers nothing; the same key with another RequestHash returns
	// EIDEMPOTENCYREUSED. Returns EUNKNOWNCOMPANY or EUNKNOWNACCOUNT for a
	// reference to nothing, and EUNPROCESSABLE when account_id and the
	// company's account disagree. ev's AccountID is filled from its company.
	RegisterEvent(ctx context.Context, ev *Event, key *IdempotencyKey) (event *Event, deliveries []*Delivery, created bool, err error)
	// FindEvent returns ENOTFOUND if the event does not exist.
	FindEvent(ctx context.Context, id string) (*Event, error)
	// ListEvents lists events newest first.
	ListEvents(ctx context.Context, f EventFilter, p Page) (*List[*Event], error)
	// SendTestEvent registers a ping event for the endpoint alone and its
	// delivery. Returns ENOTFOUND, or EENDPOINTDISABLED.
	SendTestEvent(ctx context.Context, endpointID string, now time.Time, audit *AuditEntry) (*Delivery, error)

	// FindDelivery returns the delivery with its attempts. Returns
	// ENOTFOUND.
	FindDelivery(ctx context.Context, id string) (*Delivery, error)
	// ListDeliveries lists an endpoint's deliveries newest first.
	ListDeliveries(ctx context.Context, f DeliveryFilter, p Page) (*List[*Delivery], error)
	// RetryDelivery re-arms a delivery of an account endpoint for one manual
	// attempt now. Returns ENOTFOUND, EWRONGRESEND, ENOTRESENDABLE,
	// EOUTSIDEWINDOW or EENDPOINTDISABLED.
	RetryDelivery(ctx context.Context, id string, now time.Time, audit *AuditEntry) (*Delivery, error)
	// ReplayDelivery creates a new delivery of a company endpoint's
	// delivery, with its body, for one manual attempt now. Returns the same
	// codes as RetryDelivery.
	ReplayDelivery(ctx context.Context, id string, now time.Time, audit *AuditEntry) (*Delivery, error)
	// Recover retries or replays every failed delivery of the endpoint
	// created in [since, until) whose event is within the resend window and
	// that has no newer delivery of the same event, and returns how many.
	// Returns ENOTFOUND or EENDPOINTDISABLED.
	Recover(ctx context.Context, endpointID string, since, until, now time.Time, audit *AuditEntry) (int, error)

	// ListAccountCompanies returns every company of the account.
	ListAccountCompanies(ctx context.Context, accountID string) ([]*Company, error)
	// ListAccountEndpoints returns every endpoint of the account: its
	// account endpoints and its companies' endpoints, oldest first.
	ListAccountEndpoints(ctx context.Context, accountID string) ([]*Endpoint, error)
	// CountDeliveries counts the deliveries of the endpoints created at
	// or after since, by endpoint, state and bucket of time (bucket 0
	// starts at since), without reading them.
	CountDeliveries(ctx context.Context, endpointIDs []string, since time.Time, bucket time.Duration) ([]DeliveryCount, error)
	// ListEventDeliveries returns the deliveries of the events to the
	// endpoints, oldest first, without their bodies.
	ListEventDeliveries(ctx context.Context, eventIDs, endpointIDs []string) ([]*Delivery, error)

	// RecordAudit stores an entry outside any change (a refused one, or a
	// secret revealed).
	RecordAudit(ctx context.Context, e *AuditEntry) error
	// ListAudit lists an account's audit entries newest first.
	ListAudit(ctx context.Context, accountID string, p Page) (*List[*AuditEntry], error)

	// ClaimDeliveries stores r.Records, then claims up to r.Limit due
	// deliveries (none when r.Limit is 0), oldest due first, skipping
	// endpoints at their cap.
	ClaimDeliveries(ctx context.Context, r ClaimRequest) ([]*Claim, error)
	// RecordAttempts stores attempts and the deliveries' new states. A
	// record whose token the delivery no longer holds is dropped, so a
	// lapsed claim cannot record an attempt twice. If the delivery stopped
	// being pending meanwhile (its endpoint was disabled), only a
	// successful attempt changes its state.
	RecordAttempts(ctx context.Context, records []*AttemptRecord) error
	// ReleaseClaims hands back claimed deliveries without an attempt.
	ReleaseClaims(ctx context.Context, token string, ids []string) error
	// NextScheduled returns the earliest next_attempt_at after now, or the
	// zero time when nothing is scheduled.
	NextScheduled(ctx context.Context, now time.Time) (time.Time, error)
	// QueueStats measures the queue at now, for monitoring.
	QueueStats(ctx context.Context, now time.Time) (QueueStats, error)

	// Purge deletes up to limit events created before before, with their
	// deliveries and attempts, skipping any event with a delivery that may
	// still be attempted (pending); and the Idempotency-Keys older than
	// IdempotencyWindow at now. It returns how many events it deleted: call
	// it again while that is limit. When another process is purging the
	// same database, it returns 0 at once.
	Purge(ctx context.Context, before, now time.Time, limit int) (int, error)

	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}
