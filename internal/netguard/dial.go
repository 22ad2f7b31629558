package netguard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrAddressNotAllowed is wrapped by every error of DialContext that refuses
// an address. The delivery engine tests for it with errors.Is and ends the
// delivery failed_permanently with reason address_not_allowed.
var ErrAddressNotAllowed = errors.New("netguard: address not allowed")

// maxListed caps the addresses named in an error, since a DNS answer may hold
// many.
const maxListed = 4

// minPartialTimeout is the least time given to one address when a host has
// several, as the net package does, so that a slow first address does not
// starve the others.
const minPartialTimeout = 2 * time.Second

// DialContext connects to addr ("host:port") over network ("tcp", "tcp4" or
// "tcp6") like net.Dialer.DialContext, but only to addresses the Guard
// allows. It is meant for http.Transport.DialContext.
//
// A literal IP host is judged as is; a name is resolved with the Guard's
// resolver at every call, so a name that now resolves to an internal address
// is caught (DNS rebinding). Refused addresses are dropped and the others
// dialed in the resolver's order until one connects, all within the dial
// timeout. If every address is refused, no connection is attempted and the
// error wraps ErrAddressNotAllowed and names the host and its addresses. A
// resolver error is returned as is (a retryable failure for the engine).
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("netguard: dial %s: %w", addr, err)
	}
	var family string
	switch network {
	case "tcp":
		family = "ip"
	case "tcp4":
		family = "ip4"
	case "tcp6":
		family = "ip6"
	default:
		return nil, fmt.Errorf("netguard: dial %s: network %q is not supported", addr, network)
	}

	var ips []netip.Addr
	ip, err := netip.ParseAddr(host)
	literal := err == nil
	if literal {
		ips = []netip.Addr{ip}
	} else {
		ips, err = g.lookupNetIP(ctx, family, host)
		if err != nil {
			return nil, err
		}
	}

	var allowed []netip.Addr
	var refused []string
	for _, ip := range ips {
		if why := g.refusal(ip); why != "" {
			refused = append(refused, ip.String()+" is "+why)
			continue
		}
		// A mapped address is dialed as the IPv4 address it stands for,
		// the one the allow list and the policy judged.
		ip = ip.Unmap()
		if family == "ip4" && !ip.Is4() || family == "ip6" && !ip.Is6() {
			continue
		}
		allowed = append(allowed, ip)
	}
	if len(allowed) == 0 {
		if len(refused) > 0 {
			return nil, refusedError(host, literal, refused)
		}
		return nil, &net.DNSError{Err: "no suitable address", Name: host, IsNotFound: true}
	}

	if g.dialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.dialTimeout)
		defer cancel()
	}
	var firstErr error
	for i, ip := range allowed {
		dctx, cancel := partialContext(ctx, len(allowed)-i)
		conn, err := g.dialer.DialContext(dctx, network, net.JoinHostPort(ip.String(), port))
		cancel()
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// refusedError reports that every address of host was refused. literal says
// that host is itself the address.
func refusedError(host string, literal bool, refused []string) error {
	list := refused
	if len(list) > maxListed {
		list = list[:maxListed]
	}
	msg := strings.Join(list, "; ")
	if n := len(refused) - len(list); n > 0 {
		msg += fmt.Sprintf("; and %d more", n)
	}
	if literal {
		return fmt.Errorf("%w: %s", ErrAddressNotAllowed, msg)
	}
	return fmt.Errorf("%w: %s resolves only to refused addresses: %s", ErrAddressNotAllowed, host, msg)
}

// partialContext gives one of the remaining addresses its share of the time
// left in ctx, at least minPartialTimeout.
func partialContext(ctx context.Context, remaining int) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok || remaining <= 1 {
		return ctx, func() {}
	}
	left := time.Until(deadline)
	share := left / time.Duration(remaining)
	if share < minPartialTimeout {
		share = min(minPartialTimeout, left)
	}
	return context.WithTimeout(ctx, share)
}

// control is the dialer's Control hook, the second line of defence: it
// judges the address the socket is about to connect to, whatever led there,
// and refuses before any packet is sent to it.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		// Fail closed: an address that cannot be judged is not dialed.
		return fmt.Errorf("%w: cannot judge %q: %v", ErrAddressNotAllowed, address, err)
	}
	if why := g.refusal(ap.Addr()); why != "" {
		return fmt.Errorf("%w: connection to %s refused before connect: %s is %s", ErrAddressNotAllowed, address, ap.Addr(), why)
	}
	return nil
}

// Transport returns a new http.Transport for sending webhooks that connects
// only through DialContext. It never uses a proxy, not even one from the
// environment: the proxy would make the connections and the guard would
// judge the proxy's address instead of the endpoint's. Idle connections per
// host are raised to 64 because one endpoint may receive thousands of
// requests a second, and HTTP/2 is attempted. The transport does not handle
// redirects; the client that uses it must not follow them (see the package
// documentation).
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         g.DialContext,
		ForceAttemptHTTP2:   true,
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		// A receiver's headers are small; this bounds what a hostile one
		// can make the sender buffer (the default is 1 MiB).
		MaxResponseHeaderBytes: 64 << 10,
		ExpectContinueTimeout:  1 * time.Second,
	}
}
