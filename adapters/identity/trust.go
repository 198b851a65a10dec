package identity

import (
	"context"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// trustAuth accepts every caller as the anonymous principal, from loopback
// addresses only unless allowNonLoopback.
type trustAuth struct {
	allowNonLoopback bool
}

func (t *trustAuth) Authenticate(_ context.Context, c domain.Credentials) (domain.Principal, error) {
	if !t.allowNonLoopback {
		addr, ok := sourceAddr(c.RemoteAddr)
		if !ok || !addr.IsLoopback() {
			return domain.Principal{}, unauthenticated(ErrSourceNotAllowed,
				"trust authentication accepts loopback clients only; configure "+KeyAuthentication+" or "+KeyAllowNonLoopback)
		}
	}
	return domain.Principal{Method: MethodTrust}, nil
}

func (*trustAuth) Method() string            { return MethodTrust }
func (*trustAuth) Challenge() string         { return "" }
func (*trustAuth) ChallengeFor(error) string { return "" }
func (*trustAuth) Close() error              { return nil }
