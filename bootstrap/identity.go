package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/identity"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// IdentityFactory builds the caller authenticator for `gateway.security.*`.
// It runs in the REST module's OnStart, before the listener opens, with the
// start context (a JWKS URL is downloaded then). The authenticator is closed
// when the gateway stops.
type IdentityFactory func(ctx context.Context, cfg *config.Config, log *slog.Logger) (identity.Authenticator, error)

// NewIdentity is the default IdentityFactory: the identity adapter
// (adapters/identity) for every method of `gateway.security.authentication`,
// trust included, wrapped so that it also resolves the act-as header
// (`gateway.security.act-as.*`). Trust is built through the adapter too, so
// that it keeps its loopback-only rule unless
// `gateway.security.trust.allow-non-loopback` is set; the startup log line
// says which method is active and its non-secret settings.
func NewIdentity(ctx context.Context, cfg *config.Config, log *slog.Logger) (identity.Authenticator, error) {
	s := cfg.Security
	ic := identity.Config{
		Method:                    string(s.Authentication),
		Realm:                     s.Realm,
		AllowNonLoopback:          s.TrustAllowNonLoopback,
		PasswordCacheTTL:          s.PasswordCacheTTL,
		MaxFailedLogins:           s.MaxFailedLogins,
		FailedLoginWindow:         s.FailedLoginWindow,
		DisableLoginThrottle:      s.MaxFailedLogins == 0,
		MaxFailedLoginsPerAddress: s.Guard.MaxFailedLoginsPerAddress,
		TrustedHeader: identity.TrustedHeaderConfig{
			Name:         s.TrustedHeaderName,
			TrustedCIDRs: s.TrustedHeaderCIDRs,
		},
		JWT:    s.JWT,
		MTLS:   identity.MTLSConfig{PrincipalField: s.MTLSPrincipalField},
		Logger: log.With("component", "identity"),
	}
	var errs []error
	switch s.Authentication {
	case config.AuthPassword:
		users, err := identity.ParseUsers(s.Users.Reveal())
		errs = append(errs, err)
		ic.Users = users
	case config.AuthToken:
		tokens, err := identity.ParseTokens(s.Tokens.Reveal())
		errs = append(errs, err)
		ic.Tokens = tokens
	}
	actAs, err := identity.NewActAs(identity.ActAsConfig{Header: s.ActAs.Header, AllowedPrincipals: s.ActAs.AllowedPrincipals})
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("caller authentication: %w", err)
	}
	auth, err := identity.New(ctx, ic)
	if err != nil {
		return nil, fmt.Errorf("caller authentication: %w", err)
	}
	log.Info("caller authentication", authAttrs(cfg)...)
	return identity.WithActAs(auth, actAs), nil
}

// authAttrs describes the active method without any credential.
func authAttrs(cfg *config.Config) []any {
	s := cfg.Security
	attrs := []any{"method", string(s.Authentication)}
	switch s.Authentication {
	case config.AuthTrust:
		attrs = append(attrs, "principal", "anonymous", "loopback_only", !s.TrustAllowNonLoopback)
	case config.AuthPassword:
		attrs = append(attrs, "realm", s.Realm)
	case config.AuthToken:
		attrs = append(attrs, "realm", s.Realm)
	case config.AuthTrustedHeader:
		cidrs := s.TrustedHeaderCIDRs
		if len(cidrs) == 0 {
			cidrs = []string{"loopback"}
		}
		attrs = append(attrs, "header", s.EffectiveTrustedHeaderName(), "trusted_cidrs", cidrs)
	case config.AuthJWT:
		src := s.JWT.JWKSFile
		if src == "" {
			src = identity.RedactURL(s.JWT.JWKSURL)
		}
		attrs = append(attrs, "issuer", s.JWT.Issuer, "audience", s.JWT.Audience, "jwks", src, "principal_claim", s.JWT.PrincipalClaim)
	case config.AuthMTLS:
		attrs = append(attrs, "principal_field", s.MTLSPrincipalField, "client_auth", string(cfg.REST.TLS.ClientAuth))
	}
	attrs = append(attrs, "act_as_header", s.ActAs.Header, "act_as_allowed_principals", len(s.ActAs.AllowedPrincipals))
	if s.Quota.Enabled() {
		attrs = append(attrs, "quota_requests_per_second", s.Quota.RequestsPerSecond,
			"quota_bytes_per_second", s.Quota.BytesPerSecond, "quota_per_table", s.Quota.PerTable)
	}
	return attrs
}

// lateIdentity is the domain.Identity the HTTP adapter is built with: the
// authenticator is created in OnStart (it may download a JWKS) and set
// before the listener accepts a connection. Until then every request is
// refused as unauthenticated.
type lateIdentity struct {
	auth atomic.Pointer[identity.Authenticator]
}

var errIdentityNotReady = &domain.Error{Kind: domain.KindUnavailable, Retryable: true, RetryAfterMillis: 1000,
	Message: "caller authentication is not initialised yet"}

func (l *lateIdentity) set(a identity.Authenticator) { l.auth.Store(&a) }

func (l *lateIdentity) get() identity.Authenticator {
	if p := l.auth.Load(); p != nil {
		return *p
	}
	return nil
}

// Authenticate implements domain.Identity.
func (l *lateIdentity) Authenticate(ctx context.Context, c domain.Credentials) (domain.Principal, error) {
	a := l.get()
	if a == nil {
		return domain.Principal{}, errIdentityNotReady
	}
	return a.Authenticate(ctx, c)
}

// ChallengeFor is the WWW-Authenticate value of a 401 (the HTTP adapter
// looks for this method).
func (l *lateIdentity) ChallengeFor(err error) string {
	if a := l.get(); a != nil {
		return a.ChallengeFor(err)
	}
	return ""
}

func (l *lateIdentity) close() error {
	if p := l.auth.Swap(nil); p != nil {
		return (*p).Close()
	}
	return nil
}
