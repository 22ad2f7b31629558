// Package delivery is the delivery engine: it claims due deliveries from its
// Queue (a backend's work queue, declared here with the four methods the
// engine calls), makes each attempt (sign, POST, read the answer),
// classifies the outcome and records it with the delivery's next state,
// which webhooks.RetryPolicy decides.
//
// A claim is a lease: if this process
// dies mid-attempt, the lease lapses and any process claims the delivery
// again, so every accepted event is delivered at least once. Results are
// written in batches, by the next claim's transaction, fenced by the claim's
// token so that a lapsed claim never records an attempt twice.
package delivery
