// Package receiver is the receiver kit for Factuarea webhooks: it verifies a
// delivery's signature (Factuarea-Signature, or the Standard Webhooks
// headers), parses the event, and runs your handler at most once per event
// id, in the same database transaction that records the id.
//
// Delivery is at least once: a lost answer, a timeout or a manual resend
// sends an event again, and an event that reaches two of your endpoints
// arrives twice. Every copy carries the same event id (the body's "id", also
// in the Factuarea-Event-Id and Idempotency-Key headers), so the id is what
// tells a repeat from a new event. The delivery id, the signature, the
// correlation_id and data.object.id are not keys.
//
// # The recipe
//
// [Handler] is the recipe as an [net/http.Handler]:
//
//  1. Only POST (405 otherwise). Read the raw body, at most
//     [Config.MaxBodyBytes] (413 beyond).
//  2. Verify the signature on the raw body against every secret (401).
//  3. Parse the event (400 if it is not one, or if the Standard Webhooks
//     webhook-id is not its id).
//  4. In one transaction: insert the event id into processed_webhook_events,
//     doing nothing on conflict; if a row was inserted, run your
//     [HandleFunc] with that transaction; commit; answer 200. A repeat
//     answers 200 without running the handler. A handler error or panic, or
//     a failed commit, rolls back and answers 500 so that the sender retries.
//
// Because your handler writes through the same transaction, its effect and
// the record of the id commit together or not at all: a crash or an error
// can never leave the id recorded without the effect, nor the effect without
// the id.
//
// # Signature schemes
//
// Every delivery carries Factuarea-Signature. An endpoint with
// standard_webhooks on also gets the Standard Webhooks headers (webhook-id,
// which is the event id, webhook-timestamp and webhook-signature), which any
// Standard Webhooks library verifies with the same secret. [Config.Scheme]
// chooses: [SchemeAny], the default, verifies Factuarea-Signature when the
// request carries it and the Standard Webhooks headers otherwise, and never
// falls back from a Factuarea-Signature that fails; [SchemeFactuarea] and
// [SchemeStandard] verify one scheme only. [Verify] and [VerifyStandard]
// check each scheme on its own.
//
// Create the table once with [CreateTable], and delete old ids on a schedule
// with [Purge]: keep them [DefaultRetention] (7 days), or
// [ManualResendRetention] (90 days) if you resend deliveries by hand.
//
// # Databases
//
// Any [database/sql] driver for PostgreSQL, SQLite or MySQL/MariaDB. The
// dialect is detected from the driver's Go package (pgx, lib/pq, modernc,
// mattn and ncruces SQLite, go-sql-driver/mysql); set [Config.Dialect] when
// the driver is wrapped or unknown. PostgreSQL and SQLite use
// "INSERT … ON CONFLICT (event_id) DO NOTHING" with $1 and ? placeholders
// respectively. MySQL has no insert that ignores only a duplicate key
// (INSERT IGNORE also hides other errors, and ON DUPLICATE KEY UPDATE counts
// a repeat as an insert when the connection sets CLIENT_FOUND_ROWS), so it
// uses a plain INSERT, and a failed one is a repeat only when the id is
// found recorded. On MySQL, CreateTable declares received_at DATETIME(6):
// MySQL's TIMESTAMP converts by the session's time zone, keeps whole
// seconds and ends in 2038. A table made by an earlier version, with a
// TIMESTAMP, keeps working while every connection's session has the same
// time zone, and fails every delivery (500) from 2038 on; convert it with
// "ALTER TABLE processed_webhook_events MODIFY received_at DATETIME(6) NOT
// NULL" in a session with that time zone.
//
// Two concurrent deliveries of one id never both run the handler. On
// PostgreSQL and MySQL the primary key does it: the second insert waits for
// the first transaction and then finds the row. SQLite has one writer at a
// time, so the second transaction must wait for the lock rather than fail at
// once or upgrade a stale read: open the database with an immediate
// transaction lock and a busy timeout, for example with modernc.org/sqlite:
//
//	file:/var/lib/app/app.db?_txlock=immediate&_pragma=busy_timeout(5000)
//
// The package depends only on the standard library and
// github.com/factuarea/webhooks/signature, so that importing it brings in no
// database driver, router or server code.
package receiver
