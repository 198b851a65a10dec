package identity

import (
	"context"
	"fmt"
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// ActAsConfig configures impersonation: an authenticated principal on the
// allow-list may name, in the act-as header, the end user the gateway acts
// for (Principal.ActAs, the SASL authorization id in user identity mode).
type ActAsConfig struct {
	// Header is `gateway.security.act-as.header` (default x-fluss-act-as).
	Header string
	// AllowedPrincipals is `gateway.security.act-as.allowed-principals`:
	// the principals that may act as others. Empty disables act-as: the
	// header is then refused for everyone.
	AllowedPrincipals []string
}

// ActAs resolves the act-as header of authenticated requests.
type ActAs struct {
	header  string
	allowed map[string]struct{}
}

// NewActAs validates cfg; errors are ConfigErrors naming the keys.
func NewActAs(cfg ActAsConfig) (*ActAs, error) {
	var p problems
	name := cfg.Header
	if name == "" {
		name = DefaultActAsHeader
	}
	if !validHeaderName(name) || strings.EqualFold(name, "Authorization") {
		p.add(KeyActAsHeader, "must be a legal HTTP header name (letters, digits, '-', '_') other than Authorization")
	}
	a := &ActAs{header: strings.ToLower(name), allowed: map[string]struct{}{}}
	for _, principal := range cfg.AllowedPrincipals {
		if !validPrincipal(principal) {
			p.add(KeyActAsAllowedPrincipals, fmt.Sprintf("%q is not a valid principal name", principal))
			continue
		}
		a.allowed[principal] = struct{}{}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return a, nil
}

// Header is the act-as header name (lower case).
func (a *ActAs) Header() string { return a.header }

// Resolve applies the act-as header to an authenticated principal. Without
// the header, or when it names the principal itself, p is returned as is.
// A malformed value is KindInvalidArgument; an anonymous principal or one
// not on the allow-list is KindUnauthorized.
func (a *ActAs) Resolve(p domain.Principal, c domain.Credentials) (domain.Principal, error) {
	target := header(c, a.header)
	if target == "" {
		return p, nil
	}
	if !validPrincipal(target) {
		return domain.Principal{}, domain.InvalidArgument("the %s header does not carry a valid principal name", a.header)
	}
	if p.Name == "" {
		return domain.Principal{}, domain.Errorf(domain.KindUnauthorized, "anonymous callers cannot use the %s header", a.header)
	}
	if target == p.Name {
		return p, nil
	}
	if _, ok := a.allowed[p.Name]; !ok {
		return domain.Principal{}, domain.Errorf(domain.KindUnauthorized,
			"principal %q may not act as another principal (%s)", p.Name, KeyActAsAllowedPrincipals)
	}
	p.ActAs = target
	return p, nil
}

// WithActAs wraps an authenticator so that Authenticate also resolves the
// act-as header.
func WithActAs(id Authenticator, a *ActAs) Authenticator {
	return &actAsAuth{Authenticator: id, actAs: a}
}

type actAsAuth struct {
	Authenticator
	actAs *ActAs
}

func (w *actAsAuth) Authenticate(ctx context.Context, c domain.Credentials) (domain.Principal, error) {
	p, err := w.Authenticator.Authenticate(ctx, c)
	if err != nil {
		return domain.Principal{}, err
	}
	return w.actAs.Resolve(p, c)
}
