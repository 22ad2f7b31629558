package webhooks

import (
	"slices"
	"time"
)

// Delivery statuses.
const (
	// DeliveryPending: an attempt is due or scheduled (NextAttemptAt).
	DeliveryPending = "pending"
	// DeliveryDelivered: the endpoint answered 2xx. The event reached the
	// receiver's system; whether the receiver processed it is not known.
	DeliveryDelivered = "delivered"
	// DeliveryFailed: a manual attempt failed, or the endpoint was disabled
	// or deleted. Nothing is scheduled.
	DeliveryFailed = "failed"
	// DeliveryFailedPermanently: a non-retryable answer, a refused address,
	// or the schedule ran out.
	DeliveryFailedPermanently = "failed_permanently"
)

// Reasons a delivery ended without being delivered.
const (
	ReasonNonRetryableStatus  = "non_retryable_status"
	ReasonScheduleExhausted   = "schedule_exhausted"
	ReasonAddressNotAllowed   = "address_not_allowed"
	ReasonEndpointDisabled    = "endpoint_disabled"
	ReasonEndpointDeleted     = "endpoint_deleted"
	ReasonManualAttemptFailed = "manual_attempt_failed"
	// ReasonEventErased ends a pending delivery of an event that was
	// erased (SPEC 19): its body is gone, so there is nothing to send.
	ReasonEventErased = "event_erased"
)

// Delivery is one event sent to one endpoint, with its own id, state and
// attempts. Its body is rendered once, when it is created, and every attempt
// sends the same bytes.
type Delivery struct {
	ID                 string
	EndpointID         string
	EventID            string
	EventType          string
	Relationship       Relationship // account endpoints only
	ReplayOf           string       // the original, for a replay
	Status             string
	Reason             string
	AttemptCount       int
	NextAttemptAt      time.Time // zero when nothing is scheduled
	LastResponseStatus int       // zero when no attempt got an answer
	// Manual is set while a retry or replay's single attempt is due: if it
	// fails, the delivery ends failed instead of following the schedule.
	Manual bool
	// ScheduleFactor divides every wait of the retry schedule, and a
	// receiver's Retry-After: an outage rehearsal's (SPEC 17); 1 (or 0)
	// for every other delivery.
	ScheduleFactor int
	// Rehearsal marks an outage rehearsal's delivery (SPEC 17), stored
	// with it: also when the schedule fits in RehearsalLength already and
	// ScheduleFactor is 1, so it cannot be told from the factor.
	Rehearsal bool
	// OrderingKey is its event's, when its endpoint is ordered (SPEC 18):
	// the delivery is then one of its endpoint's chain of that key, sent
	// one at a time in registration order. WaitingFor is the delivery of
	// the chain it waits behind (empty when it does not): until that one
	// ends, this one is not due.
	OrderingKey string
	WaitingFor  string
	Body        []byte
	Created     time.Time

	Attempts []*Attempt // filled by FindDelivery only
}

// DeliveryStatuses lists every delivery status.
var DeliveryStatuses = []string{DeliveryPending, DeliveryDelivered, DeliveryFailed, DeliveryFailedPermanently}

// KnownDeliveryStatus reports whether s is a delivery status.
func KnownDeliveryStatus(s string) bool { return slices.Contains(DeliveryStatuses, s) }

// ResendableStatuses are the states a delivery may be sent again by hand
// from: it ended without reaching its endpoint.
var ResendableStatuses = []string{DeliveryFailed, DeliveryFailedPermanently}

// Resendable reports whether a delivery may be sent again by hand.
func (d *Delivery) Resendable() bool { return slices.Contains(ResendableStatuses, d.Status) }

// Rearm makes the delivery pending for one manual attempt at now (a retry
// by hand, or a recovery's, SPEC 6): if it fails, the delivery ends
// failed, with no schedule behind it.
func (d *Delivery) Rearm(now time.Time) {
	d.Status, d.Reason, d.NextAttemptAt, d.Manual = DeliveryPending, "", now, true
}

// Retrying reports whether the delivery is being retried on the schedule:
// pending after at least one failed attempt, and not sent by hand (a
// manual retry under way is pending, not retrying), as the portal shows
// it. Backends count it in SQL (driver.CountRetrying), by this rule.
func (d *Delivery) Retrying() bool {
	return d.Status == DeliveryPending && d.AttemptCount > 0 && !d.Manual
}

// Rehearse makes d an outage rehearsal's delivery (SPEC 17): marked as
// one, and its schedule p's with every wait divided so that it lasts about
// RehearsalLength (p's own when it fits already).
func (d *Delivery) Rehearse(p RetryPolicy) {
	d.Rehearsal, d.ScheduleFactor = true, p.RehearsalFactor()
}

// Outcome is how an attempt ended.
type Outcome int

// Outcomes of an attempt.
const (
	// OutcomeDelivered: any 2xx.
	OutcomeDelivered Outcome = iota
	// OutcomeRetry: 5xx, 408, 425, 429, 3xx, a timeout or a connection
	// error. Retried on the schedule.
	OutcomeRetry
	// OutcomeRejected: any other 4xx. Not retried.
	OutcomeRejected
	// OutcomeRefused: the address is one the service will not call. Not
	// retried, and nothing was sent.
	OutcomeRefused
)

// RetriedClientStatuses are the 4xx answers retried on the schedule, as a
// 5xx is: Request Timeout, Too Early, Too Many Requests.
var RetriedClientStatuses = []int{408, 425, 429}

// ClassifyStatus returns the outcome of an attempt the endpoint answered
// with status.
func ClassifyStatus(status int) Outcome {
	switch {
	case status >= 200 && status < 300:
		return OutcomeDelivered
	case slices.Contains(RetriedClientStatuses, status):
		return OutcomeRetry
	case status >= 400 && status < 500:
		return OutcomeRejected
	default: // 1xx that ended the exchange, 3xx (redirects are not followed), 5xx
		return OutcomeRetry
	}
}

// Transition is a delivery's state after an attempt.
type Transition struct {
	Status        string
	Reason        string
	NextAttemptAt time.Time
}

// OverridesEnd reports whether t changes a delivery that ended while its
// attempt was being made (its endpoint was disabled or deleted, which ends
// its pending deliveries failed): only an attempt that delivered does,
// since the event did reach the endpoint. While the delivery is pending,
// every transition changes it. Stores record attempts by this rule.
func (t Transition) OverridesEnd() bool { return t.Status == DeliveryDelivered }

// After returns the state of a delivery after its attempt number n (1-based)
// ended with outcome at now. manual says the attempt was a retry or replay's
// single attempt.
func (p RetryPolicy) After(n int, manual bool, outcome Outcome, now time.Time, random float64) Transition {
	switch {
	case outcome == OutcomeDelivered:
		return Transition{Status: DeliveryDelivered}
	case manual:
		return Transition{Status: DeliveryFailed, Reason: ReasonManualAttemptFailed}
	case outcome == OutcomeRefused:
		return Transition{Status: DeliveryFailedPermanently, Reason: ReasonAddressNotAllowed}
	case outcome == OutcomeRejected:
		return Transition{Status: DeliveryFailedPermanently, Reason: ReasonNonRetryableStatus}
	}
	wait, ok := p.Wait(n, random)
	if !ok {
		return Transition{Status: DeliveryFailedPermanently, Reason: ReasonScheduleExhausted}
	}
	return Transition{Status: DeliveryPending, NextAttemptAt: now.Add(wait)}
}
