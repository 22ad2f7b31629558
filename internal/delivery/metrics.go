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
}

type nopMetrics struct{}

func (nopMetrics) Attempted(webhooks.Outcome, *webhooks.Attempt) {}
func (nopMetrics) Recorded(*webhooks.AttemptRecord)              {}
func (nopMetrics) InFlight(int)                                  {}
func (nopMetrics) Started(int, bool)                             {}
