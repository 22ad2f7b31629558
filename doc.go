// Package webhooks holds the domain of the Factuarea webhook delivery
// service: accounts, companies, endpoints, events, deliveries and attempts,
// and the rules about them, each decided here once: how an event is routed
// to endpoints and rendered on the wire, what an attempt's outcome makes of
// a delivery, when a delivery may be resent and which a recovery takes,
// and the limits on what callers send.
//
// It knows nothing of HTTP or SQL: the use cases live in internal/app, the
// JSON API in internal/httpapi, the portal in internal/portal, the storage
// backends in internal/sqlite and internal/postgres, the delivery engine in
// internal/delivery, and the wiring in internal/service.
package webhooks
