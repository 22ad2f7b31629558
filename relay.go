package webhooks

import (
	"slices"
	"strings"
	"time"
)

// RelayNotConnected is the error of an attempt to a relay endpoint while
// no `webhooks listen` holds its connection (SPEC 20): a retryable
// failure, counted in the endpoint's health like any other.
const RelayNotConnected = "relay_not_connected"

// RelayLost is the error of an attempt whose request went over a relay
// connection that ended before the listener answered: the listener may or
// may not have forwarded it, so it is retried (at least once).
const RelayLost = "relay connection lost before the answer"

// Relay connections (SPEC 20).
const (
	// RelayLease is how long a connection holds its endpoint without
	// renewing: a process that died stops holding it after that.
	RelayLease = 15 * time.Second
	// RelayRenew is how often a connection renews its hold, and how often
	// it tells the listener it is alive.
	RelayRenew = 5 * time.Second
)

// RelayRequest is one attempt's request carried over a relay connection:
// the headers and body the service signed, exactly as a POST to a URL
// would send them.
type RelayRequest struct {
	ID         string
	EndpointID string
	DeliveryID string
	Header     map[string][]string
	Body       []byte
	Created    time.Time
}

// RelayAnswer is what the listener got from its forward target for a
// RelayRequest: the status, how long it took, the body (at most
// MaxResponseKept bytes), or the error when no answer came.
type RelayAnswer struct {
	Status   int           `json:"status,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	Body     string        `json:"body,omitempty"`
	Error    string        `json:"error,omitempty"`
}

// Validate checks an answer reported by a listener.
func (a *RelayAnswer) Validate() error {
	switch {
	case a.Error == "" && (a.Status < 100 || a.Status > 999):
		return Errorf(EINVALID, "status must be an HTTP status (100 to 999), or error must say why no answer came.")
	case a.Error != "" && a.Status != 0:
		return Errorf(EINVALID, "give either status or error, not both.")
	case a.Duration < 0:
		return Errorf(EINVALID, "duration_ms cannot be negative.")
	case len(a.Error) > MaxResponseKept:
		return Errorf(EINVALID, "error must be at most %d bytes.", MaxResponseKept)
	}
	if len(a.Body) > MaxResponseKept {
		a.Body = a.Body[:MaxResponseKept]
	}
	return nil
}

// SortRelayRequests puts rs oldest first, as a relay sends them: a store
// whose statement returns them in no order sorts them so.
func SortRelayRequests(rs []*RelayRequest) {
	slices.SortFunc(rs, func(a, b *RelayRequest) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
