package identity

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// maxBcryptCost bounds configured hashes: beyond it one verification takes
// seconds, which is a denial of service waiting to happen.
const maxBcryptCost = 16

// maxBcryptPassword is bcrypt's input limit; longer passwords would be
// silently truncated by the comparison, so they are rejected.
const maxBcryptPassword = 72

// passwordAuth verifies HTTP Basic credentials against bcrypt hashes.
type passwordAuth struct {
	challenge string
	users     map[string][]byte
	// dummies holds one hash per configured bcrypt cost, compared against
	// for unknown users so that their timing matches known users: an
	// unknown name gets the cost of a configured user chosen by a keyed
	// digest of the name (stable per name, distributed as the configured
	// costs are).
	dummies map[int][]byte
	costs   []int // the cost of every configured user, sorted
	nameKey [32]byte
	cache   *verifiedCache // nil when disabled
	// throttle limits failed logins; nil when disabled.
	throttle *loginThrottle
}

func newPassword(cfg Config, realm string, p *problems) func() (Authenticator, error) {
	if len(cfg.Users) == 0 {
		p.add(KeyUsers, "must configure at least one user when "+KeyAuthentication+" is password")
	}
	users := make(map[string][]byte, len(cfg.Users))
	var costs []int
	for name, hash := range cfg.Users {
		switch {
		case name == "" || strings.Contains(name, ":") || !validPrincipal(name):
			p.add(KeyUsers, fmt.Sprintf("principal %q is not a valid user name (1-256 bytes, no ':' or control characters)", name))
			continue
		}
		cost, err := bcrypt.Cost([]byte(hash))
		if err != nil {
			p.add(KeyUsers, fmt.Sprintf("principal %q has a malformed bcrypt hash", name))
			continue
		}
		if cost > maxBcryptCost {
			p.add(KeyUsers, fmt.Sprintf("principal %q has a bcrypt cost of %d, above the supported %d", name, cost, maxBcryptCost))
			continue
		}
		costs = append(costs, cost)
		users[name] = []byte(hash)
	}
	if cfg.PasswordCacheTTL > 24*time.Hour {
		p.add(KeyPasswordCacheTTL, "must not exceed 24h")
	}
	if cfg.MaxFailedLogins < 0 {
		p.add(KeyPasswordMaxFailedLogins, "must not be negative")
	}
	return func() (Authenticator, error) {
		slices.Sort(costs)
		a := &passwordAuth{
			challenge: fmt.Sprintf(`Basic realm="%s", charset="UTF-8"`, realm),
			users:     users,
			dummies:   map[int][]byte{},
			costs:     costs,
		}
		_, _ = rand.Read(a.nameKey[:])
		if len(costs) == 0 {
			a.costs = []int{bcrypt.DefaultCost}
		}
		for _, cost := range a.costs {
			if a.dummies[cost] != nil {
				continue
			}
			var secret [16]byte
			_, _ = rand.Read(secret[:])
			dummy, err := bcrypt.GenerateFromPassword(secret[:], cost)
			if err != nil {
				return nil, &ConfigError{Key: KeyUsers, Problem: "cannot derive the timing-equalisation hash: " + err.Error()}
			}
			a.dummies[cost] = dummy
		}
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
		ttl := cfg.PasswordCacheTTL
		if ttl == 0 {
			ttl = DefaultPasswordCacheTTL
		}
		if ttl > 0 {
			a.cache = newVerifiedCache(ttl)
		}
		return a, nil
	}
}

// dummyFor is the hash an unknown user name is compared against.
func (a *passwordAuth) dummyFor(user string) []byte {
	m := hmac.New(sha256.New, a.nameKey[:])
	m.Write([]byte(user))
	d := m.Sum(nil)
	i := binary.BigEndian.Uint64(d[:8]) % uint64(len(a.costs))
	return a.dummies[a.costs[i]]
}

func (a *passwordAuth) Authenticate(ctx context.Context, c domain.Credentials) (domain.Principal, error) {
	param, err := authParam(c, "Basic")
	if err != nil {
		return domain.Principal{}, err
	}
	raw, err := base64.StdEncoding.DecodeString(param)
	if err != nil {
		return domain.Principal{}, unauthenticated(ErrMalformedCredentials, "malformed Basic credentials: not base64")
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok || user == "" {
		return domain.Principal{}, unauthenticated(ErrMalformedCredentials, "malformed Basic credentials: expected user:password")
	}
	addr := throttleAddr(c.RemoteAddr)
	delay, err := a.throttle.check(addr, user)
	if err != nil {
		return domain.Principal{}, err
	}
	if a.cache != nil && len(pass) <= maxBcryptPassword && a.cache.hit(user, pass) {
		return domain.Principal{Name: user, Method: MethodPassword}, nil
	}
	if err := a.throttle.delay(ctx, delay); err != nil {
		return domain.Principal{}, err
	}
	invalid := unauthenticated(ErrInvalidCredentials, "invalid user name or password")
	hash, known := a.users[user]
	if !known || len(pass) > maxBcryptPassword {
		// Same work as for a known user and a valid length: timing must
		// not reveal which user names exist, and an over-long password
		// (which bcrypt would truncate, so it is refused) costs a flood
		// as much as any other guess.
		if !known {
			hash = a.dummyFor(user)
		}
		_ = bcrypt.CompareHashAndPassword(hash, []byte(pass[:min(len(pass), maxBcryptPassword)]))
		a.throttle.failed(addr, user)
		return domain.Principal{}, invalid
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(pass)) != nil {
		a.throttle.failed(addr, user)
		return domain.Principal{}, invalid
	}
	if a.cache != nil {
		a.cache.add(user, pass)
	}
	return domain.Principal{Name: user, Method: MethodPassword}, nil
}

func (*passwordAuth) Method() string              { return MethodPassword }
func (a *passwordAuth) Challenge() string         { return a.challenge }
func (a *passwordAuth) ChallengeFor(error) string { return a.challenge }
func (*passwordAuth) Close() error                { return nil }

// verifiedCache remembers recently verified (user, password) pairs by a
// keyed digest; it never stores a password or a plain hash of one.
type verifiedCache struct {
	key     [32]byte
	ttl     time.Duration
	now     func() time.Time
	mu      sync.Mutex
	entries map[[sha256.Size]byte]time.Time
}

// maxVerifiedEntries bounds the cache; it only grows with valid credentials.
const maxVerifiedEntries = 4096

func newVerifiedCache(ttl time.Duration) *verifiedCache {
	v := &verifiedCache{ttl: ttl, now: time.Now, entries: map[[sha256.Size]byte]time.Time{}}
	_, _ = rand.Read(v.key[:])
	return v
}

// digest is injective in (user, pass): the user is length-prefixed.
func (v *verifiedCache) digest(user, pass string) [sha256.Size]byte {
	m := hmac.New(sha256.New, v.key[:])
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(user)))
	m.Write(n[:])
	m.Write([]byte(user))
	m.Write([]byte(pass))
	var out [sha256.Size]byte
	m.Sum(out[:0])
	return out
}

func (v *verifiedCache) hit(user, pass string) bool {
	d := v.digest(user, pass)
	now := v.now()
	v.mu.Lock()
	defer v.mu.Unlock()
	exp, ok := v.entries[d]
	if ok && now.After(exp) {
		delete(v.entries, d)
		return false
	}
	return ok
}

func (v *verifiedCache) add(user, pass string) {
	d := v.digest(user, pass)
	now := v.now()
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.entries) >= maxVerifiedEntries {
		for k, exp := range v.entries {
			if now.After(exp) {
				delete(v.entries, k)
			}
		}
		if len(v.entries) >= maxVerifiedEntries {
			clear(v.entries)
		}
	}
	v.entries[d] = now.Add(v.ttl)
}
