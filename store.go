package webhooks

import (
	"bytes"
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

// PageOf returns the page of items, read with a limit of limit+1 so that
// one item more than the page says whether there are more.
func PageOf[T any](items []T, limit int) *List[T] {
	if items == nil {
		items = []T{}
	}
	if len(items) > limit {
		return &List[T]{Data: items[:limit], HasMore: true}
	}
	return &List[T]{Data: items}
}

// EndpointFilter selects the endpoints of one company or one account (the
// account's account endpoints, not its companies').
type EndpointFilter struct {
	CompanyID string
	AccountID string
	Platform  bool // the platform endpoints
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

// Repeats reports whether k repeats the registration whose key stored is
// (nil: none): within IdempotencyWindow the same request repeats it, and
// another request is refused with EIDEMPOTENCYREUSED; past the window the
// stored key is forgotten and k registers anew.
func (k *IdempotencyKey) Repeats(stored *IdempotencyKey) (bool, error) {
	if stored == nil || k.Created.Sub(stored.Created) >= IdempotencyWindow {
		return false, nil
	}
	if !bytes.Equal(k.RequestHash, stored.RequestHash) {
		return false, Errorf(EIDEMPOTENCYREUSED, "Idempotency-Key %q was used in the last 24 hours with a different request.", k.Key)
	}
	return true, nil
}

// RecoverFilter selects the deliveries a recovery considers.
type RecoverFilter struct {
	EndpointID string
	CreatedGTE time.Time
	CreatedLT  time.Time
	Statuses   []string
}

// RecoverCandidate is a delivery a recovery may send again, with what
// CheckResend needs of its event.
type RecoverCandidate struct {
	Delivery     *Delivery
	EventCreated time.Time
	EventTest    bool
	// EventErased: the event was erased (or its erasure is under way, see
	// driver.Store.FindEvent); its deliveries cannot be sent again.
	EventErased bool
}

// ClaimRequest asks the delivery engine's queue for due deliveries to
// attempt.
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
	// Hold, if set, is called with each claimed delivery's endpoint (once
	// per claim returned), before the claim commits where the store can,
	// so that the claimer counts its slots before another transaction can
	// see them (a store that leases new deliveries to the claimer asks it
	// for room: see app.Engine). If the claim then fails, the claimer
	// gives them back.
	Hold func(endpointID string)
	// Traceparents asks for each claim's Traceparent (tracing is on);
	// without it a claim reads nothing more than the delivery and its
	// endpoint.
	Traceparents bool
}

// Claim is a delivery claimed for an attempt, with what the attempt needs
// of its endpoint (the URL and secrets at attempt time, not at creation).
type Claim struct {
	Delivery *Delivery // without Attempts
	Endpoint *Endpoint // ID, Scope, URL and secrets
	Token    string
	// Traceparent is the delivery's event's (Event.Traceparent): set on a
	// claim handed over at registration, and on a claimed one when
	// ClaimRequest.Traceparents asks for it.
	Traceparent string
}

// AttemptRecord is the result of an attempt on a claimed delivery.
type AttemptRecord struct {
	Token      string
	EndpointID string
	Attempt    *Attempt
	Transition Transition
	// Delivery and Endpoint are the claim's: what the attempt was made of
	// (the operational events a record fires describe them). Either may
	// be nil in a record made without its claim.
	Delivery *Delivery
	Endpoint *Endpoint

	// Set when the record is stored. Lapsed: the delivery no longer held
	// the record's claim, which had lapsed (another worker has it), so the
	// record changed nothing of the delivery; its attempt still counts in
	// the endpoint's streak (SPEC 14). Exhausted: the record ended the
	// delivery failed_permanently. Health, on each endpoint's last record
	// of the batch: what the batch did to the endpoint's streak.
	Lapsed    bool
	Exhausted bool
	Health    *Health
}

// Deferral hands a claimed delivery back without an attempt, due again at
// Until: a rate limit held it back (SPEC 14).
type Deferral struct {
	DeliveryID string
	Token      string
	Until      time.Time
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
	// Failing counts the enabled endpoints whose last FailingAfter
	// attempts or more all failed; Disabled the disabled ones, by
	// disabled_reason (SPEC 14).
	Failing  int
	Disabled map[string]int
	// Outbox counts the outbox entries not drained yet: operational events
	// to register, endpoints to disable (see OutboxEntry).
	Outbox int
	// Erasures counts the erasure jobs of deleted companies and accounts
	// whose events are not all erased yet (see Erasure).
	Erasures int
}
