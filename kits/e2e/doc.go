// Package e2e is the receiver kits' end-to-end test: the real `webhooks
// serve` delivers to each kit's example receiver, started as a process as
// kits/README.md (the example receiver contract) says, on each database the
// kit supports, and the test reads the receiver's tables.
//
// For every kit × database (TestReceivers), on a database of its own:
//
//   - envelopes: a company endpoint on payload version 2026-09-23 and an
//     account endpoint on 2025-06-01, both at the receiver, get company
//     events, managed and own account events, and one event that reaches
//     both endpoints; each event has its effect once, with its envelope
//     (account_relationship, api_version), and the second copy of the shared
//     event is answered as a repeat; a request with only the Standard
//     Webhooks headers verifies under WEBHOOK_SCHEME=any;
//   - failing_handler: an event whose object has "fail": true is answered
//     500 and leaves no row in either table, and the service records the
//     failed attempt;
//   - rotation: after a secret rotation the receiver verifies with the old
//     secret only (before its restart), with both, then with the new one;
//   - probe: `webhooks probe` passes, and its concurrent copies of one event
//     had one effect;
//   - standard_webhooks: with standard_webhooks on both endpoints and the
//     receiver on WEBHOOK_SCHEME=standard, deliveries verify, a request with
//     only Factuarea-Signature is refused, and `webhooks probe
//     --standard-webhooks` passes.
//
// After each step, no event id has more than one row in webhook_effects.
//
// TestKitREADMEs follows each kit's README as printed, from its install
// in a fresh folder to its count of the effects after `webhooks probe`.
//
// TestStandardWebhooksLibraries has the official Standard Webhooks
// libraries (the Go module and the npm package standardwebhooks, in node/)
// verify real deliveries, through a rotation.
//
// The test fails, never skips, when node, Debian's python3 with psycopg,
// php with its PDO drivers, a kit's installed dependencies (kits/setup),
// PostgreSQL or MariaDB are missing, and when a kit's directory is.
package e2e
