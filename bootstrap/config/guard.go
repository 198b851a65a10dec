package config

import (
	"net/url"
	"strings"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/identity"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

// Keys of the second security round (gateway-go extensions): the key that
// authenticates opaque tokens, the trust-mode Host/Origin allow-list, CORS,
// the token-mode minimum length, the JWT lifetime bound and the gateway-side
// authorization policy.
const (
	KeyTokenKey                       = "gateway.security.token-key"
	KeyPasswordMaxFailedLoginsPerAddr = "gateway.security.password.max-failed-logins-per-address"
	KeyTokenMinLength                 = "gateway.security.token.min-length"
	KeyTrustAllowedHosts              = "gateway.security.trust.allowed-hosts"
	KeyCORSAllowedOrigins             = "gateway.rest.cors.allowed-origins"
	KeyCORSAllowedMethods             = "gateway.rest.cors.allowed-methods"
	KeyCORSAllowedHeaders             = "gateway.rest.cors.allowed-headers"
	KeyCORSMaxAge                     = "gateway.rest.cors.max-age"
	KeyJWTMaxLifetime                 = identity.KeyJWTMaxLifetime
	KeyJWTGroupsClaim                 = identity.KeyJWTGroupsClaim
	KeyAuthorizationPolicyFile        = "gateway.security.authorization.policy-file"
)

// DefaultTrustAllowedHosts are the Host values trust mode answers: the
// loopback names.
var DefaultTrustAllowedHosts = []string{"localhost", "127.0.0.1", "::1"}

// DefaultTokenMinLength is the shortest clear-text bearer token accepted in
// `gateway.security.tokens` (a `sha256:` entry's length is unknown).
const DefaultTokenMinLength = 16

// Guard holds the keys of guard.go.
type Guard struct {
	// TokenKey authenticates page tokens, continuations and cursors
	// (internal/sealed); replicas behind one load balancer share it. Unset:
	// a random key per process.
	TokenKey Secret
	// MaxFailedLoginsPerAddress is the failed-login budget of one client
	// address per failed-login window (password and token modes); 0: ten
	// times max-failed-logins.
	MaxFailedLoginsPerAddress int
	// TokenMinLength is the shortest clear-text token accepted.
	TokenMinLength int
	// TrustAllowedHosts are the Host header values trust mode answers
	// (DNS rebinding); "*" allows any.
	TrustAllowedHosts []string
	// CORS is off while CORSAllowedOrigins is empty.
	CORSAllowedOrigins []string
	CORSAllowedMethods []string
	CORSAllowedHeaders []string
	CORSMaxAge         time.Duration
	// PolicyFile is the YAML file of the gateway-side authorization policy
	// (bootstrap/policy.go); empty: no policy, every authenticated principal
	// may do everything the cluster lets the gateway do.
	PolicyFile string
}

func defaultGuard() Guard {
	return Guard{TokenMinLength: DefaultTokenMinLength, TrustAllowedHosts: DefaultTrustAllowedHosts}
}

// guardEntries are the keys of guard.go, dumped after securityEntries.
var guardEntries = []entry[Config]{
	secretEntry(KeyTokenKey, func(c *Config) *Secret { return &c.Security.Guard.TokenKey }),
	optionalCountEntry(KeyPasswordMaxFailedLoginsPerAddr, func(c *Config) *int { return &c.Security.Guard.MaxFailedLoginsPerAddress }),
	countEntry(KeyTokenMinLength, func(c *Config) *int { return &c.Security.Guard.TokenMinLength }),
	listEntry(KeyTrustAllowedHosts, func(c *Config) *[]string { return &c.Security.Guard.TrustAllowedHosts }),
	listEntry(KeyCORSAllowedOrigins, func(c *Config) *[]string { return &c.Security.Guard.CORSAllowedOrigins }),
	listEntry(KeyCORSAllowedMethods, func(c *Config) *[]string { return &c.Security.Guard.CORSAllowedMethods }),
	listEntry(KeyCORSAllowedHeaders, func(c *Config) *[]string { return &c.Security.Guard.CORSAllowedHeaders }),
	durationEntry(KeyJWTMaxLifetime, func(c *Config) *time.Duration { return &c.Security.JWT.MaxLifetime }),
	stringEntry(KeyJWTGroupsClaim, func(c *Config) *string { return &c.Security.JWT.GroupsClaim }),
	stringEntry(KeyAuthorizationPolicyFile, func(c *Config) *string { return &c.Security.Guard.PolicyFile }),
	{
		key:    KeyCORSMaxAge,
		apply:  func(c *Config, v scalar) (err error) { c.Security.Guard.CORSMaxAge, err = v.duration(); return err },
		render: func(c *Config) string { return optionalDuration(c.Security.Guard.CORSMaxAge) },
	},
}

// validateGuard checks the keys of guard.go.
func (c *Config) validateGuard(add func(string, ...any)) {
	g := c.Security.Guard
	if g.TokenKey.IsSet() && len(g.TokenKey.Reveal()) < sealed.MinKeyBytes {
		add("%s must have at least %d bytes (e.g. the output of `openssl rand -base64 32`)", KeyTokenKey, sealed.MinKeyBytes)
	}
	if g.TokenMinLength < 1 || g.TokenMinLength > 1024 {
		add("%s must be between 1 and 1024", KeyTokenMinLength)
	}
	if j := c.Security.JWT; j.MaxLifetime <= 0 || j.MaxLifetime > 366*24*time.Hour {
		add("%s must be between 1s and 366d", KeyJWTMaxLifetime)
	}
	if len(g.TrustAllowedHosts) == 0 {
		add("%s must not be empty (\"*\" allows any Host)", KeyTrustAllowedHosts)
	}
	for _, h := range g.TrustAllowedHosts {
		if h != "*" && (strings.ContainsAny(h, "/ @?#") || strings.Count(strings.Trim(h, "[]"), ":") == 1) {
			add("%s: %q is not a host name or address without port", KeyTrustAllowedHosts, h)
		}
	}
	for _, o := range g.CORSAllowedOrigins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil || o != strings.ToLower(o) {
			add("%s: %q is not an origin (lower-case scheme://host[:port], e.g. https://app.example.com) or *", KeyCORSAllowedOrigins, o)
		}
	}
	for _, m := range g.CORSAllowedMethods {
		if !validHeaderName(m) || strings.ToUpper(m) != m {
			add("%s: %q is not an HTTP method (upper-case)", KeyCORSAllowedMethods, m)
		}
	}
	for _, h := range g.CORSAllowedHeaders {
		if !validHeaderName(h) {
			add("%s: %q is not a header name", KeyCORSAllowedHeaders, h)
		}
	}
	if g.CORSMaxAge < 0 || g.CORSMaxAge > 24*time.Hour {
		add("%s must be between 0 and 24h", KeyCORSMaxAge)
	}
	if c.Security.Authentication == AuthToken {
		for i, e := range strings.Split(c.Security.Tokens.Reveal(), ",") {
			tok, err := parseTokenEntry(i, strings.TrimSpace(e))
			if err != nil || strings.HasPrefix(tok, "sha256:") {
				continue // reported by validateSecurity; a digest's token length is unknown
			}
			if len(tok) < g.TokenMinLength {
				// Never echo the token: name its entry and principal.
				add("gateway.security.tokens: token entry %d is %d bytes, shorter than %s (%d); use a random token (e.g. `openssl rand -base64 32`)",
					i, len(tok), KeyTokenMinLength, g.TokenMinLength)
			}
		}
	}
}
