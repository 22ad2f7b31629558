package netguard

import (
	"net/netip"
	"strings"
	"testing"
)

func TestGuard_Allowed(t *testing.T) {
	t.Parallel()
	g := New(nil)
	refused := []string{
		// Unspecified and "this network".
		"0.0.0.0", "0.1.2.3", "0.255.255.255", "::",
		// Loopback.
		"127.0.0.1", "127.0.0.2", "127.255.255.254", "::1",
		// Private (RFC 1918), edges included.
		"10.0.0.0", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.0.1", "192.168.255.255",
		// Link-local and the metadata address.
		"169.254.0.1", "169.254.169.254", "fe80::1", "febf:ffff::1",
		// Shared (CGNAT).
		"100.64.0.1", "100.127.255.255",
		// Unique-local and the deprecated site-local.
		"fc00::1", "fd12:3456:789a::1", "fec0::1",
		// Multicast.
		"224.0.0.1", "239.255.255.250", "ff02::1", "ff05::fb",
		// Documentation.
		"192.0.2.1", "198.51.100.7", "203.0.113.9", "2001:db8::1", "3fff::1", "3fff:fff:ffff::1",
		// Benchmarking, IETF protocol assignments, 6to4 relay, reserved, broadcast.
		"198.18.0.1", "198.19.255.255", "192.0.0.8", "192.0.0.170", "192.88.99.1", "240.0.0.1", "255.255.255.254", "255.255.255.255",
		// IPv6 special ranges.
		"100::1", "2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:10::1", "2001:20::1", "2001:2::1", "2001:1ff::1",
		"2002:7f00:1::1", "2002:5db8:d822::1", "5f00::1", "4000::1", "::ffff:0:7f00:1",
		// IPv4-mapped, IPv4-compatible and NAT64 forms of internal addresses.
		"::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:0.0.0.0",
		"::127.0.0.1", "::10.0.0.1", "::0.0.0.2",
		"64:ff9b::127.0.0.1", "64:ff9b::a00:1", "64:ff9b::a9fe:a9fe",
		// Local-use NAT64: each address below carries an internal IPv4 in one
		// layout only (RFC 6052); the others give public addresses.
		"64:ff9b:1::c0a8:101",            // /96 layout: 192.168.1.1
		"64:ff9b:1:5db8:a:0:102:304",     // /64 layout: 10.0.0.1
		"64:ff9b:1:5dc0:a8:101:203:405",  // /56 layout: 192.168.1.1
		"64:ff9b:1:ac10:5d:b801:203:405", // /48 layout: 172.16.93.184
		// Zones, whatever the address.
		"fe80::1%eth0", "2606:4700::1%eth0",
	}
	for _, s := range refused {
		ip := netip.MustParseAddr(s)
		if g.Allowed(ip) {
			t.Errorf("Allowed(%s): got true, want false", s)
		}
	}
	if g.Allowed(netip.Addr{}) {
		t.Errorf("Allowed(zero Addr): got true, want false")
	}

	accepted := []string{
		"93.184.216.34", "8.8.8.8", "1.1.1.1", "1.0.0.0", "9.255.255.255", "11.0.0.0",
		"100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0", "192.167.255.255", "192.169.0.0",
		"198.17.255.255", "198.20.0.0", "223.255.255.255", "192.31.196.1", "169.253.255.255",
		"2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "2001:200::1", "2003::1", "3fff:1000::1",
		"::ffff:93.184.216.34", "::93.184.216.34", "64:ff9b::5db8:d822",
		"64:ff9b:1:5db8:5d:b801:203:405", // public in every local-use NAT64 layout
	}
	for _, s := range accepted {
		ip := netip.MustParseAddr(s)
		if !g.Allowed(ip) {
			t.Errorf("Allowed(%s): got false (%s), want true", s, g.refusal(ip))
		}
	}
}

func TestGuard_Allowed_Exempt(t *testing.T) {
	t.Parallel()
	g := New([]netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("fe80::/10"),
		netip.MustParsePrefix("::ffff:10.1.0.0/112"), // stored as 10.1.0.0/16
	})
	tests := []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.0.0.2", true},
		{"127.255.255.255", true},
		{"::ffff:127.0.0.1", true}, // unmapped before the allow list
		{"10.1.2.3", true},
		{"::ffff:10.1.2.3", true},
		{"fe80::1", true},
		{"fe80::1%eth0", false}, // a zone is never exempted
		{"::1", false},
		{"10.0.0.1", false},
		{"128.0.0.1", true},        // public anyway
		{"::127.0.0.1", false},     // IPv4-compatible is not unmapped
		{"64:ff9b::7f00:1", false}, // nor is NAT64
		{"169.254.169.254", false},
	}
	for _, tt := range tests {
		if got := g.Allowed(netip.MustParseAddr(tt.ip)); got != tt.want {
			t.Errorf("Allowed(%s) with 127.0.0.0/8 exempt: got %t, want %t", tt.ip, got, tt.want)
		}
	}
}

func TestGuard_refusal_Reason(t *testing.T) {
	t.Parallel()
	g := New(nil)
	tests := []struct {
		ip   string
		want string
	}{
		{"127.0.0.1", "loopback"},
		{"169.254.169.254", "metadata"},
		{"::ffff:10.0.0.1", "IPv4-mapped form of 10.0.0.1, which is a private address"},
		{"64:ff9b::a9fe:a9fe", "NAT64 form of 169.254.169.254"},
		{"fe80::1%eth0", "zone (%eth0)"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"4000::1", "2000::/3"},
	}
	for _, tt := range tests {
		if got := g.refusal(netip.MustParseAddr(tt.ip)); !strings.Contains(got, tt.want) {
			t.Errorf("refusal(%s): got %q, want it to contain %q", tt.ip, got, tt.want)
		}
	}
}

func TestParseNetworks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // the prefixes joined by ",", or "error: <substring>"
	}{
		{"", ""},
		{" ", ""},
		{"127.0.0.0/8", "127.0.0.0/8"},
		{"127.0.0.0/8, ::1/128", "127.0.0.0/8,::1/128"},
		{"10.0.0.5", "10.0.0.5/32"},
		{"::1", "::1/128"},
		{"fd00::/8,", "fd00::/8"},
		{"::ffff:127.0.0.0/104", "127.0.0.0/8"},
		{"::ffff:127.0.0.1", "127.0.0.1/32"},
		{"127.0.0.0/8,nonsense", `error: network 2 of the list, "nonsense"`},
		{"10.0.0.1/8", "error: host bits are set; the network is 10.0.0.0/8"},
		{"10.0.0.0/33", `error: "10.0.0.0/33": not a CIDR`},
		{"fe80::1%eth0", "error: zone"},
		{"localhost", `error: "localhost": not a CIDR prefix`},
	}
	for _, tt := range tests {
		nets, err := ParseNetworks(tt.in)
		var got string
		if err != nil {
			got = "error: " + err.Error()
			if strings.HasPrefix(tt.want, "error: ") && strings.Contains(got, strings.TrimPrefix(tt.want, "error: ")) {
				continue
			}
		} else {
			var parts []string
			for _, p := range nets {
				parts = append(parts, p.String())
			}
			got = strings.Join(parts, ",")
			if got == tt.want {
				continue
			}
		}
		t.Errorf("ParseNetworks(%q): got %q, want %q", tt.in, got, tt.want)
	}
}

func TestNew_InvalidPrefixPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Errorf("New with a zero Prefix: got no panic, want one")
		}
	}()
	New([]netip.Prefix{{}})
}
