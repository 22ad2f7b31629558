package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// stubResolver answers names from a table, case-insensitively and with or
// without the trailing dot, and NXDOMAIN for the rest: this machine has no
// outside DNS.
func stubResolver(table map[string][]string) LookupNetIPFunc {
	return func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		addrs, ok := table[strings.ToLower(strings.TrimSuffix(host, "."))]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		var ips []netip.Addr
		for _, a := range addrs {
			ips = append(ips, netip.MustParseAddr(a))
		}
		return ips, nil
	}
}

// testNames is what the stub resolver knows in the CheckURL tests.
var testNames = map[string][]string{
	"public.example":           {"93.184.216.34"},
	"public6.example":          {"2606:2800:220:1:248:1893:25c8:1946"},
	"mixed.example":            {"10.0.0.1", "93.184.216.34"},
	"loop.example":             {"127.0.0.1"},
	"private.example":          {"10.0.0.1", "192.168.1.1"},
	"v6loop.example":           {"::1", "::ffff:127.0.0.1"},
	"metadata.example":         {"169.254.169.254"},
	"nat64.example":            {"64:ff9b::a00:1"},
	"metadata.google.internal": {"169.254.169.254"},
	"public.internal":          {"93.184.216.34"},
	"printer.local":            {"192.168.1.20"},
	"intranet":                 {"10.1.2.3"},
	"localhost":                {"127.0.0.1", "::1"},
}

func TestGuard_CheckURL_Refused(t *testing.T) {
	t.Parallel()
	g := New(nil, WithLookupNetIP(stubResolver(testNames)))
	const (
		inv  = webhooks.EINVALID
		deny = webhooks.EURLNOTALLOWED
	)
	tests := []struct {
		url          string
		requireHTTPS bool
		code         string
		msg          string // a substring of the message, if set
	}{
		// Malformed, relative, wrong scheme, credentials, fragment, ports.
		{url: "", code: inv, msg: "required"},
		{url: "https://example.com/" + strings.Repeat("a", 2048), code: inv, msg: "limit is 2048"},
		{url: "example.com/webhooks", code: inv, msg: "absolute"},
		{url: "/webhooks", code: inv, msg: "absolute"},
		{url: "//example.com/webhooks", code: inv, msg: "absolute"},
		{url: "ftp://example.com/", code: inv, msg: `scheme "ftp"`},
		{url: "file:///etc/passwd", code: inv, msg: `scheme "file"`},
		{url: "javascript:alert(1)", code: inv, msg: "scheme"},
		{url: "gopher://127.0.0.1:6379/_INFO", code: inv, msg: "scheme"},
		{url: "https://user:hunter2@example.com/", code: inv, msg: "user name or password"},
		{url: "https://user@example.com/", code: inv, msg: "user name or password"},
		{url: "https://@example.com/", code: inv, msg: "user name or password"},
		{url: "https://", code: inv, msg: "must have a host"},
		{url: "https:example.com", code: inv, msg: "must have a host"},
		{url: "https:///webhooks", code: inv, msg: "must have a host"},
		{url: "https://:443/", code: inv, msg: "must have a host"},
		{url: "https://example.com/#token", code: inv, msg: "fragment"},
		{url: "https://example.com/#", code: inv, msg: "fragment"},
		{url: "https://public.example#@127.0.0.1/", code: inv, msg: "fragment"},
		{url: "http://public.example/", requireHTTPS: true, code: inv, msg: "WEBHOOKS_ALLOW_HTTP"},
		{url: "HTTP://public.example/", requireHTTPS: true, code: inv, msg: "https"},
		{url: "https://example.com:0/", code: inv, msg: "port 0"},
		{url: "https://example.com:70000/", code: inv, msg: "port 70000"},
		{url: "https://example.com:abc/", code: inv, msg: "port"},
		{url: "https://exa mple.com/", code: inv, msg: "malformed"},
		{url: "https://exa!mple.com/", code: inv, msg: `contains '!'`},
		{url: "https://a..example.com/", code: inv, msg: "empty label"},
		{url: "https://.example.com/", code: inv, msg: "empty label"},
		{url: "https://example.com../", code: inv, msg: "empty label"},
		{url: "https://" + strings.Repeat("a", 64) + ".com/", code: inv, msg: "63"},
		{url: "https://bücher.example/", code: inv, msg: "punycode"},
		{url: "https://１２７.０.０.１/", code: inv, msg: "ASCII"},
		{url: "https://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/", code: inv, msg: "ASCII"},
		{url: "https://[1.2.3.4]/", code: inv, msg: "malformed"},
		{url: "https://[example.com]/", code: inv, msg: "malformed"},
		{url: "https://user:pass%zz@example.com/", code: inv, msg: "percent-escape"},

		// Literal internal addresses, in every notation.
		{url: "http://127.0.0.1/", code: deny, msg: "URL host 127.0.0.1 is a loopback address"},
		{url: "http://127.0.0.2:8080/", code: deny, msg: "loopback"},
		{url: "http://127.255.255.254/", code: deny},
		{url: "http://0.0.0.0/", code: deny, msg: "unspecified"},
		{url: "http://0.1.2.3/", code: deny},
		{url: "http://[::]/", code: deny, msg: "unspecified"},
		{url: "http://[::1]:8080/", code: deny, msg: "loopback"},
		{url: "http://[0:0:0:0:0:0:0:1]/", code: deny},
		{url: "http://[::ffff:127.0.0.1]/", code: deny, msg: "IPv4-mapped form of 127.0.0.1"},
		{url: "http://[::ffff:7f00:1]/", code: deny, msg: "IPv4-mapped form of 127.0.0.1"},
		{url: "http://[::FFFF:a9fe:a9fe]/", code: deny, msg: "metadata"},
		{url: "http://[::127.0.0.1]/", code: deny, msg: "IPv4-compatible"},
		{url: "http://[64:ff9b::10.0.0.1]/", code: deny, msg: "NAT64 form of 10.0.0.1"},
		{url: "http://[64:ff9b::a9fe:a9fe]/", code: deny, msg: "NAT64"},
		{url: "http://[64:ff9b:1::c0a8:101]/", code: deny, msg: "local-use NAT64"},
		{url: "http://[fe80::1%25eth0]/", code: deny, msg: "zone"},
		{url: "http://[2606:4700::1%25eth0]/", code: deny, msg: "zone"},
		{url: "http://169.254.169.254/latest/meta-data/", code: deny, msg: "metadata"},
		{url: "http://169.254.0.1/", code: deny, msg: "link-local"},
		{url: "http://[fe80::1]/", code: deny, msg: "link-local"},
		{url: "http://10.0.0.1/", code: deny, msg: "private"},
		{url: "http://10.255.255.255/", code: deny},
		{url: "http://172.16.0.1/", code: deny},
		{url: "http://172.31.255.255/", code: deny},
		{url: "http://192.168.1.1/", code: deny},
		{url: "http://100.64.0.1/", code: deny, msg: "carrier-grade NAT"},
		{url: "http://100.127.255.255/", code: deny},
		{url: "http://[fc00::1]/", code: deny, msg: "unique-local"},
		{url: "http://[fd12:3456::1]/", code: deny},
		{url: "http://224.0.0.1/", code: deny, msg: "multicast"},
		{url: "http://239.255.255.250/", code: deny},
		{url: "http://[ff02::1]/", code: deny, msg: "multicast"},
		{url: "http://192.0.2.1/", code: deny, msg: "documentation"},
		{url: "http://198.51.100.7/", code: deny},
		{url: "http://203.0.113.9/", code: deny},
		{url: "http://[2001:db8::1]/", code: deny, msg: "documentation"},
		{url: "http://[3fff::1]/", code: deny, msg: "documentation"},
		{url: "http://198.18.0.1/", code: deny, msg: "benchmarking"},
		{url: "http://198.19.255.255/", code: deny},
		{url: "http://192.0.0.8/", code: deny, msg: "IETF"},
		{url: "http://240.0.0.1/", code: deny, msg: "reserved"},
		{url: "http://255.255.255.255/", code: deny, msg: "broadcast"},
		{url: "http://192.88.99.1/", code: deny, msg: "6to4"},
		{url: "http://[100::1]/", code: deny, msg: "discard"},
		{url: "http://[fec0::1]/", code: deny, msg: "site-local"},
		{url: "http://[2001::1]/", code: deny, msg: "Teredo"},
		{url: "http://[2001:10::1]/", code: deny, msg: "ORCHID"},
		{url: "http://[2002:7f00:1::]/", code: deny, msg: "6to4"},
		{url: "http://[2002:5db8:d822::1]/", code: deny, msg: "6to4"},
		{url: "http://[::ffff:0:7f00:1]/", code: deny, msg: "2000::/3"},

		// Numeric hosts that some resolvers read as IPv4.
		{url: "http://2130706433/", code: deny, msg: "non-standard form"},
		{url: "http://3232235777/", code: deny},
		{url: "http://0x7f000001/", code: deny},
		{url: "http://017700000001/", code: deny},
		{url: "http://0177.0.0.1/", code: deny},
		{url: "http://0x7f.0.0.1/", code: deny},
		{url: "http://0X7F.0x0.0x0.0x1/", code: deny},
		{url: "http://0x7f.1/", code: deny},
		{url: "http://127.1/", code: deny},
		{url: "http://127.0.1/", code: deny},
		{url: "http://127.000.000.001/", code: deny},
		{url: "http://127.0.0.0x1/", code: deny},
		{url: "http://127.0.0.1./", code: deny, msg: "trailing dot"},
		{url: "http://8.8.8.8./", code: deny},
		{url: "http://0/", code: deny},
		{url: "http://0x/", code: deny},
		{url: "http://1.2.3.4.5/", code: deny},
		{url: "http://example.123/", code: deny},

		// Local names.
		{url: "http://localhost/", code: deny, msg: `"localhost" names this machine`},
		{url: "http://LOCALHOST./", code: deny},
		{url: "http://localhost:8080/webhooks", code: deny},
		{url: "http://foo.localhost/", code: deny},
		{url: "http://a.b.LocalHost./", code: deny},
		{url: "http://localhost.localdomain/", code: deny},
		{url: "http://ip6-localhost/", code: deny},
		{url: "http://ip6-loopback/", code: deny},
		{url: "http://printer.local/", code: deny, msg: "under .local"},
		{url: "http://unknown.local/", code: deny, msg: "under .local"},
		{url: "http://metadata.google.internal/computeMetadata/v1/", code: deny, msg: "under .internal"},
		{url: "http://router.home.arpa/", code: deny, msg: "home.arpa"},
		{url: "http://db.localdomain/", code: deny},
		{url: "http://intranet/", code: deny, msg: "single-label"},
		{url: "http://unknown-single-label/", code: deny, msg: "single-label"},

		// Names that resolve only to internal addresses.
		{url: "http://loop.example/", code: deny, msg: `"loop.example" resolves only to internal addresses (127.0.0.1 is a loopback address`},
		{url: "https://LOOP.EXAMPLE./", code: deny},
		{url: "https://private.example/", code: deny, msg: "192.168.1.1"},
		{url: "https://v6loop.example/", code: deny},
		{url: "https://metadata.example/", code: deny, msg: "metadata"},
		{url: "https://nat64.example/", code: deny, msg: "NAT64"},
	}
	for _, tt := range tests {
		u, err := g.CheckURL(context.Background(), tt.url, tt.requireHTTPS)
		if err == nil {
			t.Errorf("CheckURL(%q): got %v, nil; want code %s", tt.url, u, tt.code)
			continue
		}
		var werr *webhooks.Error
		if !errors.As(err, &werr) {
			t.Errorf("CheckURL(%q): got error %v (%T), want a *webhooks.Error", tt.url, err, err)
			continue
		}
		if werr.Code != tt.code {
			t.Errorf("CheckURL(%q): got code %s (%s), want %s", tt.url, werr.Code, werr.Message, tt.code)
		}
		if !strings.Contains(werr.Message, tt.msg) {
			t.Errorf("CheckURL(%q): got message %q, want it to contain %q", tt.url, werr.Message, tt.msg)
		}
	}
}

func TestGuard_CheckURL_Accepted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url          string
		requireHTTPS bool
		allow        string // exempted networks, for ParseNetworks
	}{
		{url: "https://93.184.216.34/", requireHTTPS: true},
		{url: "https://93.184.216.34:8443/webhooks?x=1", requireHTTPS: true},
		{url: "https://[2606:4700:4700::1111]/", requireHTTPS: true},
		{url: "https://[2a00:1450:4001:80b::200e]:443/hooks", requireHTTPS: true},
		{url: "https://[64:ff9b::5db8:d822]/"},
		{url: "http://[::ffff:93.184.216.34]/"},
		{url: "https://public.example/webhooks", requireHTTPS: true},
		{url: "HTTPS://PUBLIC.EXAMPLE./webhooks", requireHTTPS: true},
		{url: "https://public6.example/"},
		{url: "https://mixed.example/"},             // one public address is enough
		{url: "https://unknown.example/"},           // NXDOMAIN: the dial-time check decides
		{url: "https://unknown.example:8443/a/b?c"}, // likewise
		{url: "https://under_score.example/"},
		{url: "https://xn--bcher-kva.example/"},
		{url: "https://0x7f.example/"}, // only the last label decides
		{url: "https://1e100.net/"},
		{url: "https://public.internal/"}, // a private-use name, but public now
		{url: "http://public.example/"},   // plain http outside live mode
		{url: "http://public.example/", requireHTTPS: false},
		{url: "https://public.example:443/"},

		// The operator's exemptions.
		{url: "http://127.0.0.1:8080/", allow: "127.0.0.0/8"},
		{url: "http://127.0.0.2/", allow: "127.0.0.0/8"},
		{url: "http://[::ffff:127.0.0.1]:8080/", allow: "127.0.0.0/8"},
		{url: "http://loop.example/", allow: "127.0.0.0/8"},
		{url: "http://localhost:8080/", allow: "127.0.0.0/8"},
		{url: "http://[::1]:8080/", allow: "::1"},
		{url: "http://10.1.2.3/", allow: "10.0.0.0/8"},
		{url: "http://intranet/", allow: "10.0.0.0/8"},
		{url: "http://printer.local/", allow: "192.168.0.0/16"},
	}
	for _, tt := range tests {
		allow, err := ParseNetworks(tt.allow)
		if err != nil {
			t.Fatal(err)
		}
		g := New(allow, WithLookupNetIP(stubResolver(testNames)))
		u, err := g.CheckURL(context.Background(), tt.url, tt.requireHTTPS)
		if err != nil {
			t.Errorf("CheckURL(%q) exempting %q: got %v, want nil", tt.url, tt.allow, err)
			continue
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Errorf("CheckURL(%q): got scheme %q, want http or https", tt.url, u.Scheme)
		}
	}
}

func TestGuard_CheckURL_ExemptIsExact(t *testing.T) {
	t.Parallel()
	allow, _ := ParseNetworks("127.0.0.0/8")
	g := New(allow, WithLookupNetIP(stubResolver(testNames)))
	for _, raw := range []string{
		"http://10.0.0.1/",
		"http://[::1]/",
		"http://ip6-localhost/",
		"http://2130706433/", // ambiguous whatever it means
		"http://[64:ff9b::7f00:1]/",
		"http://[::127.0.0.1]/",
		"http://169.254.169.254/",
		"http://private.example/",
	} {
		if _, err := g.CheckURL(context.Background(), raw, false); webhooks.ErrorCode(err) != webhooks.EURLNOTALLOWED {
			t.Errorf("CheckURL(%q) exempting 127.0.0.0/8: got %v, want code %s", raw, err, webhooks.EURLNOTALLOWED)
		}
	}
}

// TestGuard_CheckURL_NoPassword checks that messages never echo a password.
func TestGuard_CheckURL_NoPassword(t *testing.T) {
	t.Parallel()
	g := New(nil, WithLookupNetIP(stubResolver(testNames)))
	for _, raw := range []string{
		"https://user:hunter2@example.com/",
		"https://user:hunter2@127.0.0.1/",
		"https://user:hunter2%zz@example.com/",
		"https://user:hunter2@exa mple.com/",
		"https://user:hunter2@example.com:abc/",
		"ftp://user:hunter2@example.com/",
		"http://user:hunter2@example.com/",
		"https://user:hunter2@[::1/",
		"https://user:hunter2\x7f@example.com/",
		"https://user:hunter2@example.com/" + strings.Repeat("a", 2048),
	} {
		_, err := g.CheckURL(context.Background(), raw, true)
		if err == nil {
			t.Errorf("CheckURL(%q): got nil, want an error", raw)
			continue
		}
		if msg := webhooks.ErrorMessage(err); strings.Contains(msg, "hunter2") {
			t.Errorf("CheckURL(%q): got message %q, want it without the password", raw, msg)
		}
	}
}

// TestGuard_CheckURL_LookupTimeout checks that a lookup that hangs does not
// hold CheckURL longer than the lookup timeout, and does not refuse.
func TestGuard_CheckURL_LookupTimeout(t *testing.T) {
	t.Parallel()
	hang := func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	g := New(nil, WithLookupNetIP(hang), WithLookupTimeout(10*time.Millisecond))
	if _, err := g.CheckURL(context.Background(), "https://slow.example/", true); err != nil {
		t.Errorf("CheckURL with a hanging resolver: got %v, want nil", err)
	}
}
