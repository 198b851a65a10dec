package bootstrap

import (
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

// newSealer provides the one *sealed.Sealer that authenticates every opaque
// token the gateway hands out (page tokens, prefix-lookup continuations, scan
// cursors). Replicas behind one load balancer must share its key
// (`gateway.security.token-key`, at least 32 bytes); without one, each
// process draws a random key and accepts only its own tokens (a token from
// another replica or from before a restart is answered 400).
func newSealer(cfg *config.Config) (*sealed.Sealer, error) {
	if k := cfg.Security.Guard.TokenKey; k.IsSet() {
		return sealed.New([]byte(k.Reveal()))
	}
	return sealed.NewRandom(), nil
}
