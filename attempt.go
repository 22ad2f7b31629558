package webhooks

import "time"

// Limits on what is kept of an endpoint's answer.
const (
	// MaxResponseRead is how much of a response body is read: enough to
	// finish the exchange cleanly on a keep-alive connection, bounded so a
	// hostile endpoint cannot make the service read forever.
	MaxResponseRead = 64 << 10
	// MaxResponseKept is how much of it is stored on the attempt.
	MaxResponseKept = 1 << 10
)

// Attempt is one HTTP request of a delivery and its outcome.
type Attempt struct {
	DeliveryID     string
	Number         int // 1-based, in the order made
	StartedAt      time.Time
	Duration       time.Duration
	ResponseStatus int    // zero when no answer arrived
	ResponseBody   string // the first MaxResponseKept bytes
	Error          string // why no answer arrived, or why it failed
	Manual         bool
}

// Succeeded reports whether the attempt got a 2xx with its whole answer:
// what ends an endpoint's streak of failures.
func (a *Attempt) Succeeded() bool {
	return a.ResponseStatus >= 200 && a.ResponseStatus < 300 && a.Error == ""
}
