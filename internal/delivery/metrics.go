package delivery

import (
	webhooks "github.com/factuarea/webhooks"
)

// Metrics receives the engine's measurements.
type Metrics interface {
	// Attempted is called when an attempt ends, before it is stored.
	Attempted(outcome webhooks.Outcome, a *webhooks.Attempt)
	// Recorded is called when an attempt's record is stored.
	Recorded(r *webhooks.AttemptRecord)
	// InFlight is called with the number of attempts in flight whenever it
	// changes.
	InFlight(n int)
	// Started is called with the number of attempts started, and whether
	// the store handed their deliveries over as it registered them (see
	// Engine.Hand) or the engine claimed them.
	Started(n int, handed bool)
	// Throttled is called when a rate limit holds an attempt: it waits
	// for its start (waited) or its delivery is handed back for later.
	Throttled(waited bool)
	// Waiting is called with the number of attempts waiting for their
	// rate-limited endpoint's next start whenever it changes.
	Waiting(n int)
}

type nopMetrics struct{}

func (nopMetrics) Attempted(webhooks.Outcome, *webhooks.Attempt) {}
func (nopMetrics) Recorded(*webhooks.AttemptRecord)              {}
func (nopMetrics) InFlight(int)                                  {}
func (nopMetrics) Started(int, bool)                             {}
func (nopMetrics) Throttled(bool)                                {}
func (nopMetrics) Waiting(int)                                   {}
