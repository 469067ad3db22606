package handlers

import (
	"fmt"
	"net"
	"strings"

	"github.com/labstack/echo/v4"
)

// ParseTrustedProxies parses a comma-separated list of CIDR ranges or single addresses
// ("10.0.0.0/8, 192.0.2.7, 2001:db8::/32"); an empty list is none. An entry that is neither
// is an error naming it.
func ParseTrustedProxies(list string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, entry := range strings.Split(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if !strings.Contains(entry, "/") {
			ip := net.ParseIP(entry)
			if ip == nil {
				return nil, fmt.Errorf("trusted proxy %q is not an address or CIDR range", entry)
			}
			bits := 8 * net.IPv6len
			if ip4 := ip.To4(); ip4 != nil {
				ip, bits = ip4, 8*net.IPv4len
			}
			out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(entry)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is not an address or CIDR range", entry)
		}
		out = append(out, n)
	}
	return out, nil
}

// clientIP returns the IPExtractor of the router, which decides the client address of every
// log line, audit row, throttle and rate limit. With no trusted proxies it is the connection's
// peer; otherwise X-Forwarded-For is read only when the peer is in trusted, and the client is
// its rightmost address that is not (the one the nearest trusted proxy saw). Loopback, private
// and link-local peers are trusted only when listed.
func clientIP(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
