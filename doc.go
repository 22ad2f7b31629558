// Package webhooks holds the domain of the Factuarea webhook delivery
// service: accounts, companies, endpoints, events, deliveries and attempts,
// the rules that route an event to endpoints and render what goes on the
// wire, and the Store interface that every storage backend implements.
//
// It knows nothing of HTTP or SQL: the JSON API lives in internal/httpapi,
// the storage backends in internal/sqlite and internal/postgres, the delivery
// workers in internal/delivery, and the wiring in cmd/webhooks.
package webhooks

// Version is the service's version, sent in the User-Agent header.
const Version = "0.1.0"
