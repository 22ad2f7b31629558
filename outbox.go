package webhooks

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// OutboxEntry is something the service must announce or do about an
// endpoint, stored in the same transaction as the change that makes it
// happen (SPEC 14): the attempt's record that begins or ends an episode of
// failures, the delivery that ends failed_permanently, a caller's enable or
// disable. The outbox is drained into registration, each entry in the
// transaction that deletes it, so that a crash at any instant neither
// loses an operational event nor registers it twice.
//
// Kind is an operational event type, for an entry that announces one (it
// registers the event Event returns), or OutboxDisable, for one that
// disables the endpoint for Reason (and then announces that).
type OutboxEntry struct {
	// ID is the id of the event the entry registers: assigned when the
	// entry is stored, a UUIDv7, so that entries drain in the order they
	// happened and their events keep it.
	ID         string    `json:"id"`
	Kind       string    `json:"kind"`
	EndpointID string    `json:"endpoint_id"`
	At         time.Time `json:"at"`
	// AccountID is the account the event goes under: the endpoint's, or
	// empty for a company endpoint whose company's account the drain
	// looks up (CompanyID), or for a platform endpoint.
	AccountID string `json:"account_id,omitempty"`
	CompanyID string `json:"company_id,omitempty"`
	Livemode  bool   `json:"livemode"`
	// Object is the announced event's data.object, but for its account.
	Object *OperationalObject `json:"object,omitempty"`
	// Reason and LastAttempt are an OutboxDisable's.
	Reason      string          `json:"reason,omitempty"`
	LastAttempt *OperationalTry `json:"last_attempt,omitempty"`
	// Since is an OutboxRecover's: when the episode of failures that led
	// to the disable began (zero: unknown).
	Since time.Time `json:"since,omitzero"`
}

// The kinds of the entries that change their endpoint: OutboxDisable
// disables it, OutboxRecover enables it again and recovers what it
// missed (SPEC 14's automatic recovery).
const (
	OutboxDisable = "disable"
	OutboxRecover = "recover"
)

// NewAnnouncement returns the entry that registers an operational event
// of type typ about ep (as obj describes it, the endpoint's own fields
// filled in here), happened at at.
func NewAnnouncement(typ string, ep *Endpoint, obj OperationalObject, at time.Time) *OutboxEntry {
	obj.Object, obj.ID, obj.Scope = "webhook_endpoint", ep.ID, ep.Scope
	obj.URL, obj.Description, obj.Status = ep.URL, ep.Description, ep.Status
	obj.ConsecutiveFailures = ep.FailureStreak
	if ep.CompanyID != "" {
		obj.CompanyID = &ep.CompanyID
	}
	obj.FailingSince, obj.DisabledAt = unixOrNil(ep.FailingSince), unixOrNil(ep.DisabledAt)
	if ep.DisabledReason != "" {
		obj.DisabledReason = &ep.DisabledReason
	}
	return &OutboxEntry{
		ID: NewID(), Kind: typ, EndpointID: ep.ID, At: at, AccountID: ep.AccountID, CompanyID: ep.CompanyID,
		Livemode: ep.Livemode, Object: &obj,
	}
}

// Event returns the operational event an announcement registers, under
// account (the endpoint's account; its company's for a company endpoint).
// The event is in no company's log; its livemode is the endpoint's.
func (o *OutboxEntry) Event(account string) (*Event, error) {
	obj := *o.Object
	obj.AccountID = account
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return &Event{
		ID: o.ID, Type: o.Kind, APIVersion: LatestAPIVersion, Created: o.At, Livemode: o.Livemode,
		AccountID: account, Object: b,
	}, nil
}

// HealthRule decides, from the attempts to an endpoint as they are
// recorded, what the service announces and does about the endpoint (SPEC
// 14): webhook_endpoint.failing once per episode, .recovered at the 2xx
// that ends one, webhook_delivery.exhausted for each delivery an attempt
// ended failed_permanently, the disable of an endpoint that answered 410
// Gone or whose every attempt has failed for DisableAfter, and the
// recovery of one disabled for failing that asked for it (AutoRecover)
// at its first 2xx.
type HealthRule struct {
	// DisableAfter is how long every attempt must have failed before the
	// endpoint is disabled; zero never disables it for failures.
	DisableAfter time.Duration
}

// Entries returns what records, an endpoint's attempts of one batch in the
// order they were made (its StreakStep's), stored with the health h, make
// happen, as outbox entries in that order. ep is the endpoint as its
// attempts were made; each record's Exhausted says whether it ended its
// delivery failed_permanently as stored. Nothing is announced about a
// platform endpoint (its events would go to the platform endpoints, maybe
// to itself); a dead one is still disabled.
func (p HealthRule) Entries(ep *Endpoint, h Health, records []*AttemptRecord, now time.Time) []*OutboxEntry {
	var out []*OutboxEntry
	notify := ep.Scope != ScopePlatform
	// The endpoint as the streak that fired the event was.
	during := func(st *Streak) *Endpoint {
		about := *ep
		about.FailureStreak, about.FailingSince = st.Length, st.Since
		return &about
	}
	fired := func(i int) *OperationalTry {
		return NewOperationalTry(records[min(max(i, 0), len(records)-1)].Attempt)
	}
	type streak struct {
		typ string
		st  *Streak
		at  int
	}
	streaks := []streak{{EventEndpointRecovered, h.Recovered, h.RecoveredAt}, {EventEndpointFailing, h.Failing, h.FailingAt}}
	if h.FailingFirst {
		slices.Reverse(streaks)
	}
	for _, s := range streaks {
		if s.st != nil && notify {
			out = append(out, NewAnnouncement(s.typ, during(s.st), OperationalObject{LastAttempt: fired(s.at)}, now))
		}
	}
	for _, r := range records {
		if r.Exhausted && notify {
			out = append(out, NewAnnouncement(EventDeliveryExhausted, ep, OperationalObject{
				LastAttempt: NewOperationalTry(r.Attempt), Delivery: r.Target()}, now))
		}
	}
	if len(records) == 0 {
		return out
	}
	if !ep.Enabled() {
		if ep.AutoRecover && ep.DisabledReason == DisabledFailing && slices.ContainsFunc(records, func(r *AttemptRecord) bool { return r.Attempt.Succeeded() }) {
			began := ep.FailingSince
			if h.Recovered != nil {
				began = h.Recovered.Since
			}
			out = append(out, &OutboxEntry{ID: NewID(), Kind: OutboxRecover, EndpointID: ep.ID, At: now, Since: began})
		}
		return out
	}
	last := records[len(records)-1]
	reason := ""
	for _, r := range records {
		if r.Attempt.ResponseStatus == http.StatusGone {
			reason, last = DisabledGone, r
			break
		}
	}
	if reason == "" && h.FailingFor(p.DisableAfter, now) {
		reason = DisabledFailing
	}
	if reason != "" {
		out = append(out, &OutboxEntry{
			ID: NewID(), Kind: OutboxDisable, EndpointID: ep.ID, At: now, Reason: reason,
			LastAttempt: NewOperationalTry(last.Attempt),
		})
	}
	return out
}

// Target describes the delivery of a record that exhausted it, for its
// webhook_delivery.exhausted.
func (r *AttemptRecord) Target() *OperationalTarget {
	t := &OperationalTarget{ID: r.Attempt.DeliveryID, AttemptCount: r.Attempt.Number}
	if r.Delivery != nil {
		t.EventID, t.EventType = r.Delivery.EventID, r.Delivery.EventType
		t.AttemptCount = max(t.AttemptCount, r.Delivery.AttemptCount)
	}
	if r.Transition.Reason != "" {
		reason := r.Transition.Reason
		t.Reason = &reason
	}
	if r.Attempt.ResponseStatus != 0 {
		status := r.Attempt.ResponseStatus
		t.LastResponseStatus = &status
	}
	return t
}
