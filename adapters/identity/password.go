package identity

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
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
	// dummy is compared against for unknown users so that their timing
	// matches known users (same cost as the costliest configured hash).
	dummy []byte
	cache *verifiedCache // nil when disabled
}

func newPassword(cfg Config, realm string, p *problems) func() (Authenticator, error) {
	if len(cfg.Users) == 0 {
		p.add(KeyUsers, "must configure at least one user when "+KeyAuthentication+" is password")
	}
	users := make(map[string][]byte, len(cfg.Users))
	maxCost := bcrypt.MinCost
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
		maxCost = max(maxCost, cost)
		users[name] = []byte(hash)
	}
	if cfg.PasswordCacheTTL > 24*time.Hour {
		p.add(KeyPasswordCacheTTL, "must not exceed 24h")
	}
	return func() (Authenticator, error) {
		var secret [16]byte
		_, _ = rand.Read(secret[:])
		dummy, err := bcrypt.GenerateFromPassword(secret[:], maxCost)
		if err != nil {
			return nil, &ConfigError{Key: KeyUsers, Problem: "cannot derive the timing-equalisation hash: " + err.Error()}
		}
		a := &passwordAuth{
			challenge: fmt.Sprintf(`Basic realm="%s", charset="UTF-8"`, realm),
			users:     users,
			dummy:     dummy,
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

func (a *passwordAuth) Authenticate(_ context.Context, c domain.Credentials) (domain.Principal, error) {
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
	invalid := unauthenticated(ErrInvalidCredentials, "invalid user name or password")
	if len(pass) > maxBcryptPassword {
		return domain.Principal{}, invalid
	}
	if a.cache != nil && a.cache.hit(user, pass) {
		return domain.Principal{Name: user, Method: MethodPassword}, nil
	}
	hash, known := a.users[user]
	if !known {
		// Same work as for a known user: timing must not reveal which
		// user names exist.
		_ = bcrypt.CompareHashAndPassword(a.dummy, []byte(pass))
		return domain.Principal{}, invalid
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(pass)) != nil {
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
