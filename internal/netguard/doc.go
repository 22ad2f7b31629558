// Package netguard decides where the webhook sender may connect: it is the
// service's defence against server-side request forgery (SSRF), since every
// endpoint URL is typed by a stranger and the service POSTs to it.
//
// A Guard has three layers:
//
//   - Allowed is the address policy. It refuses every address that is not
//     globally reachable: loopback, private, link-local (the cloud metadata
//     address 169.254.169.254 included), shared (CGNAT), unique-local,
//     multicast, unspecified, documentation, benchmarking and reserved ranges,
//     IPv4 and IPv6 alike. IPv6 forms that carry an IPv4 address (mapped,
//     compatible, NAT64) are judged by that address. The operator's allow list
//     (WEBHOOKS_ALLOW_NETWORKS) exempts exactly the networks it names.
//   - DialContext is the real defence. It resolves the host itself, drops the
//     addresses the policy refuses, dials only the others, and checks the
//     socket's address once more just before connect. A name that resolved to
//     a public address when the endpoint was created and resolves to an
//     internal one now (DNS rebinding) is caught here, at every attempt. When
//     every address is refused no connection is attempted and the error wraps
//     ErrAddressNotAllowed, which the delivery engine records as
//     address_not_allowed. Transport returns an http.Transport built on it.
//   - CheckURL validates a URL when an endpoint is created or its URL
//     changed, so that an obviously internal destination is refused at once
//     with url_not_allowed instead of failing at its first delivery. It is a
//     courtesy to the user, not a security boundary: DNS can change after it.
//
// Redirects are the caller's concern. The delivery engine's client never
// follows them (a 3xx is a retryable failure, see the specification). A
// client that did would still dial each redirect target through the guard,
// but the target's URL would skip CheckURL's rules (scheme, credentials,
// https in live mode).
package netguard
