package config

import (
	"strings"

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
)

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
}

func defaultGuard() Guard {
	return Guard{TokenMinLength: DefaultTokenMinLength}
}

// guardEntries are the keys of guard.go, dumped after securityEntries.
var guardEntries = []entry[Config]{
	secretEntry(KeyTokenKey, func(c *Config) *Secret { return &c.Security.Guard.TokenKey }),
	optionalCountEntry(KeyPasswordMaxFailedLoginsPerAddr, func(c *Config) *int { return &c.Security.Guard.MaxFailedLoginsPerAddress }),
	countEntry(KeyTokenMinLength, func(c *Config) *int { return &c.Security.Guard.TokenMinLength }),
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
