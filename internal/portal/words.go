package portal

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// words is what the pages say of the retry policy the service runs
// (WEBHOOKS_RETRY_SCHEDULE), so that they say what happens.
type words struct {
	// Attempts is "8 attempts" (or "1 attempt"), the automatic attempts of
	// a delivery; Span is how long they take, "about 4½ days".
	Attempts string
	Span     string
	// Retried lists the 4xx statuses that are retried: "408, 425 and 429".
	Retried string
	// Probe and ProbeFor are how often, and how long after its disable, an
	// endpoint that asks for automatic recovery is probed: "1 h", "7 days".
	Probe, ProbeFor string
}

// AutoRecover says what automatic recovery does (SPEC 14).
func (w words) AutoRecover() string {
	return "If the service disables it for failing, it sends it a ping every " + w.Probe + " for " + w.ProbeFor +
		"; at the first 2xx it enables it again and recovers what it missed. Never after a 410 Gone or a disable by hand."
}

func policyWords(p webhooks.RetryPolicy) words {
	var total time.Duration
	for _, w := range p.Waits {
		total += w
	}
	w := words{Attempts: plural(p.MaxAttempts(), "attempt"), Span: about(total)}
	codes := make([]string, len(webhooks.RetriedClientStatuses))
	for i, c := range webhooks.RetriedClientStatuses {
		codes[i] = strconv.Itoa(c)
	}
	if n := len(codes); n > 1 {
		w.Retried = strings.Join(codes[:n-1], ", ") + " and " + codes[n-1]
	} else {
		w.Retried = strings.Join(codes, "")
	}
	return w
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// about says a duration as a person would, to the nearest half of its
// largest unit: "about 4½ days", "about 10 minutes", "no time" for none.
func about(d time.Duration) string {
	for _, u := range []struct {
		name string
		d    time.Duration
	}{{"day", 24 * time.Hour}, {"hour", time.Hour}, {"minute", time.Minute}, {"second", time.Second}} {
		if d < u.d && u.d != time.Second {
			continue
		}
		halves := int((2*d + u.d/2) / u.d) // rounded to a half
		whole, half := halves/2, halves%2 == 1
		switch {
		case halves == 0:
			return "no time"
		case whole == 0:
			return "about half a " + u.name
		case half:
			return fmt.Sprintf("about %d½ %ss", whole, u.name)
		case whole == 1:
			return "about 1 " + u.name
		}
		return fmt.Sprintf("about %d %ss", whole, u.name)
	}
	return "no time"
}
