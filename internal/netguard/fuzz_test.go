package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

// FuzzCheckURL checks that CheckURL never panics, refuses only with the two
// codes it documents, and that whatever it accepts is an http or https URL
// without user info whose host is neither an internal literal IP, in any
// notation a resolver might accept, nor a name that resolves only to
// internal addresses.
func FuzzCheckURL(f *testing.F) {
	for _, seed := range []string{
		// Accepted.
		"https://93.184.216.34/webhooks",
		"https://[2606:4700:4700::1111]:8443/a?b=c",
		"https://public.example/",
		"HTTPS://PUBLIC.EXAMPLE./x",
		"http://unknown.example/",
		"https://xn--bcher-kva.example/",
		// Literal internal addresses.
		"http://127.0.0.1:8080/",
		"http://[::1]/",
		"http://[::ffff:127.0.0.1]/",
		"http://[::ffff:7f00:1]/",
		"http://[64:ff9b::10.0.0.1]/",
		"http://[64:ff9b:1:5db8:a:0:102:304]/",
		"http://[fe80::1%25eth0]/",
		"http://169.254.169.254/latest/meta-data/",
		"http://0.0.0.0/",
		"http://[::]/",
		// Numeric forms.
		"http://2130706433/",
		"http://0177.0.0.1/",
		"http://0x7f.0.0.1/",
		"http://127.1/",
		"http://127.0.0.1./",
		// Names.
		"http://localhost/",
		"http://LOCALHOST./",
		"http://foo.localhost/",
		"http://metadata.google.internal/",
		"http://evil.example/",
		"http://intranet/",
		// Malformed and tricky.
		"",
		"https://user:pass@example.com/",
		"https://example.com/#frag",
		"https://public.example#@127.0.0.1/",
		"https://public.example\\@127.0.0.1/",
		"https://127.0.0.1%2f@public.example/",
		"https://%31%32%37.0.0.1/",
		"https://１２７.０.０.１/",
		"javascript:alert(1)",
		"https:example.com",
		"https://example.com:99999/",
		"https://[::1/",
	} {
		f.Add(seed, false)
	}
	f.Add("http://public.example/", true)

	names := map[string][]string{
		"public.example": {"93.184.216.34"},
		"evil.example":   {"10.0.0.1", "::1"},
		"mapped.example": {"::ffff:169.254.169.254"},
	}
	g := New(nil, WithLookupNetIP(stubResolver(names)))

	f.Fuzz(func(t *testing.T, raw string, requireHTTPS bool) {
		u, err := g.CheckURL(context.Background(), raw, requireHTTPS)
		if err != nil {
			var werr *webhooks.Error
			if !errors.As(err, &werr) || (werr.Code != webhooks.EINVALID && werr.Code != webhooks.EURLNOTALLOWED) {
				t.Fatalf("CheckURL(%q): got %v, want a *webhooks.Error with code %s or %s", raw, err, webhooks.EINVALID, webhooks.EURLNOTALLOWED)
			}
			if u != nil {
				t.Fatalf("CheckURL(%q): got URL %v with error %v, want nil", raw, u, err)
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("CheckURL(%q): accepted scheme %q", raw, u.Scheme)
		}
		if requireHTTPS && u.Scheme != "https" {
			t.Fatalf("CheckURL(%q, requireHTTPS): accepted scheme %q", raw, u.Scheme)
		}
		if u.User != nil {
			t.Fatalf("CheckURL(%q): accepted user info", raw)
		}
		if len(raw) > MaxURLLength || strings.Contains(raw, "#") {
			t.Fatalf("CheckURL(%q): accepted a URL too long or with a fragment", raw)
		}
		// What the transport dials: the host, unchanged since it is ASCII.
		host := u.Hostname()
		if host == "" {
			t.Fatalf("CheckURL(%q): accepted an empty host", raw)
		}
		for i := 0; i < len(host); i++ {
			if host[i] >= 0x80 {
				t.Fatalf("CheckURL(%q): accepted non-ASCII host %q", raw, host)
			}
		}
		if ip, err := netip.ParseAddr(host); err == nil && !g.Allowed(ip) {
			t.Fatalf("CheckURL(%q): accepted internal literal IP %s", raw, ip)
		}
		if ip, ok := parseIPv4Liberal(host); ok {
			if canonical, err := netip.ParseAddr(host); err != nil || canonical != ip {
				t.Fatalf("CheckURL(%q): accepted %q, which a liberal parser reads as %s", raw, host, ip)
			}
		}
		if addrs, err := stubResolver(names)(context.Background(), "ip", host); err == nil {
			allowed := false
			for _, a := range addrs {
				allowed = allowed || g.Allowed(a)
			}
			if !allowed {
				t.Fatalf("CheckURL(%q): accepted %q, which resolves only to internal addresses", raw, host)
			}
		}
		// What CheckURL returned must mean the same when stored and
		// parsed again.
		again, err := url.Parse(u.String())
		if err != nil || again.Hostname() != host || again.User != nil || again.Scheme != u.Scheme {
			t.Fatalf("CheckURL(%q): got %q, which parses again as %v (%v)", raw, u.String(), again, err)
		}
		if _, _, err := net.SplitHostPort(net.JoinHostPort(host, "443")); err != nil {
			t.Fatalf("CheckURL(%q): host %q does not make a dial address: %v", raw, host, err)
		}
	})
}

// parseIPv4Liberal reads s as the most liberal IPv4 parsers do (inet_aton,
// the WHATWG URL standard): one to four parts, each decimal, octal (leading
// 0) or hexadecimal (0x), the last filling the remaining bytes, and one
// trailing dot allowed.
func parseIPv4Liberal(s string) (netip.Addr, bool) {
	s = strings.ToLower(strings.TrimSuffix(s, "."))
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case strings.HasPrefix(p, "0x"):
			base, p = 16, p[2:]
			if p == "" {
				p = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		if p == "" || strings.ContainsAny(p, "+-_") {
			return netip.Addr{}, false
		}
		n, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := len(nums) - 1
	if nums[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	v := nums[last]
	for i := 0; i < last; i++ {
		if nums[i] > 255 {
			return netip.Addr{}, false
		}
		v |= nums[i] << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func TestParseIPv4Liberal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // "" for not an address
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"0x", "0.0.0.0"},
		{"1.2.3.4.5", ""},
		{"example.com", ""},
		{"256.0.0.1", ""},
		{"08.0.0.1", ""},
	}
	for _, tt := range tests {
		ip, ok := parseIPv4Liberal(tt.in)
		got := ""
		if ok {
			got = ip.String()
		}
		if got != tt.want {
			t.Errorf("parseIPv4Liberal(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}
