// Package signature signs and verifies the Factuarea-Signature header.
//
// The header is "t=<unix seconds>,v1=<hex HMAC-SHA256>" with one v1 per
// secret that currently signs (two during a secret rotation's overlap). The
// HMAC key is the whole secret string ("whsec_…") as UTF-8 bytes and the
// message is "<t>." followed by the raw request body.
//
// The package depends on the standard library only, so that the sending
// service and the receiver kit share one implementation and both pass the
// published test vectors.
package signature
