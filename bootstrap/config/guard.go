package config

import (
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

// Keys of the second security round (gateway-go extensions): the key that
// authenticates opaque tokens, the trust-mode Host/Origin allow-list, CORS,
// the token-mode minimum length, the JWT lifetime bound and the gateway-side
// authorization policy.
const (
	KeyTokenKey = "gateway.security.token-key"
)

// Guard holds the keys of guard.go.
type Guard struct {
	// TokenKey authenticates page tokens, continuations and cursors
	// (internal/sealed); replicas behind one load balancer share it. Unset:
	// a random key per process.
	TokenKey Secret
}

// guardEntries are the keys of guard.go, dumped after securityEntries.
var guardEntries = []entry[Config]{
	secretEntry(KeyTokenKey, func(c *Config) *Secret { return &c.Security.Guard.TokenKey }),
}

// validateGuard checks the keys of guard.go.
func (c *Config) validateGuard(add func(string, ...any)) {
	g := c.Security.Guard
	if g.TokenKey.IsSet() && len(g.TokenKey.Reveal()) < sealed.MinKeyBytes {
		add("%s must have at least %d bytes (e.g. the output of `openssl rand -base64 32`)", KeyTokenKey, sealed.MinKeyBytes)
	}
}

var _ = time.Second
