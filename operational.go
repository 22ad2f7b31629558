package webhooks

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Operational event types: the events the service registers about its own
// deliveries (SPEC 14). They reach platform endpoints alone.
const (
	EventEndpointFailing    = "webhook_endpoint.failing"
	EventEndpointRecovered  = "webhook_endpoint.recovered"
	EventEndpointDisabled   = "webhook_endpoint.disabled"
	EventEndpointEnabled    = "webhook_endpoint.enabled"
	EventEndpointBacklogged = "webhook_endpoint.backlogged"
	EventBacklogCleared     = "webhook_endpoint.backlog_cleared"
	EventDeliveryExhausted  = "webhook_delivery.exhausted"
	operationalEndpointType = "webhook_endpoint."
	operationalDeliveryType = "webhook_delivery."
)

// OperationalEventTypes lists the operational event types.
func OperationalEventTypes() []string {
	return []string{EventEndpointFailing, EventEndpointRecovered, EventDeliveryExhausted, EventEndpointDisabled, EventEndpointEnabled,
		EventEndpointBacklogged, EventBacklogCleared}
}

// IsOperationalType reports whether typ (or an enabled_events pattern) is
// in the operational namespace, which producers cannot register in.
func IsOperationalType(typ string) bool {
	return strings.HasPrefix(typ, operationalEndpointType) || strings.HasPrefix(typ, operationalDeliveryType)
}

// IsOperational reports whether the event is one of the service's own.
func (e *Event) IsOperational() bool { return IsOperationalType(e.Type) }

// FailingAfter is the number of failed attempts in a row to an endpoint,
// whatever the deliveries, at which it is failing (SPEC 14).
const FailingAfter = 4

// DefaultDisableAfter is how long every attempt to an endpoint must have
// failed before it is disabled (WEBHOOKS_DISABLE_AFTER; 0 never).
const DefaultDisableAfter = 5 * 24 * time.Hour

// Defaults of the backlog alert (WEBHOOKS_BACKLOG_ALERT; 0 never) and of
// automatic recovery: a probe every DefaultRecoveryProbe
// (WEBHOOKS_RECOVERY_PROBE) for DefaultRecoveryFor after the disable
// (WEBHOOKS_RECOVERY_FOR). SPEC 14.
const (
	DefaultBacklogAlert  = 5 * time.Minute
	DefaultRecoveryProbe = time.Hour
	DefaultRecoveryFor   = 7 * 24 * time.Hour
)

// Health is what a batch of attempts did to its endpoint's streak of
// failures, as the store counted it when it recorded them: After is the
// streak's length after the batch, begun at FailingSince (zero when After
// is 0). Failing is the streak that reached FailingAfter in the batch, as
// it was then; Recovered the longest one of FailingAfter or more that a
// 2xx ended in it (nil when none did). FailingFirst, when both are set,
// says Failing reached FailingAfter before the 2xx that ended Recovered
// (the batch began an episode and ended it); otherwise that 2xx came
// first (it ended an episode, and a new one began).
type Health struct {
	EndpointID   string
	After        int
	FailingSince time.Time
	Failing      *Streak
	Recovered    *Streak
	FailingFirst bool
	// FailingAt and RecoveredAt are the positions, among the step's
	// records, of the attempt that made Failing reach FailingAfter and of
	// the 2xx that ended Recovered (-1 when unset): the attempts that made
	// each event fire.
	FailingAt, RecoveredAt int
}

// Streak is a run of failed attempts in a row to an endpoint.
type Streak struct {
	Length int
	Since  time.Time // when its first attempt started
}

// FailingFor reports whether every attempt to the endpoint has failed for
// at least d (d > 0) as of now.
func (h Health) FailingFor(d time.Duration, now time.Time) bool {
	return d > 0 && h.After > 0 && !h.FailingSince.IsZero() && now.Sub(h.FailingSince) >= d
}

// OperationalObject is data.object of an operational event: the endpoint
// it is about, whose account and company it names, and the figures that
// made the event fire.
type OperationalObject struct {
	Object              string             `json:"object"` // "webhook_endpoint"
	ID                  string             `json:"id"`     // the endpoint's
	Scope               Scope              `json:"scope"`
	AccountID           string             `json:"account_id"`
	CompanyID           *string            `json:"company_id"`
	URL                 string             `json:"url"`
	Description         string             `json:"description"`
	Status              string             `json:"status"`
	ConsecutiveFailures int                `json:"consecutive_failures"`
	FailingSince        *int64             `json:"failing_since"`
	DisabledAt          *int64             `json:"disabled_at"`
	DisabledReason      *string            `json:"disabled_reason"`
	Actor               *OperationalActor  `json:"actor,omitempty"`         // disabled, enabled
	Reason              *string            `json:"reason,omitempty"`        // enabled by the service: recovered
	OldestDueAt         json.RawMessage    `json:"oldest_due_at,omitempty"` // backlogged, backlog_cleared: unix seconds, null when none is due
	DueCount            *int               `json:"due_count,omitempty"`     // backlogged, backlog_cleared
	LastAttempt         *OperationalTry    `json:"last_attempt,omitempty"`  // failing, recovered, exhausted, disabled by the engine
	Delivery            *OperationalTarget `json:"delivery,omitempty"`      // exhausted
}

// OperationalActor is who disabled or enabled the endpoint: an audit
// actor, or "system" when the engine disabled it.
type OperationalActor struct {
	Type string  `json:"type"`
	ID   *string `json:"id"`
}

// NewOperationalActor describes a for an operational event.
func NewOperationalActor(a Actor) *OperationalActor {
	o := &OperationalActor{Type: a.Type}
	if a.ID != "" {
		o.ID = &a.ID
	}
	return o
}

// OperationalTry is the attempt that made an operational event fire.
type OperationalTry struct {
	DeliveryID     string  `json:"delivery_id"`
	StartedAt      int64   `json:"started_at"`
	ResponseStatus *int    `json:"response_status"`
	Error          *string `json:"error"`
}

// OperationalTarget is the delivery a webhook_delivery.exhausted is about.
type OperationalTarget struct {
	ID                 string  `json:"id"`
	EventID            string  `json:"event_id"`
	EventType          string  `json:"event_type"`
	AttemptCount       int     `json:"attempt_count"`
	Reason             *string `json:"reason"`
	LastResponseStatus *int    `json:"last_response_status"`
}

// NewOperationalEvent returns an operational event of type typ about ep,
// which belongs to accountID (its company's account on a company
// endpoint). The event is under that account, with no company, so that it
// is in no company's log; its livemode is the endpoint's.
func NewOperationalEvent(typ string, ep *Endpoint, accountID string, obj OperationalObject, now time.Time) (*Event, error) {
	obj.Object, obj.ID, obj.Scope, obj.AccountID = "webhook_endpoint", ep.ID, ep.Scope, accountID
	obj.URL, obj.Description, obj.Status = ep.URL, ep.Description, ep.Status
	obj.ConsecutiveFailures = ep.FailureStreak
	if ep.CompanyID != "" {
		obj.CompanyID = &ep.CompanyID
	}
	obj.FailingSince, obj.DisabledAt = unixOrNil(ep.FailingSince), unixOrNil(ep.DisabledAt)
	if ep.DisabledReason != "" {
		obj.DisabledReason = &ep.DisabledReason
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return &Event{
		ID: NewID(), Type: typ, APIVersion: LatestAPIVersion, Created: now, Livemode: ep.Livemode,
		AccountID: accountID, Object: b,
	}, nil
}

// NewOperationalTry describes attempt a for an operational event.
func NewOperationalTry(a *Attempt) *OperationalTry {
	t := &OperationalTry{DeliveryID: a.DeliveryID, StartedAt: a.StartedAt.Unix()}
	if a.ResponseStatus != 0 {
		t.ResponseStatus = &a.ResponseStatus
	}
	if a.Error != "" {
		t.Error = &a.Error
	}
	return t
}

func unixOrNil(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	u := t.Unix()
	return &u
}

// StreakStep is a batch of attempt records of one endpoint, in the order
// they were made: whether each succeeded (a 2xx, which ends a streak of
// failures) and when it started.
type StreakStep struct {
	EndpointID string
	// Last is the index, in the batch, of the endpoint's last record:
	// the one the store gives the Health to; Records the indexes of all of
	// them, in order.
	Last     int
	Records  []int
	outcomes []outcome
}

type outcome struct {
	ok bool
	at time.Time
}

// StreakSteps folds a batch of records into one step per endpoint, in the
// order the endpoints first appear.
func StreakSteps(records []*AttemptRecord) []StreakStep {
	var steps []StreakStep
	at := map[string]int{}
	for i, r := range records {
		j, ok := at[r.EndpointID]
		if !ok {
			j = len(steps)
			at[r.EndpointID] = j
			steps = append(steps, StreakStep{EndpointID: r.EndpointID})
		}
		steps[j].Last = i
		steps[j].Records = append(steps[j].Records, i)
		steps[j].outcomes = append(steps[j].outcomes, outcome{ok: r.Attempt.Succeeded(), at: r.Attempt.StartedAt})
	}
	return steps
}

// Reset reports whether the step has a 2xx: the streak after it is
// Trailing's alone, not the old one's continued.
func (s StreakStep) Reset() bool {
	return slices.ContainsFunc(s.outcomes, func(o outcome) bool { return o.ok })
}

// Failed reports whether the step has a failed attempt.
func (s StreakStep) Failed() bool {
	return slices.ContainsFunc(s.outcomes, func(o outcome) bool { return !o.ok })
}

// Trailing returns the failures after the step's last 2xx (all of them,
// without one), and when the first of them started: what a store adds to
// the streak, or sets it to after a Reset.
func (s StreakStep) Trailing() (int, time.Time) {
	n, since := 0, time.Time{}
	for i := len(s.outcomes) - 1; i >= 0 && !s.outcomes[i].ok; i-- {
		n, since = n+1, s.outcomes[i].at
	}
	return n, since
}

// Apply returns what the step did to the streak before it, of length old,
// begun at oldSince: the Health the store reports.
func (s StreakStep) Apply(old int, oldSince time.Time) Health {
	// Where in the batch Failing and Recovered were set: its attempts may
	// all have started at one moment, so their times cannot tell which
	// came first.
	h := Health{EndpointID: s.EndpointID, FailingAt: -1, RecoveredAt: -1}
	run := Streak{Length: old, Since: oldSince}
	for i, o := range s.outcomes {
		if o.ok {
			if run.Length >= FailingAfter && (h.Recovered == nil || run.Length > h.Recovered.Length) {
				ended := run
				h.Recovered, h.RecoveredAt = &ended, i
			}
			run = Streak{}
			continue
		}
		if run.Length == 0 || run.Since.IsZero() {
			run.Since = o.at
		}
		run.Length++
		if run.Length == FailingAfter {
			failing := run
			h.Failing, h.FailingAt = &failing, i
		}
	}
	h.After, h.FailingSince = run.Length, run.Since
	h.FailingFirst = h.Failing != nil && h.Recovered != nil && h.FailingAt < h.RecoveredAt
	return h
}

// BacklogObject is the data.object of an endpoint's backlog events, but
// for the endpoint's own fields (NewAnnouncement fills them in).
func BacklogObject(b Backlog) OperationalObject {
	due, oldest := b.Due, json.RawMessage("null")
	if !b.OldestDue.IsZero() {
		oldest = strconv.AppendInt(nil, b.OldestDue.Unix(), 10)
	}
	return OperationalObject{OldestDueAt: oldest, DueCount: &due}
}

// Backlog is an endpoint's due deliveries at one moment (SPEC 14): the
// moment its oldest came due (its first attempt or its next retry due, and
// no attempt of it started since; held back for a rate limit or a cap, it
// stays due), and how many are due.
type Backlog struct {
	EndpointID string
	OldestDue  time.Time
	Due        int
}
