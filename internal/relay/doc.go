// Package relay carries the attempts of relay endpoints (SPEC 20) over
// the `webhooks listen` connections that hold them.
//
// The listener connects out to one process; the attempt may be made by
// any process on the database (whichever claimed the delivery). So the
// two meet in the database (driver.Relay): the attempt puts its signed
// request in the mailbox and waits for its answer; the process holding
// the connection takes the request, sends it down the connection, and the
// listener's answer, which may come back to any process, is stored on the
// request, where the attempt reads it. Within one process the two wake
// each other at once; across processes they poll the mailbox.
//
// An attempt is recorded once, by the engine that claimed it, exactly as
// a POST to a URL: the claim, the schedule and the endpoint's health are
// the engine's, untouched. What the relay adds is at-least-once across a
// dropped connection: a request sent to a connection that ends before its
// answer is answered RelayLost, a failure the schedule retries; the
// listener may have forwarded it, so the receiver may see it twice, with
// the same event id.
package relay
