package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Defaults of a Guard, each changed by the option of the same subject.
const (
	// DefaultDialTimeout bounds the whole dial of one host, over all its
	// allowed addresses.
	DefaultDialTimeout = 5 * time.Second
	// DefaultLookupTimeout bounds the DNS lookup that CheckURL makes. It is
	// short because the lookup only improves an error message: when it times
	// out the URL is accepted and the dial-time check decides.
	DefaultLookupTimeout = 2 * time.Second
)

// LookupNetIPFunc resolves host to its addresses, like
// net.Resolver.LookupNetIP. network is "ip", "ip4" or "ip6".
type LookupNetIPFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

// Guard decides where the service may connect. Create it with New (the zero
// Guard has no resolver); it is safe for concurrent use and is never modified
// after New returns.
type Guard struct {
	allow         []netip.Prefix
	lookupNetIP   LookupNetIPFunc
	dialTimeout   time.Duration
	lookupTimeout time.Duration
	dialer        net.Dialer
}

// Option configures a Guard in New.
type Option func(*Guard)

// WithLookupNetIP replaces the resolver, net.DefaultResolver.LookupNetIP by
// default. Tests use it to answer names without DNS.
func WithLookupNetIP(fn LookupNetIPFunc) Option {
	return func(g *Guard) { g.lookupNetIP = fn }
}

// WithDialTimeout sets how long DialContext may take to connect to a host,
// over all its allowed addresses. Defaults to DefaultDialTimeout; zero means
// only the context bounds it.
func WithDialTimeout(d time.Duration) Option {
	return func(g *Guard) { g.dialTimeout = d }
}

// WithLookupTimeout sets how long CheckURL waits for DNS. Defaults to
// DefaultLookupTimeout.
func WithLookupTimeout(d time.Duration) Option {
	return func(g *Guard) { g.lookupTimeout = d }
}

// New returns a Guard that exempts the networks in allow (the operator's
// WEBHOOKS_ALLOW_NETWORKS, usually parsed by ParseNetworks) from the address
// policy. An IPv4-mapped prefix such as ::ffff:127.0.0.0/104 is stored as its
// IPv4 form, 127.0.0.0/8, because addresses are unmapped before the allow
// list is consulted. New panics on an invalid prefix, a programmer error.
func New(allow []netip.Prefix, opts ...Option) *Guard {
	g := &Guard{
		lookupNetIP:   net.DefaultResolver.LookupNetIP,
		dialTimeout:   DefaultDialTimeout,
		lookupTimeout: DefaultLookupTimeout,
	}
	for _, p := range allow {
		if !p.IsValid() {
			panic(fmt.Sprintf("netguard: invalid allowed network %v", p))
		}
		g.allow = append(g.allow, normalizePrefix(p))
	}
	for _, opt := range opts {
		opt(g)
	}
	if g.lookupNetIP == nil {
		g.lookupNetIP = net.DefaultResolver.LookupNetIP
	}
	g.dialer = net.Dialer{
		KeepAlive: 30 * time.Second,
		// Control runs after the socket is created and before connect: the
		// last point where the address can be refused without a packet sent
		// to it.
		Control: g.control,
	}
	return g
}

// normalizePrefix masks p and turns an IPv4-mapped IPv6 prefix into its IPv4
// form.
func normalizePrefix(p netip.Prefix) netip.Prefix {
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked()
}

// ParseNetworks parses a comma-separated list of networks, as in
// WEBHOOKS_ALLOW_NETWORKS: CIDR prefixes ("127.0.0.0/8", "fd00::/8") or bare
// addresses, which stand for themselves alone (/32 or /128). Spaces around an
// element and empty elements are ignored, so "" gives no networks. A prefix
// with host bits set ("10.0.0.1/8") is refused rather than silently widened
// or narrowed, since the operator's intent is unclear and the list exempts
// addresses from a security check.
func ParseNetworks(s string) ([]netip.Prefix, error) {
	var nets []netip.Prefix
	for i, el := range strings.Split(s, ",") {
		el = strings.TrimSpace(el)
		if el == "" {
			continue
		}
		p, err := parseNetwork(el)
		if err != nil {
			return nil, fmt.Errorf("netguard: network %d of the list, %q: %s", i+1, el, err)
		}
		nets = append(nets, p)
	}
	return nets, nil
}

func parseNetwork(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("not a CIDR prefix such as 10.0.0.0/8 or fd00::/8")
		}
		if p.Masked() != p {
			return netip.Prefix{}, fmt.Errorf("host bits are set; the network is %s", p.Masked())
		}
		return normalizePrefix(p), nil
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("not a CIDR prefix such as 10.0.0.0/8 or an IP address such as 127.0.0.1")
	}
	if ip.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("an address with a zone cannot be exempted")
	}
	return normalizePrefix(netip.PrefixFrom(ip, ip.BitLen())), nil
}
