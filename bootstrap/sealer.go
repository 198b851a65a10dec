package bootstrap

import (
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

// newSealer provides the one *sealed.Sealer that authenticates every opaque
// token the gateway hands out (page tokens, prefix-lookup continuations, scan
// cursors). Replicas behind one load balancer must share its key
// (`gateway.security.token-key`); without one, each process draws a random
// key and accepts only its own tokens.
func newSealer(cfg *config.Config) (*sealed.Sealer, error) {
	if cfg != nil && cfg.Security.TokenKey.Reveal() != "" {
		return sealed.New([]byte(cfg.Security.TokenKey.Reveal()))
	}
	return sealed.NewRandom(), nil
}
