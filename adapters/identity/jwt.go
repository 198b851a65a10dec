package identity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// maxClockSkew bounds `gateway.security.jwt.clock-skew`.
const maxClockSkew = 10 * time.Minute

var (
	errUnsupportedCrit      = errors.New("unsupported critical header")
	errAlgorithmNotAccepted = errors.New("algorithm not accepted")
)

// jwtAuth verifies JWT bearer tokens (OIDC access or ID tokens).
type jwtAuth struct {
	bearer bearerChallenge
	algs   []string
	parser *jwt.Parser
	claim  string
	keys   *keySource
	// groups is the groups claim ("" for none); maxLifetime bounds exp.
	groups      string
	maxLifetime time.Duration
	now         func() time.Time
}

func newJWT(ctx context.Context, cfg Config, realm string, p *problems) func() (Authenticator, error) {
	c := cfg.JWT
	if c.Issuer == "" {
		p.add(KeyJWTIssuer, "is required when "+KeyAuthentication+" is jwt")
	}
	if c.Audience == "" {
		p.add(KeyJWTAudience, "is required when "+KeyAuthentication+" is jwt")
	}
	srcKey := KeyJWTJWKSFile
	switch {
	case c.JWKSFile != "" && c.JWKSURL != "":
		p.add(KeyJWTJWKSFile, "set only one of "+KeyJWTJWKSFile+" and "+KeyJWTJWKSURL)
	case c.JWKSFile == "" && c.JWKSURL == "":
		p.add(KeyJWTJWKSURL, "one of "+KeyJWTJWKSURL+" and "+KeyJWTJWKSFile+" is required when "+KeyAuthentication+" is jwt")
	case c.JWKSURL != "":
		srcKey = KeyJWTJWKSURL
		if err := checkJWKSURL(c.JWKSURL); err != nil {
			p.add(KeyJWTJWKSURL, err.Error())
		}
	}
	claim := c.PrincipalClaim
	if claim == "" {
		claim = DefaultPrincipalClaim
	}
	algs := c.Algorithms
	if len(algs) == 0 {
		algs = DefaultJWTAlgorithms
	}
	for _, a := range algs {
		switch {
		case slices.Contains(DefaultJWTAlgorithms, a):
		case a == "none" || a == "HS256" || a == "HS384" || a == "HS512":
			p.add(KeyJWTAlgorithms, fmt.Sprintf("%q is not accepted: only asymmetric algorithms verify against a JWKS", a))
		default:
			p.add(KeyJWTAlgorithms, fmt.Sprintf("unknown algorithm %q: expected some of %v", a, DefaultJWTAlgorithms))
		}
	}
	lifetime := c.MaxLifetime
	if lifetime == 0 {
		lifetime = DefaultJWTMaxLifetime
	}
	if lifetime < 0 {
		p.add(KeyJWTMaxLifetime, "must be positive")
	}
	skew := c.ClockSkew
	if skew == 0 {
		skew = DefaultClockSkew
	}
	if skew < 0 || skew > maxClockSkew {
		p.add(KeyJWTClockSkew, "must be between 0 and 10m")
	}
	interval := c.RefreshInterval
	if interval == 0 {
		interval = DefaultJWKSRefreshInterval
	}
	if interval < time.Second {
		p.add(KeyJWTRefreshInterval, "must be at least 1s")
	}
	timeout := c.FetchTimeout
	if timeout == 0 {
		timeout = DefaultJWKSFetchTimeout
	}
	if timeout <= 0 || timeout > 5*time.Minute {
		p.add(KeyJWTFetchTimeout, "must be between 1ms and 5m")
	}
	return func() (Authenticator, error) {
		src := &keySource{
			key:          srcKey,
			fetchTimeout: timeout,
			refreshGap:   unknownKeyRefreshGap,
			now:          time.Now,
			logger:       cfg.Logger,
		}
		if c.JWKSURL != "" {
			client := cfg.JWKSClient
			if client == nil {
				client = defaultJWKSClient()
			}
			src.load = httpLoader(client, c.JWKSURL)
		} else {
			src.load = fileLoader(c.JWKSFile)
		}
		// The initial load does not count as an on-demand attempt: a key
		// rotated right after start is fetched at once (and forged key ids
		// then still cost one fetch per refresh gap).
		if err := src.reload(ctx); err != nil {
			return nil, &ConfigError{Key: srcKey, Problem: "cannot load the JWK Set: " + err.Error()}
		}
		src.start(interval)
		return &jwtAuth{
			bearer: bearerChallenge(realm),
			algs:   slices.Clone(algs),
			parser: jwt.NewParser(
				jwt.WithValidMethods(slices.Clone(algs)),
				jwt.WithIssuer(c.Issuer),
				jwt.WithAudience(c.Audience),
				jwt.WithLeeway(skew),
				jwt.WithExpirationRequired(),
				jwt.WithIssuedAt(),
			),
			claim:       claim,
			keys:        src,
			groups:      c.GroupsClaim,
			maxLifetime: lifetime,
			now:         time.Now,
		}, nil
	}
}

func (a *jwtAuth) verify(ctx context.Context, ks *keySet, raw string) (jwt.MapClaims, error) {
	claims := jwt.MapClaims{}
	tok, err := a.parser.ParseWithClaims(raw, claims, ks.kf.KeyfuncCtx(ctx))
	if err != nil {
		if tok != nil && tok.Method != nil && !slices.Contains(a.algs, tok.Method.Alg()) {
			return nil, errors.Join(errAlgorithmNotAccepted, err)
		}
		return nil, err
	}
	// No JWS extension is understood, so any critical one is fatal
	// (RFC 7515 section 4.1.11).
	if _, crit := tok.Header["crit"]; crit {
		return nil, errUnsupportedCrit
	}
	return claims, nil
}

func (a *jwtAuth) Authenticate(ctx context.Context, c domain.Credentials) (domain.Principal, error) {
	raw, err := authParam(c, "Bearer")
	if err != nil {
		return domain.Principal{}, err
	}
	if len(raw) > maxBearerBytes {
		return domain.Principal{}, unauthenticated(ErrInvalidCredentials, "the bearer token is too long")
	}
	ks := a.keys.current.Load()
	claims, err := a.verify(ctx, ks, raw)
	if err != nil && errors.Is(err, jwkset.ErrKeyNotFound) && a.keys.refreshForUnknownKey(ctx, ks) {
		claims, err = a.verify(ctx, a.keys.current.Load(), raw)
	}
	if err != nil {
		return domain.Principal{}, unauthenticated(ErrInvalidCredentials, jwtFailure(err))
	}
	if err := a.checkLifetime(claims); err != nil {
		return domain.Principal{}, err
	}
	name, _ := claims[a.claim].(string)
	if !validPrincipal(name) {
		return domain.Principal{}, unauthenticated(ErrInvalidCredentials,
			fmt.Sprintf("the bearer token has no valid %q claim to name the principal", a.claim))
	}
	return domain.Principal{Name: name, Method: MethodJWT, Groups: a.groupsOf(claims)}, nil
}

// checkLifetime refuses a token valid for longer than maxLifetime: from iat
// to exp, or from now to exp when it has no iat.
func (a *jwtAuth) checkLifetime(claims jwt.MapClaims) error {
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return unauthenticated(ErrInvalidCredentials, "the bearer token lacks a required claim (exp, iss or aud)")
	}
	from := a.now()
	if iat, err := claims.GetIssuedAt(); err == nil && iat != nil {
		from = iat.Time
	}
	if exp.Sub(from) > a.maxLifetime {
		return unauthenticated(ErrInvalidCredentials,
			fmt.Sprintf("the bearer token is valid for longer than %s (%s)", a.maxLifetime, KeyJWTMaxLifetime))
	}
	return nil
}

// maxGroups bounds the groups taken from one token.
const maxGroups = 64

// groupsOf reads the groups claim: a string or an array of strings; values
// that are not valid principal names are skipped.
func (a *jwtAuth) groupsOf(claims jwt.MapClaims) []string {
	if a.groups == "" {
		return nil
	}
	var out []string
	switch v := claims[a.groups].(type) {
	case string:
		if validPrincipal(v) {
			out = append(out, v)
		}
	case []any:
		for _, g := range v {
			if s, ok := g.(string); ok && validPrincipal(s) && len(out) < maxGroups {
				out = append(out, s)
			}
		}
	}
	return out
}

// jwtFailure describes a verification failure with a fixed text: library
// messages are not forwarded, so nothing of the token can leak.
func jwtFailure(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "the bearer token is not a well-formed JWT"
	case errors.Is(err, errAlgorithmNotAccepted):
		return "the bearer token uses a signature algorithm that is not accepted"
	case errors.Is(err, errUnsupportedCrit):
		return "the bearer token has unsupported critical header parameters"
	case errors.Is(err, jwkset.ErrKeyNotFound):
		return "the bearer token is signed by an unknown key"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "the bearer token signature is invalid"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "the bearer token has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "the bearer token is not valid yet"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "the bearer token is issued in the future"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "the bearer token has an unexpected issuer"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "the bearer token has an unexpected audience"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "the bearer token lacks a required claim (exp, iss or aud)"
	default:
		return "invalid bearer token"
	}
}

func (*jwtAuth) Method() string                  { return MethodJWT }
func (a *jwtAuth) Challenge() string             { return a.bearer.base() }
func (a *jwtAuth) ChallengeFor(err error) string { return a.bearer.forError(err) }
func (a *jwtAuth) Close() error {
	a.keys.close()
	return nil
}
