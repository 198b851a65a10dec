package bootstrap

import (
	"fmt"
	"log/slog"

	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// IdentityFactory builds the caller authenticator for
// `gateway.security.*`. A nil domain.Identity means trust mode: every caller
// is an anonymous principal.
type IdentityFactory func(sec config.Security, log *slog.Logger) (domain.Identity, error)

// NewIdentity is the default IdentityFactory and the place where the identity
// adapter (adapters/identity) is plugged in for the password, token and
// trusted-header modes. Until it is, those modes fail startup instead of
// silently admitting everyone.
func NewIdentity(sec config.Security, _ *slog.Logger) (domain.Identity, error) {
	if sec.Authentication == config.AuthTrust {
		return nil, nil
	}
	return nil, fmt.Errorf("%s %s needs the identity adapter, which is not wired into bootstrap yet (bootstrap/identity.go: NewIdentity)",
		config.KeySecurityAuth, sec.Authentication)
}
