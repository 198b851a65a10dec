package identity

import (
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestTrust(t *testing.T) {
	t.Parallel()
	local := mustNew(t, Config{})
	open := mustNew(t, Config{Method: MethodTrust, AllowNonLoopback: true})
	if local.Method() != MethodTrust || local.Challenge() != "" {
		t.Fatalf("method %q challenge %q", local.Method(), local.Challenge())
	}
	cases := []struct {
		name, remote string
		ok           bool
	}{
		{"ipv4 loopback", "127.0.0.1:50000", true},
		{"ipv4 loopback /8", "127.8.9.10:1", true},
		{"ipv6 loopback", "[::1]:50000", true},
		{"ipv6 loopback without port", "::1", true},
		{"ipv4-mapped loopback", "[::ffff:127.0.0.1]:80", true},
		{"private ipv4", "10.0.0.1:50000", false},
		{"public ipv6", "[2001:db8::1]:443", false},
		{"ipv4-mapped non-loopback", "[::ffff:10.0.0.1]:80", false},
		{"unspecified", "0.0.0.0:1", false},
		{"empty address", "", false},
		{"unix socket", "@", false},
		{"garbage", "not-an-address", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := local.Authenticate(context.Background(), request(tc.remote))
			if tc.ok {
				if err != nil || !reflect.DeepEqual(p, domain.Principal{Method: MethodTrust}) {
					t.Fatalf("got %+v, %v", p, err)
				}
			} else {
				wantUnauthenticated(t, err, ErrSourceNotAllowed)
			}
			// allow-non-loopback accepts everyone as anonymous.
			if p, err := open.Authenticate(context.Background(), request(tc.remote)); err != nil || p.Name != "" {
				t.Fatalf("allow-non-loopback: %+v, %v", p, err)
			}
		})
	}
}

func hash(t *testing.T, pw string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

func TestPassword(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("p", 72)
	a := mustNew(t, Config{
		Method:           MethodPassword,
		Users:            map[string]string{"alice": hash(t, "s3cret"), "bob": hash(t, ""), "carol": hash(t, long)},
		PasswordCacheTTL: -1, // exercise bcrypt on every call
	})
	if got := a.Challenge(); got != `Basic realm="fluss-gateway", charset="UTF-8"` {
		t.Fatalf("challenge %q", got)
	}
	ok := []struct{ name, user, pass string }{
		{"valid", "alice", "s3cret"},
		{"empty password configured", "bob", ""},
		{"72-byte password", "carol", long},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			p, err := a.Authenticate(context.Background(), request("10.0.0.1:1", "Authorization", basic(tc.user, tc.pass)))
			if err != nil || !reflect.DeepEqual(p, domain.Principal{Name: tc.user, Method: MethodPassword}) {
				t.Fatalf("got %+v, %v", p, err)
			}
		})
	}
	bad := []struct {
		name, authz string
		reason      error
	}{
		{"no header", "", ErrNoCredentials},
		{"bearer scheme", "Bearer s3cret", ErrNoCredentials},
		{"wrong password", basic("alice", "wrong-pass"), ErrInvalidCredentials},
		{"password of another user", basic("alice", ""), ErrInvalidCredentials},
		{"unknown user", basic("mallory", "s3cret"), ErrInvalidCredentials},
		{"user name case differs", basic("Alice", "s3cret"), ErrInvalidCredentials},
		{"truncation beyond 72 bytes", basic("carol", long+"extra"), ErrInvalidCredentials},
		{"scheme only", "Basic", ErrMalformedCredentials},
		{"scheme and blanks", "Basic   ", ErrMalformedCredentials},
		{"not base64", "Basic !!!s3cret!!!", ErrMalformedCredentials},
		{"two params", "Basic YWxpY2U6 czNjcmV0", ErrMalformedCredentials},
		{"no colon", "Basic " + b64("alices3cret"), ErrMalformedCredentials},
		{"empty user", basic("", "s3cret"), ErrMalformedCredentials},
		{"control character", "Basic \x00" + b64("alice:s3cret"), ErrMalformedCredentials},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.Authenticate(context.Background(), request("10.0.0.1:1", "Authorization", tc.authz))
			wantUnauthenticated(t, err, tc.reason, "s3cret", "wrong-pass", "extra")
			if got := a.ChallengeFor(err); !strings.HasPrefix(got, "Basic ") {
				t.Fatalf("challenge %q", got)
			}
		})
	}
	t.Run("scheme is case-insensitive", func(t *testing.T) {
		if _, err := a.Authenticate(context.Background(), request("", "Authorization", "bAsIc  "+b64("alice:s3cret"))); err != nil {
			t.Fatal(err)
		}
	})
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestPasswordTimingEqualisation(t *testing.T) {
	t.Parallel()
	h5, _ := bcrypt.GenerateFromPassword([]byte("x"), 5)
	a := mustNew(t, Config{Method: MethodPassword, Users: map[string]string{"a": hash(t, "x"), "b": string(h5)}})
	pa := a.(*passwordAuth)
	seen := map[int]int{}
	for i := 0; i < 200; i++ {
		name := fmt.Sprintf("unknown-%d", i)
		cost, err := bcrypt.Cost(pa.dummyFor(name))
		if err != nil {
			t.Fatal(err)
		}
		again, _ := bcrypt.Cost(pa.dummyFor(name))
		if again != cost {
			t.Fatalf("the dummy cost of %q changed from %d to %d", name, cost, again)
		}
		seen[cost]++
	}
	// An unknown name costs what one of the configured users costs, so its
	// timing does not set it apart from the known names.
	if len(seen) != 2 || seen[bcrypt.MinCost] == 0 || seen[5] == 0 {
		t.Fatalf("dummy costs of unknown names %v; want both configured costs (%d and 5)", seen, bcrypt.MinCost)
	}
}

func TestPasswordCache(t *testing.T) {
	t.Parallel()
	a := mustNew(t, Config{Method: MethodPassword, Users: map[string]string{"alice": hash(t, "pw")}, PasswordCacheTTL: time.Minute})
	pa := a.(*passwordAuth)
	now := time.Unix(1_000_000, 0)
	pa.cache.now = func() time.Time { return now }
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, request("", "Authorization", basic("alice", "pw"))); err != nil {
		t.Fatal(err)
	}
	if !pa.cache.hit("alice", "pw") {
		t.Fatal("verified credentials not cached")
	}
	if pa.cache.hit("alice", "other") || pa.cache.hit("alicep", "w") {
		t.Fatal("cache hit for different credentials")
	}
	if _, err := a.Authenticate(ctx, request("", "Authorization", basic("alice", "nope"))); err == nil {
		t.Fatal("wrong password accepted after caching")
	}
	if pa.cache.digest("a", "bc") == pa.cache.digest("ab", "c") {
		t.Fatal("cache digest is not injective")
	}
	now = now.Add(2 * time.Minute)
	if pa.cache.hit("alice", "pw") {
		t.Fatal("expired entry still hits")
	}
	for i := range maxVerifiedEntries + 10 {
		pa.cache.add("u", string(rune(i)))
	}
	if n := len(pa.cache.entries); n > maxVerifiedEntries {
		t.Fatalf("cache grew to %d", n)
	}
}

func TestToken(t *testing.T) {
	t.Parallel()
	a := mustNew(t, Config{Method: MethodToken, Tokens: map[string]string{
		HashToken("tok-alice-123"): "alice",
		HashToken("tok-bob-456"):   "bob",
	}})
	if a.Challenge() != `Bearer realm="fluss-gateway"` {
		t.Fatalf("challenge %q", a.Challenge())
	}
	for _, tc := range []struct{ authz, want string }{
		{"Bearer tok-alice-123", "alice"},
		{"bearer   tok-bob-456", "bob"},
	} {
		p, err := a.Authenticate(context.Background(), request("", "Authorization", tc.authz))
		if err != nil || !reflect.DeepEqual(p, domain.Principal{Name: tc.want, Method: MethodToken}) {
			t.Fatalf("%q: %+v, %v", tc.authz, p, err)
		}
	}
	bad := []struct {
		name, authz   string
		reason        error
		wantChallenge string
	}{
		{"no header", "", ErrNoCredentials, `Bearer realm="fluss-gateway"`},
		{"basic scheme", basic("alice", "tok-alice-123"), ErrNoCredentials, `Bearer realm="fluss-gateway"`},
		{"unknown token", "Bearer tok-mallory-999", ErrInvalidCredentials, `Bearer realm="fluss-gateway", error="invalid_token"`},
		{"prefix of a token", "Bearer tok-alice-12", ErrInvalidCredentials, `Bearer realm="fluss-gateway", error="invalid_token"`},
		{"digest instead of token", "Bearer " + HashToken("tok-alice-123"), ErrInvalidCredentials, `Bearer realm="fluss-gateway", error="invalid_token"`},
		{"too long", "Bearer " + strings.Repeat("x", maxBearerBytes+1), ErrInvalidCredentials, `Bearer realm="fluss-gateway", error="invalid_token"`},
		{"empty token", "Bearer ", ErrMalformedCredentials, `Bearer realm="fluss-gateway", error="invalid_request"`},
		{"two tokens", "Bearer tok-alice-123 tok-bob-456", ErrMalformedCredentials, `Bearer realm="fluss-gateway", error="invalid_request"`},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.Authenticate(context.Background(), request("", "Authorization", tc.authz))
			wantUnauthenticated(t, err, tc.reason, "tok-", HashToken("tok-alice-123"))
			if got := a.ChallengeFor(err); got != tc.wantChallenge {
				t.Fatalf("challenge %q, want %q", got, tc.wantChallenge)
			}
		})
	}
}

func TestTrustedHeader(t *testing.T) {
	t.Parallel()
	proxied := mustNew(t, Config{Method: MethodTrustedHeader, TrustedHeader: TrustedHeaderConfig{
		TrustedCIDRs: []string{"10.0.0.0/8", "2001:db8:1::/48", "192.0.2.7"},
	}})
	custom := mustNew(t, Config{Method: MethodTrustedHeader, TrustedHeader: TrustedHeaderConfig{Name: "X-Auth-Request-User"}})
	cases := []struct {
		name   string
		a      Authenticator
		creds  domain.Credentials
		want   string
		reason error
	}{
		{"from trusted ipv4 cidr", proxied, request("10.1.2.3:4000", "x-forwarded-user", "alice"), "alice", nil},
		{"from trusted ipv6 cidr", proxied, request("[2001:db8:1::5]:4000", "X-Forwarded-User", "alice@example.com"), "alice@example.com", nil},
		{"from trusted single address", proxied, request("192.0.2.7:1", "x-forwarded-user", "bob"), "bob", nil},
		{"ipv4-mapped trusted address", proxied, request("[::ffff:10.9.9.9]:1", "x-forwarded-user", "carol"), "carol", nil},
		{"default cidrs: ipv4 loopback", custom, request("127.0.0.1:1", "x-auth-request-user", "dave"), "dave", nil},
		{"default cidrs: ipv6 loopback", custom, request("[::1]:1", "x-auth-request-user", "dave"), "dave", nil},
		{"spoofed from unlisted address", proxied, request("192.168.1.1:1", "x-forwarded-user", "admin"), "", ErrSourceNotAllowed},
		{"spoofed from neighbour of single address", proxied, request("192.0.2.8:1", "x-forwarded-user", "admin"), "", ErrSourceNotAllowed},
		{"spoofed default cidrs", custom, request("10.0.0.1:1", "x-auth-request-user", "admin"), "", ErrSourceNotAllowed},
		{"unparseable peer", proxied, request("pipe", "x-forwarded-user", "admin"), "", ErrSourceNotAllowed},
		{"trusted source without header", proxied, request("10.1.2.3:4000"), "", ErrNoCredentials},
		{"other header name", custom, request("127.0.0.1:1", "x-forwarded-user", "dave"), "", ErrNoCredentials},
		{"control characters", proxied, request("10.1.2.3:1", "x-forwarded-user", "ali\x00ce"), "", ErrMalformedCredentials},
		{"surrounding blanks", proxied, request("10.1.2.3:1", "x-forwarded-user", " alice"), "", ErrMalformedCredentials},
		{"too long", proxied, request("10.1.2.3:1", "x-forwarded-user", strings.Repeat("a", 257)), "", ErrMalformedCredentials},
		{"invalid utf-8", proxied, request("10.1.2.3:1", "x-forwarded-user", "\xff\xfe"), "", ErrMalformedCredentials},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.a.Authenticate(context.Background(), tc.creds)
			if tc.reason == nil {
				if err != nil || !reflect.DeepEqual(p, domain.Principal{Name: tc.want, Method: MethodTrustedHeader}) {
					t.Fatalf("got %+v, %v", p, err)
				}
				return
			}
			wantUnauthenticated(t, err, tc.reason, "admin")
		})
	}
}

func TestNilHeaderAccessor(t *testing.T) {
	t.Parallel()
	for _, a := range []Authenticator{
		mustNew(t, Config{Method: MethodPassword, Users: map[string]string{"a": hash(t, "b")}}),
		mustNew(t, Config{Method: MethodToken, Tokens: map[string]string{HashToken("t"): "a"}}),
		mustNew(t, Config{Method: MethodTrustedHeader}),
		mustNew(t, Config{Method: MethodMTLS}),
	} {
		_, err := a.Authenticate(context.Background(), domain.Credentials{RemoteAddr: "127.0.0.1:1"})
		wantUnauthenticated(t, err, ErrNoCredentials)
	}
}
