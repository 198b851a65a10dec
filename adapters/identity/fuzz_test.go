package identity

import (
	"context"
	"crypto/x509"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

var (
	fuzzOnce  sync.Once
	fuzzAuths []Authenticator
)

// fuzzAuthenticators builds one authenticator per method without background
// work (jwt is added by the tests that can serve a JWKS).
func fuzzAuthenticators() []Authenticator {
	fuzzOnce.Do(func() {
		h, _ := ParseUsers("alice:pw")
		for _, cfg := range []Config{
			{},
			{Method: MethodPassword, Users: h, PasswordCacheTTL: -1},
			{Method: MethodToken, Tokens: map[string]string{HashToken("tok"): "alice"}},
			{Method: MethodTrustedHeader, TrustedHeader: TrustedHeaderConfig{TrustedCIDRs: []string{"0.0.0.0/0", "::/0"}}},
			{Method: MethodMTLS},
		} {
			a, err := New(context.Background(), cfg)
			if err != nil {
				panic(err)
			}
			fuzzAuths = append(fuzzAuths, a)
		}
	})
	return fuzzAuths
}

// checkOutcome: success, or an Unauthenticated *domain.Error (or the
// throttle's resource_exhausted); never a panic.
func checkOutcome(t testing.TB, a Authenticator, c domain.Credentials) {
	t.Helper()
	p, err := a.Authenticate(context.Background(), c)
	if err == nil {
		if p.Method != a.Method() {
			t.Fatalf("%s: principal %+v", a.Method(), p)
		}
		return
	}
	if domain.KindOf(err) == domain.KindResourceExhausted && (a.Method() == MethodPassword || a.Method() == MethodToken) {
		return // the failed-login throttle (throttle_test.go) after many failures
	}
	if domain.KindOf(err) != domain.KindUnauthenticated {
		t.Fatalf("%s: %v is not unauthenticated", a.Method(), err)
	}
	if !errors.Is(err, ErrNoCredentials) && !errors.Is(err, ErrMalformedCredentials) &&
		!errors.Is(err, ErrInvalidCredentials) && !errors.Is(err, ErrSourceNotAllowed) {
		t.Fatalf("%s: %v has no reason", a.Method(), err)
	}
}

func FuzzAuthenticate(f *testing.F) {
	for _, s := range []string{
		"", "Basic", "Basic YWxpY2U6cHc=", "Bearer tok", "Bearer a.b.c", "bearer \x00", "Basic ====",
		"Negotiate abc", "Bearer eyJhbGciOiJub25lIn0.e30.", "\xff\xfe", "Basic Og==",
	} {
		f.Add(s, "127.0.0.1:1", "alice")
	}
	f.Add("Bearer x", "[::1]:1", "\x00")
	f.Add("", "[fe80::1%eth0]:1", "")
	f.Fuzz(func(t *testing.T, authz, remote, user string) {
		c := request(remote, "Authorization", authz, "x-forwarded-user", user)
		c.ClientCertificates = []*x509.Certificate{{}}
		for _, a := range fuzzAuthenticators() {
			checkOutcome(t, a, c)
		}
	})
}

func TestRandomInputs(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, standardKeys(t)...)
	auths := append([]Authenticator{newJWTAuth(t, srv, nil)}, fuzzAuthenticators()...)
	valid := sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(nil))
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("Bearer Basic .:=+/-_~ \x00\t\xffeyJ")
	for range 3000 {
		n := r.IntN(64)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		authz := string(b)
		if r.IntN(4) == 0 { // mutate a valid token
			m := []byte("Bearer " + valid)
			m[7+r.IntN(len(valid))] = alphabet[r.IntN(len(alphabet))]
			authz = string(m)
		}
		c := request("192.0.2.1:1", "Authorization", authz, "x-forwarded-user", string(b))
		for _, a := range auths {
			checkOutcome(t, a, c)
		}
	}
}
