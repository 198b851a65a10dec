package identity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Config selects and configures the authentication method. Zero values take
// the defaults of keys.go. Only the section of the selected method is
// validated and used.
type Config struct {
	// Method is `gateway.security.authentication`; empty means trust.
	Method string
	// Realm is the realm of the WWW-Authenticate challenges
	// (`gateway.security.realm`, default "fluss-gateway").
	Realm string
	// AllowNonLoopback lets trust mode accept non-loopback clients
	// (`gateway.security.trust.allow-non-loopback`).
	AllowNonLoopback bool
	// Users maps a principal to its bcrypt hash (`gateway.security.users`;
	// ParseUsers reads the official `principal:secret,...` syntax).
	Users map[string]string
	// PasswordCacheTTL is how long a successful Basic verification is
	// remembered (keyed by an HMAC of user and password under a per-process
	// random key) so that steady traffic does not pay bcrypt per request
	// (`gateway.security.password.cache-ttl`). 0 means
	// DefaultPasswordCacheTTL, a negative value disables the cache.
	PasswordCacheTTL time.Duration
	// MaxFailedLogins and FailedLoginWindow throttle failed Basic logins
	// per source address and per user name: at most MaxFailedLogins
	// failures per FailedLoginWindow, then 429 resource_exhausted with
	// Retry-After until the budget refills
	// (`gateway.security.password.max-failed-logins`,
	// `gateway.security.password.failed-login-window`). Zero values mean
	// DefaultMaxFailedLogins per DefaultFailedLoginWindow.
	MaxFailedLogins   int
	FailedLoginWindow time.Duration
	// MaxFailedLoginsPerAddress is the failed-login budget of one client
	// address (an IPv6 client by its /64) per FailedLoginWindow, all user
	// names and tokens together; beyond it 429 for that address
	// (`gateway.security.password.max-failed-logins-per-address`). 0 means
	// DefaultAddressFailureFactor × MaxFailedLogins.
	MaxFailedLoginsPerAddress int
	// DisableLoginThrottle turns the failed-login throttle off.
	DisableLoginThrottle bool
	// Tokens maps the lower-case hex SHA-256 digest of a bearer token to its
	// principal (`gateway.security.tokens`; ParseTokens reads the official
	// `<token>:<principal>,...` syntax).
	Tokens        map[string]string
	TrustedHeader TrustedHeaderConfig
	JWT           JWTConfig
	MTLS          MTLSConfig
	// Logger receives background events (JWKS refresh failures); nil is
	// silent.
	Logger *slog.Logger
	// JWKSClient fetches JWT.JWKSURL; nil uses a client that refuses
	// redirects to plain http. Not a configuration key (tests, proxies), so
	// it sits outside JWTConfig, which bootstrap/config shares.
	JWKSClient *http.Client
}

// TrustedHeaderConfig configures the trusted-header method.
type TrustedHeaderConfig struct {
	// Name is `gateway.security.trusted-header.name` (default
	// x-forwarded-user).
	Name string
	// TrustedCIDRs are the proxy addresses allowed to set the header
	// (`gateway.security.trusted-header.trusted-cidrs`; CIDRs or bare
	// addresses). Empty means loopback only (127.0.0.0/8, ::1).
	TrustedCIDRs []string
}

// JWTConfig configures the jwt method: exactly the `gateway.security.jwt.*`
// keys (bootstrap/config uses this type as its JWT section).
type JWTConfig struct {
	// Issuer is the required `iss` (`gateway.security.jwt.issuer`).
	Issuer string
	// Audience must be one of the token's `aud` values
	// (`gateway.security.jwt.audience`).
	Audience string
	// Exactly one of JWKSFile (`gateway.security.jwt.jwks-file`) and
	// JWKSURL (`gateway.security.jwt.jwks-url`, https or loopback http).
	JWKSFile string
	JWKSURL  string
	// PrincipalClaim names the string claim carrying the principal
	// (`gateway.security.jwt.principal-claim`, default sub).
	PrincipalClaim string
	// Algorithms are the accepted JWS algorithms
	// (`gateway.security.jwt.algorithms`, default DefaultJWTAlgorithms).
	Algorithms []string
	// ClockSkew is the leeway on exp, nbf and iat
	// (`gateway.security.jwt.clock-skew`, default 30s, at most 10m).
	ClockSkew time.Duration
	// RefreshInterval is how often the JWKS is reloaded
	// (`gateway.security.jwt.jwks-refresh-interval`, default 15m). A token
	// signed by an unknown key id also triggers a reload, at most every 30s.
	RefreshInterval time.Duration
	// FetchTimeout bounds one JWKS download
	// (`gateway.security.jwt.jwks-fetch-timeout`, default 10s).
	FetchTimeout time.Duration
	// MaxLifetime bounds how long a token may be valid: exp - iat (or exp -
	// now without iat) above it is refused (`gateway.security.jwt.max-lifetime`,
	// default DefaultJWTMaxLifetime; a token valid for 100 years is a
	// credential that never ends).
	MaxLifetime time.Duration
	// GroupsClaim names the claim (a string or an array of strings) whose
	// values become the principal's groups for the authorization policy
	// (`gateway.security.jwt.groups-claim`); empty: none.
	GroupsClaim string
}

// DefaultJWTMaxLifetime is the default JWTConfig.MaxLifetime.
const DefaultJWTMaxLifetime = 24 * time.Hour

// MTLSConfig configures the mtls method.
type MTLSConfig struct {
	// PrincipalField is the certificate field naming the principal
	// (`gateway.security.mtls.principal-field`): cn (default), subject,
	// san-dns, san-email or san-uri.
	PrincipalField string
}

// Authenticator is a domain.Identity for one method, with what the HTTP
// adapter needs around it.
type Authenticator interface {
	domain.Identity
	// Method is the `gateway.security.authentication` value.
	Method() string
	// Challenge is the WWW-Authenticate value of a 401 answer when nothing
	// more is known about the failure; empty for methods without an HTTP
	// authentication scheme (trust, trusted-header, mtls).
	Challenge() string
	// ChallengeFor refines Challenge for a failure returned by Authenticate
	// (adds error="invalid_token" or error="invalid_request" to Bearer
	// challenges, RFC 6750 section 3).
	ChallengeFor(err error) string
	// Close releases background work (the JWKS refresher); idempotent.
	Close() error
}

// New validates cfg and builds the authenticator of cfg.Method. Errors are
// ConfigErrors (joined) naming the offending keys. For jwt with a JWKS URL,
// New downloads the key set once, bounded by ctx and the fetch timeout, and
// starts a refresher that Close stops.
func New(ctx context.Context, cfg Config) (Authenticator, error) {
	realm := cfg.Realm
	if realm == "" {
		realm = DefaultRealm
	}
	var p problems
	if !validRealm(realm) {
		p.add(KeyRealm, "must be printable ASCII without quotes or backslashes")
	}
	method := cfg.Method
	if method == "" {
		method = MethodTrust
	}
	var build func() (Authenticator, error)
	switch method {
	case MethodTrust:
		build = func() (Authenticator, error) { return &trustAuth{allowNonLoopback: cfg.AllowNonLoopback}, nil }
	case MethodPassword:
		build = newPassword(cfg, realm, &p)
	case MethodToken:
		build = newToken(cfg, realm, &p)
	case MethodTrustedHeader:
		build = newTrustedHeader(cfg, &p)
	case MethodJWT:
		build = newJWT(ctx, cfg, realm, &p)
	case MethodMTLS:
		build = newMTLS(cfg, &p)
	default:
		p.add(KeyAuthentication, fmt.Sprintf("unknown method %q: expected trust, password, token, trusted-header, jwt or mtls", method))
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return build()
}

func validRealm(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' || s[i] == '"' || s[i] == '\\' {
			return false
		}
	}
	return s != ""
}

// HashToken returns the lower-case hex SHA-256 digest under which a bearer
// token is configured.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// SplitList splits a comma-separated configuration value, trimming blanks
// and dropping empty items.
func SplitList(raw string) []string {
	var out []string
	for item := range strings.SplitSeq(raw, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// plaintextCost is the bcrypt cost of passwords configured in clear text.
var plaintextCost = bcrypt.DefaultCost

// ParseUsers reads `gateway.security.users` in the official syntax: a
// comma-separated list of `principal:secret` or `principal:bcrypt:<hash>`.
// Clear-text secrets are bcrypt-hashed at load so that every user is
// verified the same way. Errors name the key and the entry, never a secret.
func ParseUsers(raw string) (map[string]string, error) {
	users := map[string]string{}
	var p problems
	for i, entry := range strings.Split(raw, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		n := i + 1
		principal, secret, ok := strings.Cut(entry, ":")
		principal = strings.TrimSpace(principal)
		switch {
		case !ok:
			p.add(KeyUsers, fmt.Sprintf("entry %d must be `principal:secret` or `principal:bcrypt:<hash>`", n))
			continue
		case principal == "":
			p.add(KeyUsers, fmt.Sprintf("entry %d has an empty principal", n))
			continue
		case secret == "":
			p.add(KeyUsers, fmt.Sprintf("entry %d has an empty secret", n))
			continue
		}
		if _, dup := users[principal]; dup {
			p.add(KeyUsers, fmt.Sprintf("entry %d duplicates principal %q", n, principal))
			continue
		}
		if hash, isHash := strings.CutPrefix(secret, "bcrypt:"); isHash {
			if _, err := bcrypt.Cost([]byte(hash)); err != nil {
				p.add(KeyUsers, fmt.Sprintf("entry %d (principal %q) has a malformed bcrypt hash", n, principal))
				continue
			}
			users[principal] = hash
			continue
		}
		hash, err := bcrypt.GenerateFromPassword([]byte(secret), plaintextCost)
		if err != nil {
			p.add(KeyUsers, fmt.Sprintf("entry %d (principal %q) has an unusable secret (bcrypt takes at most 72 bytes)", n, principal))
			continue
		}
		users[principal] = string(hash)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return users, nil
}

// ParseTokens reads `gateway.security.tokens` in the official syntax: a
// comma-separated list of `<token>:<principal>` or
// `sha256:<hex>:<principal>`. Clear-text tokens are hashed at load. The
// result maps digests to principals. Errors never quote a token.
func ParseTokens(raw string) (map[string]string, error) {
	tokens := map[string]string{}
	var p problems
	for i, entry := range strings.Split(raw, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		n := i + 1
		idx := strings.LastIndexByte(entry, ':')
		if idx < 0 {
			p.add(KeyTokens, fmt.Sprintf("entry %d must be `<token>:<principal>` or `sha256:<hex>:<principal>`", n))
			continue
		}
		token, principal := entry[:idx], strings.TrimSpace(entry[idx+1:])
		if principal == "" {
			p.add(KeyTokens, fmt.Sprintf("entry %d has an empty principal", n))
			continue
		}
		if token == "" {
			p.add(KeyTokens, fmt.Sprintf("entry %d has an empty token", n))
			continue
		}
		var digest string
		if d, isDigest := strings.CutPrefix(token, "sha256:"); isDigest {
			if !isSHA256Hex(d) {
				p.add(KeyTokens, fmt.Sprintf("entry %d (principal %q) has a malformed sha256 digest", n, principal))
				continue
			}
			digest = strings.ToLower(d)
		} else {
			digest = HashToken(token)
		}
		if _, dup := tokens[digest]; dup {
			p.add(KeyTokens, fmt.Sprintf("entry %d (principal %q) duplicates an earlier token", n, principal))
			continue
		}
		tokens[digest] = principal
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return tokens, nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
