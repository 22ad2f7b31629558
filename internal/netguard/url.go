package netguard

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	webhooks "github.com/factuarea/webhooks"
)

// MaxURLLength is the longest endpoint URL accepted, in bytes.
const MaxURLLength = 2048

// credentialsMessage is fixed so that it can never echo a password.
const credentialsMessage = "URL must not contain a user name or password (user info before '@'); receivers authenticate webhooks by their signature."

// CheckURL validates an endpoint URL when the endpoint is created or its URL
// is changed, and returns it parsed. It refuses with webhooks.EINVALID a URL
// that is empty, longer than MaxURLLength, malformed or relative, whose
// scheme is not http or https, that carries user info (credentials), a
// fragment, no host, a bad port or a non-ASCII host, or that uses http when
// requireHTTPS is set (a live-mode endpoint without WEBHOOKS_ALLOW_HTTP).
//
// It refuses with webhooks.EURLNOTALLOWED an obviously internal destination:
//   - a literal IP address the Guard does not allow, in any IPv4 or IPv6 form;
//   - an all-numeric host that is not a canonical dotted quad ("2130706433",
//     "0177.0.0.1", "0x7f.1", "127.1", "1.2.3.4."), because resolvers
//     disagree on what such a host means and some read it as an IPv4 address;
//   - localhost names ("localhost", "*.localhost", "localhost.localdomain",
//     "ip6-localhost", ...), which stand for the loopback addresses, unless
//     the Guard exempts one of those;
//   - names that only resolve inside a private network: single-label names
//     (completed by the server's search domains) and names under .local
//     (mDNS), .internal, .home.arpa and .localdomain, unless they resolve now
//     to an address the Guard allows;
//   - any other name that resolves now only to refused addresses. If the
//     lookup fails or times out the URL is accepted: DialContext, at every
//     attempt, remains the real defence.
//
// Messages name the rule and the host and never echo a password.
func (g *Guard) CheckURL(ctx context.Context, raw string, requireHTTPS bool) (*url.URL, error) {
	if raw == "" {
		return nil, webhooks.Errorf(webhooks.EINVALID, "URL is required.")
	}
	if len(raw) > MaxURLLength {
		return nil, webhooks.Errorf(webhooks.EINVALID, "URL is %d bytes long; the limit is %d.", len(raw), MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, webhooks.Errorf(webhooks.EINVALID, "URL is malformed: %s.", parseReason(err))
	}
	if !u.IsAbs() {
		return nil, webhooks.Errorf(webhooks.EINVALID, "URL must be absolute, such as https://example.com/webhooks.")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, webhooks.Errorf(webhooks.EINVALID, "URL scheme %q is not allowed; use https (or http where allowed).", truncate(u.Scheme, 32))
	}
	if u.User != nil {
		return nil, webhooks.Errorf(webhooks.EINVALID, credentialsMessage)
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, webhooks.Errorf(webhooks.EINVALID, "URL must have a host, such as https://example.com/webhooks.")
	}
	// A fragment is never sent to the server, so whatever the user put in
	// it (often a token) would silently be lost. Parsers also disagree on
	// "#" around the authority, a classic way to smuggle a second host.
	if strings.Contains(raw, "#") {
		return nil, webhooks.Errorf(webhooks.EINVALID, "URL must not contain a fragment (the part after '#'), which is never sent to the endpoint.")
	}
	if requireHTTPS && scheme == "http" {
		return nil, webhooks.Errorf(webhooks.EINVALID, "Live-mode endpoints must use an https URL; plain http is accepted only when the operator sets WEBHOOKS_ALLOW_HTTP.")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, webhooks.Errorf(webhooks.EINVALID, "URL port %s is out of range (1-65535).", truncate(p, 16))
		}
	}
	if err := g.checkHost(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// parseReason describes a url.Parse error without the URL, which url.Error
// quotes whole, password included.
func parseReason(err error) string {
	var ee url.EscapeError
	if errors.As(err, &ee) {
		// The escape may sit in the password.
		return "it contains an invalid percent-escape"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return strings.TrimPrefix(err.Error(), "net/url: ")
}

// checkHost applies the host rules of CheckURL.
func (g *Guard) checkHost(ctx context.Context, u *url.URL) error {
	host := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.Is6() {
			return webhooks.Errorf(webhooks.EINVALID, "URL host [%s] is not a valid IPv6 address.", host)
		}
		return g.checkIP(host, ip)
	}
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			// Non-ASCII hosts are converted by IDNA mapping at dial time,
			// which turns look-alikes into other names and addresses
			// (fullwidth "１２７.０.０.１" becomes 127.0.0.1).
			return webhooks.Errorf(webhooks.EINVALID, "URL host must be ASCII; write an internationalized domain name in its punycode form (xn--...).")
		}
	}
	name := strings.ToLower(host)
	if ip, err := netip.ParseAddr(name); err == nil {
		return g.checkIP(host, ip)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return webhooks.Errorf(webhooks.EINVALID, "URL host %q contains %q, which is not allowed in a host name.", host, c)
		}
	}
	// One trailing dot makes a name fully qualified; it names the same host.
	name = strings.TrimSuffix(name, ".")
	if len(name) > 253 {
		return webhooks.Errorf(webhooks.EINVALID, "URL host is longer than 253 characters.")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" {
			return webhooks.Errorf(webhooks.EINVALID, "URL host %q has an empty label (two dots in a row, or a leading dot).", host)
		}
		if len(l) > 63 {
			return webhooks.Errorf(webhooks.EINVALID, "URL host %q has a label longer than 63 characters.", host)
		}
	}
	if isNumber(labels[len(labels)-1]) {
		// WHATWG URL parsers, inet_aton and getaddrinfo read such hosts as
		// IPv4 addresses, each in its own way; the dial would go wherever
		// this machine's resolver says.
		return webhooks.Errorf(webhooks.EURLNOTALLOWED, "URL host %q looks like an IPv4 address in a non-standard form (decimal, octal, hexadecimal, shortened or with a trailing dot), which resolvers read in different ways; write an IPv4 address as four decimal numbers, such as 93.184.216.34.", host)
	}
	if loopback := loopbackName(name); loopback != nil {
		for _, ip := range loopback {
			if g.Allowed(ip) {
				return nil
			}
		}
		return webhooks.Errorf(webhooks.EURLNOTALLOWED, "URL host %q names this machine (a loopback address); webhooks cannot be sent to internal networks.", host)
	}
	ips, lookupErr := g.lookup(ctx, host)
	if why := localName(name, labels); why != "" {
		for _, ip := range ips {
			if g.Allowed(ip) {
				return nil
			}
		}
		return webhooks.Errorf(webhooks.EURLNOTALLOWED, "URL host %q is %s, which only resolves inside a private network; webhooks cannot be sent to internal networks.", host, why)
	}
	if lookupErr != nil || len(ips) == 0 {
		return nil
	}
	var refused []string
	for _, ip := range ips {
		why := g.refusal(ip)
		if why == "" {
			return nil
		}
		if len(refused) < maxListed {
			refused = append(refused, ip.String()+" is "+why)
		}
	}
	return webhooks.Errorf(webhooks.EURLNOTALLOWED, "URL host %q resolves only to internal addresses (%s); webhooks cannot be sent to internal networks.", host, strings.Join(refused, "; "))
}

// checkIP refuses a literal IP host the Guard does not allow.
func (g *Guard) checkIP(host string, ip netip.Addr) error {
	if why := g.refusal(ip); why != "" {
		return webhooks.Errorf(webhooks.EURLNOTALLOWED, "URL host %s is %s; webhooks cannot be sent to internal networks.", host, why)
	}
	return nil
}

// lookup resolves host with the Guard's resolver within the lookup timeout.
func (g *Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if g.lookupTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.lookupTimeout)
		defer cancel()
	}
	return g.lookupNetIP(ctx, "ip", host)
}

// isNumber reports whether label is a number as an IPv4 parser reads one:
// decimal or octal digits, or "0x" and hex digits (possibly none).
func isNumber(label string) bool {
	if strings.HasPrefix(label, "0x") {
		for _, c := range label[2:] {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for _, c := range label {
		if c < '0' || c > '9' {
			return false
		}
	}
	return label != ""
}

var (
	loopbackBoth = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	loopback6    = []netip.Addr{netip.IPv6Loopback()}
)

// loopbackName returns the addresses a loopback name stands for, or nil when
// name is not one. RFC 6761 reserves localhost and *.localhost for loopback;
// the others are the usual /etc/hosts aliases.
func loopbackName(name string) []netip.Addr {
	switch {
	case name == "localhost", strings.HasSuffix(name, ".localhost"), name == "localhost.localdomain":
		return loopbackBoth
	case name == "ip6-localhost", name == "ip6-loopback", name == "localhost6", name == "localhost6.localdomain6":
		return loopback6
	}
	return nil
}

// privateSuffixes are domains that by standard or convention only resolve
// inside a private network: .local is multicast DNS (RFC 6762), .internal is
// reserved by ICANN for private use (and hosts cloud metadata names such as
// metadata.google.internal), .home.arpa is for home networks (RFC 8375) and
// .localdomain is the usual default domain of a host.
var privateSuffixes = []string{"local", "internal", "home.arpa", "localdomain"}

// localName describes name if it only resolves inside a private network, or
// returns "".
func localName(name string, labels []string) string {
	if len(labels) == 1 {
		return "a single-label name (completed by the server's own search domains)"
	}
	for _, s := range privateSuffixes {
		if strings.HasSuffix(name, "."+s) {
			return "a name under ." + s
		}
	}
	return ""
}

// truncate shortens s to at most n bytes for a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
