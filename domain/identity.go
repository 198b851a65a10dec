package domain

import (
	"context"
	"crypto/x509"
)

// Principal is an authenticated caller. Name is empty for anonymous callers in
// trust mode. ActAs, when set, is the end user the gateway writes on behalf of
// (the SASL authorization id in user identity mode).
type Principal struct {
	Name   string
	Method string // the authentication method that produced it: trust, password, token, ...
	ActAs  string
	// Groups are the groups the authentication asserted for the caller (a
	// JWT groups claim, a client certificate's organizational units); the
	// gateway-side authorization policy reads them. Not part of the
	// principal's identity towards Fluss.
	Groups []string
}

// Credentials are what an HTTP request presents: headers, client certificate
// subject and the peer address. The identity adapters read only what they need.
type Credentials struct {
	Header     func(name string) string
	RemoteAddr string
	// ClientCertSubject is the verified client certificate's subject, if any.
	ClientCertSubject string
	// ClientCertificates is the verified client certificate chain, leaf
	// first (tls.ConnectionState.VerifiedChains[0]); nil when the connection
	// presented no certificate or it was not verified. Never put unverified
	// PeerCertificates here: the mtls method trusts this chain as is.
	ClientCertificates []*x509.Certificate
}

// Identity authenticates a request's credentials. It returns an *Error of kind
// KindUnauthenticated on failure; the message never contains the credential.
type Identity interface {
	Authenticate(ctx context.Context, c Credentials) (Principal, error)
}

// FlussPrincipal is the end user a request acts for: ActAs when set, else
// Name. In user identity mode it is the SASL authorization id.
func (p Principal) FlussPrincipal() string {
	if p.ActAs != "" {
		return p.ActAs
	}
	return p.Name
}

type principalKey struct{}

// ContextWithPrincipal returns ctx carrying the authenticated principal, so
// that code below the use cases (adapters, log handlers) can see who acts.
func ContextWithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFromContext returns the principal ContextWithPrincipal stored.
func PrincipalFromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
