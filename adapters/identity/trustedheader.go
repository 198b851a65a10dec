package identity

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// trustedHeaderAuth takes the principal from a header that a fronting proxy
// sets after authenticating the caller; only the proxy's addresses may set it.
type trustedHeaderAuth struct {
	name     string
	prefixes []netip.Prefix
}

var loopbackPrefixes = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("::1/128"),
}

func newTrustedHeader(cfg Config, p *problems) func() (Authenticator, error) {
	name := cfg.TrustedHeader.Name
	if name == "" {
		name = DefaultTrustedHeaderName
	}
	if !validHeaderName(name) || strings.EqualFold(name, "Authorization") {
		p.add(KeyTrustedHeaderName, "must be a legal HTTP header name (letters, digits, '-', '_') other than Authorization")
	}
	a := &trustedHeaderAuth{name: strings.ToLower(name)}
	for _, s := range cfg.TrustedHeader.TrustedCIDRs {
		prefix, ok := parsePrefix(s)
		if !ok {
			p.add(KeyTrustedHeaderCIDRs, fmt.Sprintf("%q is not a CIDR or IP address", s))
			continue
		}
		a.prefixes = append(a.prefixes, prefix)
	}
	if len(cfg.TrustedHeader.TrustedCIDRs) == 0 {
		a.prefixes = loopbackPrefixes
	}
	return func() (Authenticator, error) { return a, nil }
}

func (a *trustedHeaderAuth) trusted(addr netip.Addr) bool {
	for _, p := range a.prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func (a *trustedHeaderAuth) Authenticate(_ context.Context, c domain.Credentials) (domain.Principal, error) {
	addr, ok := sourceAddr(c.RemoteAddr)
	if !ok || !a.trusted(addr) {
		return domain.Principal{}, unauthenticated(ErrSourceNotAllowed,
			"the "+a.name+" header is accepted only from the addresses in "+KeyTrustedHeaderCIDRs)
	}
	v := header(c, a.name)
	if v == "" {
		return domain.Principal{}, unauthenticated(ErrNoCredentials, "missing the "+a.name+" header")
	}
	if !validPrincipal(v) {
		return domain.Principal{}, unauthenticated(ErrMalformedCredentials, "the "+a.name+" header does not carry a valid principal name")
	}
	return domain.Principal{Name: v, Method: MethodTrustedHeader}, nil
}

func (*trustedHeaderAuth) Method() string            { return MethodTrustedHeader }
func (*trustedHeaderAuth) Challenge() string         { return "" }
func (*trustedHeaderAuth) ChallengeFor(error) string { return "" }
func (*trustedHeaderAuth) Close() error              { return nil }
