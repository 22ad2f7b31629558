package netguard

import (
	"fmt"
	"net/netip"
)

// Allowed reports whether the service may connect to ip. It refuses every
// address that is not globally reachable (see refusal for the ranges), and
// any address with an IPv6 zone, unless the address, unmapped from its
// IPv4-mapped IPv6 form, lies in one of the networks the Guard exempts.
func (g *Guard) Allowed(ip netip.Addr) bool {
	return g.refusal(ip) == ""
}

// refusal returns why the service may not connect to ip, as a phrase that
// follows "<ip> is", or "" when it may.
func (g *Guard) refusal(ip netip.Addr) string {
	if !ip.IsValid() {
		return "not a valid IP address"
	}
	if ip.Zone() != "" {
		// A zone names one of this machine's interfaces: whatever the
		// address, it is only meaningful on a local link.
		return fmt.Sprintf("an address with an IPv6 zone (%%%s), which names a local interface", ip.Zone())
	}
	unmapped := ip.Unmap()
	for _, p := range g.allow {
		if p.Contains(unmapped) {
			return ""
		}
	}
	if ip.Is4() {
		return refusal4(ip)
	}
	return refusal6(ip)
}

// rule is one refused range and the phrase that describes it.
type rule struct {
	prefix netip.Prefix
	what   string
}

// ipv4Rules are the IPv4 ranges of the IANA special-purpose address registry
// that are not globally reachable, plus multicast and 240/4. The few
// registry entries inside 192.0.0.0/24 that are global (PCP and TURN
// anycast) are refused with the rest of it: no webhook endpoint lives there.
var ipv4Rules = []rule{
	{netip.MustParsePrefix("0.0.0.0/8"), `in 0.0.0.0/8 ("this network")`},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address (10.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address (100.64.0.0/10)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address (127.0.0.0/8)"},
	{netip.MustParsePrefix("169.254.169.254/32"), "the cloud metadata address (link-local, 169.254.0.0/16)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address (169.254.0.0/16)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address (172.16.0.0/12)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol assignment (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address (192.0.2.0/24)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a 6to4 relay anycast address (192.88.99.0/24)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address (192.168.0.0/16)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address (198.18.0.0/15)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address (198.51.100.0/24)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address (203.0.113.0/24)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address (224.0.0.0/4)"},
	{netip.MustParsePrefix("255.255.255.255/32"), "the broadcast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address (240.0.0.0/4)"},
}

// refusal4 applies the IPv4 policy, ignoring the allow list.
func refusal4(ip netip.Addr) string {
	if ip.IsUnspecified() {
		return "the unspecified address (0.0.0.0)"
	}
	for _, r := range ipv4Rules {
		if r.prefix.Contains(ip) {
			return r.what
		}
	}
	return ""
}

// Prefixes whose addresses carry an IPv4 address and are judged by it.
var (
	ipv4Mapped     = netip.MustParsePrefix("::ffff:0:0/96")
	ipv4Compatible = netip.MustParsePrefix("::/96")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	globalUnicast  = netip.MustParsePrefix("2000::/3")
)

// ipv6Rules are the IPv6 ranges refused outright. Every address outside
// 2000::/3 is refused anyway (IANA has allocated nothing else for global
// unicast); the rules outside it only give a better reason.
//
// All of 2002::/16 (6to4) is refused rather than judged by the embedded IPv4:
// 6to4 is deprecated (RFC 7526), no webhook receiver depends on it, and where
// its packets go depends on this network's relay. Teredo (2001::/32) and
// ORCHID are refused with the rest of 2001::/23 for the same reasons.
var ipv6Rules = []rule{
	{netip.MustParsePrefix("100::/64"), "an IPv6 discard address (100::/64)"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo address (2001::/32)"},
	{netip.MustParsePrefix("2001:10::/28"), "an ORCHID address (2001:10::/28)"},
	{netip.MustParsePrefix("2001:20::/28"), "an ORCHIDv2 address (2001:20::/28)"},
	{netip.MustParsePrefix("2001::/23"), "an IETF protocol assignment (2001::/23)"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address (2001:db8::/32)"},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 address (2002::/16)"},
	{netip.MustParsePrefix("3fff::/20"), "a documentation address (3fff::/20)"},
	{netip.MustParsePrefix("fc00::/7"), "a unique-local address (fc00::/7)"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address (fe80::/10)"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address (fec0::/10)"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address (ff00::/8)"},
}

// refusal6 applies the IPv6 policy, ignoring the allow list.
func refusal6(ip netip.Addr) string {
	// Compared by value: netip's IsLoopback would also match the mapped
	// ::ffff:127.0.0.1 and give a misleading reason.
	switch {
	case ip == netip.IPv6Unspecified():
		return "the unspecified address (::)"
	case ip == netip.IPv6Loopback():
		return "the loopback address (::1)"
	case ipv4Mapped.Contains(ip):
		return embedded("an IPv4-mapped form of", ip.Unmap())
	case ipv4Compatible.Contains(ip):
		return embedded("an IPv4-compatible form of", last32(ip))
	case nat64.Contains(ip):
		return embedded("a NAT64 form of", last32(ip))
	case nat64Local.Contains(ip):
		return refusalNAT64Local(ip)
	}
	for _, r := range ipv6Rules {
		if r.prefix.Contains(ip) {
			return r.what
		}
	}
	if !globalUnicast.Contains(ip) {
		return "outside the IPv6 global unicast range (2000::/3)"
	}
	return ""
}

// embedded judges an IPv6 address by the IPv4 address v4 it carries.
func embedded(form string, v4 netip.Addr) string {
	if r := refusal4(v4); r != "" {
		return fmt.Sprintf("%s %s, which is %s", form, v4, r)
	}
	return ""
}

// last32 returns the IPv4 address in the last 32 bits of ip.
func last32(ip netip.Addr) netip.Addr {
	b := ip.As16()
	return netip.AddrFrom4([4]byte(b[12:]))
}

// refusalNAT64Local judges an address of the local-use NAT64 prefix
// 64:ff9b:1::/48 (RFC 8215). Unlike the well-known 64:ff9b::/96, the network
// chooses the translation prefix length inside it, which moves the embedded
// IPv4 address (RFC 6052, section 2.2, with the u octet at bits 64-71). The
// address is refused if any layout possible here carries a refused IPv4.
func refusalNAT64Local(ip netip.Addr) string {
	b := ip.As16()
	layouts := [][4]byte{
		{b[6], b[7], b[9], b[10]},    // /48
		{b[7], b[9], b[10], b[11]},   // /56
		{b[9], b[10], b[11], b[12]},  // /64
		{b[12], b[13], b[14], b[15]}, // /96
	}
	for _, l := range layouts {
		if r := embedded("a local-use NAT64 form of", netip.AddrFrom4(l)); r != "" {
			return r
		}
	}
	return ""
}
