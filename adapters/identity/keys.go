package identity

import "time"

// Authentication methods, the values of `gateway.security.authentication`.
const (
	MethodTrust         = "trust"
	MethodPassword      = "password"
	MethodToken         = "token"
	MethodTrustedHeader = "trusted-header"
	MethodJWT           = "jwt"  // extension
	MethodMTLS          = "mtls" // extension
)

// Configuration keys. The first four exist in the official Fluss gateway with
// the same meaning and value syntax; the others are extensions of this
// gateway. Validation errors name these keys; bootstrap/config refers to
// them (this is their one definition).
const (
	KeyAuthentication    = "gateway.security.authentication"
	KeyUsers             = "gateway.security.users"
	KeyTokens            = "gateway.security.tokens"
	KeyTrustedHeaderName = "gateway.security.trusted-header.name"

	KeyRealm                  = "gateway.security.realm"
	KeyAllowNonLoopback       = "gateway.security.trust.allow-non-loopback"
	KeyPasswordCacheTTL       = "gateway.security.password.cache-ttl"
	KeyTrustedHeaderCIDRs     = "gateway.security.trusted-header.trusted-cidrs"
	KeyJWTIssuer              = "gateway.security.jwt.issuer"
	KeyJWTAudience            = "gateway.security.jwt.audience"
	KeyJWTJWKSFile            = "gateway.security.jwt.jwks-file"
	KeyJWTJWKSURL             = "gateway.security.jwt.jwks-url"
	KeyJWTPrincipalClaim      = "gateway.security.jwt.principal-claim"
	KeyJWTAlgorithms          = "gateway.security.jwt.algorithms"
	KeyJWTClockSkew           = "gateway.security.jwt.clock-skew"
	KeyJWTRefreshInterval     = "gateway.security.jwt.jwks-refresh-interval"
	KeyJWTFetchTimeout        = "gateway.security.jwt.jwks-fetch-timeout"
	KeyMTLSPrincipalField     = "gateway.security.mtls.principal-field"
	KeyActAsHeader            = "gateway.security.act-as.header"
	KeyActAsAllowedPrincipals = "gateway.security.act-as.allowed-principals"
)

// Defaults applied to zero values of Config.
const (
	DefaultRealm               = "fluss-gateway"
	DefaultTrustedHeaderName   = "x-forwarded-user" // as the official gateway
	DefaultPrincipalClaim      = "sub"
	DefaultClockSkew           = 30 * time.Second
	DefaultJWKSRefreshInterval = 15 * time.Minute
	DefaultJWKSFetchTimeout    = 10 * time.Second
	DefaultPasswordCacheTTL    = time.Minute
	DefaultMTLSPrincipalField  = PrincipalFieldCN
	DefaultActAsHeader         = "x-fluss-act-as"
)

// Client certificate fields usable as the mtls principal
// (`gateway.security.mtls.principal-field`).
const (
	PrincipalFieldCN       = "cn"        // subject common name
	PrincipalFieldSubject  = "subject"   // whole subject, RFC 2253 string
	PrincipalFieldSANDNS   = "san-dns"   // first DNS subject alternative name
	PrincipalFieldSANEmail = "san-email" // first e-mail subject alternative name
	PrincipalFieldSANURI   = "san-uri"   // first URI subject alternative name (SPIFFE ID)
)

// DefaultJWTAlgorithms are the asymmetric JWS algorithms accepted when
// `gateway.security.jwt.algorithms` is empty. HMAC and "none" are never
// accepted: the verification keys are public.
var DefaultJWTAlgorithms = []string{
	"RS256", "RS384", "RS512",
	"PS256", "PS384", "PS512",
	"ES256", "ES384", "ES512",
	"EdDSA",
}

// Keys of the failed-login throttle of password mode (gateway-go extensions).
const (
	KeyJWTMaxLifetime            = "gateway.security.jwt.max-lifetime"
	KeyJWTGroupsClaim            = "gateway.security.jwt.groups-claim"
	KeyPasswordMaxFailedLogins   = "gateway.security.password.max-failed-logins"
	KeyPasswordFailedLoginWindow = "gateway.security.password.failed-login-window"
)
