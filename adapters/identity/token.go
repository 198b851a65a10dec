package identity

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// maxBearerBytes bounds bearer credentials (opaque tokens and JWTs).
const maxBearerBytes = 16 << 10

// tokenAuth verifies opaque bearer tokens against SHA-256 digests.
type tokenAuth struct {
	bearer     bearerChallenge
	digests    [][sha256.Size]byte
	principals []string
	// throttle limits failed tokens per client address; nil when disabled.
	throttle *loginThrottle
}

func newToken(cfg Config, realm string, p *problems) func() (Authenticator, error) {
	if len(cfg.Tokens) == 0 {
		p.add(KeyTokens, "must configure at least one token when "+KeyAuthentication+" is token")
	}
	a := &tokenAuth{bearer: bearerChallenge(realm)}
	for digest, principal := range cfg.Tokens {
		if !isSHA256Hex(digest) {
			// The key may be a clear-text token by mistake: never echo it.
			p.add(KeyTokens, fmt.Sprintf("the entry of principal %q is not keyed by a 64-digit hex SHA-256 digest", principal))
			continue
		}
		if !validPrincipal(principal) {
			p.add(KeyTokens, fmt.Sprintf("principal %q is not a valid principal name", principal))
			continue
		}
		var d [sha256.Size]byte
		_, _ = hex.Decode(d[:], []byte(digest))
		a.digests = append(a.digests, d)
		a.principals = append(a.principals, principal)
	}
	return func() (Authenticator, error) {
		maxFailed, window := cfg.MaxFailedLogins, cfg.FailedLoginWindow
		if maxFailed == 0 {
			maxFailed = DefaultMaxFailedLogins
		}
		if window == 0 {
			window = DefaultFailedLoginWindow
		}
		if !cfg.DisableLoginThrottle {
			a.throttle = newLoginThrottle(maxFailed, cfg.MaxFailedLoginsPerAddress, window)
		}
		return a, nil
	}
}

func (a *tokenAuth) Authenticate(_ context.Context, c domain.Credentials) (domain.Principal, error) {
	tok, err := authParam(c, "Bearer")
	if err != nil {
		return domain.Principal{}, err
	}
	addr := throttleAddr(c.RemoteAddr)
	if _, err := a.throttle.check(addr, ""); err != nil {
		return domain.Principal{}, err
	}
	if len(tok) > maxBearerBytes {
		a.throttle.failed(addr, "")
		return domain.Principal{}, unauthenticated(ErrInvalidCredentials, "the bearer token is too long")
	}
	sum := sha256.Sum256([]byte(tok))
	// Compare against every digest without early exit.
	found := -1
	for i := range a.digests {
		eq := subtle.ConstantTimeCompare(sum[:], a.digests[i][:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if found < 0 {
		a.throttle.failed(addr, "")
		return domain.Principal{}, unauthenticated(ErrInvalidCredentials, "invalid bearer token")
	}
	return domain.Principal{Name: a.principals[found], Method: MethodToken}, nil
}

func (*tokenAuth) Method() string                  { return MethodToken }
func (a *tokenAuth) Challenge() string             { return a.bearer.base() }
func (a *tokenAuth) ChallengeFor(err error) string { return a.bearer.forError(err) }
func (*tokenAuth) Close() error                    { return nil }
