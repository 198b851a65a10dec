package identity

import (
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxPrincipalBytes bounds principal names taken from requests.
const maxPrincipalBytes = 256

// validPrincipal accepts 1-256 bytes of UTF-8 without control characters,
// without bidirectional controls and without leading or trailing white space.
func validPrincipal(s string) bool {
	if s == "" || len(s) > maxPrincipalBytes || !utf8.ValidString(s) {
		return false
	}
	if strings.TrimSpace(s) != s {
		return false
	}
	// Bidirectional controls (U+202E and friends) would let a name display
	// as another in logs and consoles (issue 27; Unicode TR #9).
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) })
}

// validHeaderName accepts what the official gateway accepts for
// `gateway.security.trusted-header.name`: ASCII letters, digits, '-', '_'.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '-' || b == '_') {
			return false
		}
	}
	return true
}

// sourceAddr parses the peer address of a request ("ip:port", "[ip6]:port"
// or a bare IP). IPv4-mapped IPv6 addresses are unmapped and zones dropped so
// that prefix and loopback checks see the real address.
func sourceAddr(remote string) (netip.Addr, bool) {
	remote = strings.TrimSpace(remote)
	var addr netip.Addr
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		addr = ap.Addr()
	} else if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(remote, "["), "]")); err == nil {
		addr = a
	} else {
		return netip.Addr{}, false
	}
	return addr.Unmap().WithZone(""), true
}

// parsePrefix accepts a CIDR or a bare address (a single-host prefix).
func parsePrefix(s string) (netip.Prefix, bool) {
	s = strings.TrimSpace(s)
	if p, err := netip.ParsePrefix(s); err == nil {
		if p.Addr().Is4In6() {
			if p.Bits() < 96 {
				return netip.Prefix{}, false
			}
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}
