package webhooks

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// PingEventType is the type of the test event an endpoint's "send test
// event" action sends. It is reserved: producers cannot register it.
const PingEventType = "ping"

// MaxEventTypeLength bounds an event type's length.
const MaxEventTypeLength = 100

var eventTypePattern = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_]+)+$`)

// Event is something that happened, registered once. Its id is assigned at
// registration and travels unchanged in every envelope, attempt, retry and
// replay.
type Event struct {
	ID            string
	Type          string
	APIVersion    string // the version Data is stored in: always the newest
	Created       time.Time
	Livemode      bool
	Test          bool
	CorrelationID string // empty when the producer gave none
	AccountID     string // the account the event belongs to
	CompanyID     string // empty for an account.* event about no company
	// Object is data.object, the resource as the producer sent it (compact
	// JSON, the producer's key order kept).
	Object json.RawMessage
	// Traceparent is the W3C traceparent of the span that registered the
	// event (empty: tracing off, or the span not sampled). Stores write
	// it and claims read it back (ClaimRequest.Traceparents), so that an
	// attempt's span links to the registration; Find and List leave it
	// out. It is the platform's trace: it never goes to a receiver.
	Traceparent string
	// OrderingKey, if set, orders the event's deliveries to endpoints that
	// ask for it (SPEC 18): one at a time per endpoint and key, in
	// registration order. For an invoice's events, the invoice's id.
	OrderingKey string
	// ErasedAt is when the event's payload was erased (SPEC 19): Object is
	// then nil. Zero while it is not.
	ErasedAt time.Time
}

// IsAccountEvent reports whether the event is an account.* event, which only
// account endpoints receive.
func (e *Event) IsAccountEvent() bool { return IsAccountEventType(e.Type) }

// IsAccountEventType reports whether typ is an account.* type.
func IsAccountEventType(typ string) bool { return strings.HasPrefix(typ, "account.") }

// ValidateEventType checks a producer's event type.
func ValidateEventType(typ string) error { return validateTypeName("type", typ) }

// validateTypeName checks an event type's name, given in field: the rules
// of a producer's type and of a catalog's declaration are the same.
func validateTypeName(field, typ string) error {
	switch {
	case typ == "":
		return Errorf(EINVALID, "%s is required.", field)
	case len(typ) > MaxEventTypeLength:
		return Errorf(EINVALID, "%s must be at most %d characters.", field, MaxEventTypeLength)
	case !eventTypePattern.MatchString(typ):
		return Errorf(EINVALID, "%s %q is not a valid event type: use lowercase dotted names such as invoice.sent.", field, typ)
	}
	return nil
}

// Attribute checks the company and account ev names against what exists,
// and fills ev's account from its company: companyAccount is the account of
// ev's company, or empty when ev names none or no such company exists.
// The store then checks that ev's account exists (UnknownAccount).
func (e *Event) Attribute(companyAccount string) error {
	if e.CompanyID == "" {
		return nil
	}
	if companyAccount == "" {
		return Errorf(EUNKNOWNCOMPANY, "company_id %s is not a company.", e.CompanyID)
	}
	if e.AccountID != "" && e.AccountID != companyAccount {
		return Errorf(EUNPROCESSABLE, "company %s does not belong to account %s.", e.CompanyID, e.AccountID)
	}
	e.AccountID = companyAccount
	return nil
}

// Validate checks an event a producer registers (before the service assigns
// its id, account and times).
func (e *Event) Validate() error {
	if err := ValidateEventType(e.Type); err != nil {
		return err
	}
	if IsOperationalType(e.Type) {
		return Errorf(EINVALID, "type %q is in the webhook_endpoint.* and webhook_delivery.* namespaces, which the service keeps for its own operational events: choose another name.", e.Type)
	}
	if e.CompanyID != "" && !ValidID(e.CompanyID) {
		return Errorf(EINVALID, "company_id %q is not a company id.", e.CompanyID)
	}
	if e.AccountID != "" && !ValidID(e.AccountID) {
		return Errorf(EINVALID, "account_id %q is not an account id.", e.AccountID)
	}
	if e.IsAccountEvent() {
		if e.AccountID == "" && e.CompanyID == "" {
			return Errorf(EINVALID, "An event of type %s needs account_id (or a company_id whose account it is about).", e.Type)
		}
	} else if e.CompanyID == "" {
		return Errorf(ECOMPANYREQUIRED, "An event of type %s must name a company in company_id: only account.* events may omit it.", e.Type)
	}
	if err := CheckLength("correlation_id", e.CorrelationID, MaxCorrelationIDLength); err != nil {
		return err
	}
	if err := CheckOrderingKey("ordering_key", e.OrderingKey); err != nil {
		return err
	}
	obj := bytes.TrimSpace(e.Object)
	if len(obj) == 0 || obj[0] != '{' {
		return Errorf(EINVALID, "data.object is required and must be a JSON object.")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, obj); err != nil {
		return Errorf(EINVALIDJSON, "data.object is not valid JSON.")
	}
	if !utf8.Valid(obj) {
		return Errorf(EINVALIDJSON, "data.object is not valid UTF-8.")
	}
	e.Object = compact.Bytes()
	return validateObjectForVersions(e.Object)
}
