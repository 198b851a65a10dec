package identity

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

const (
	testIssuer   = "https://idp.example.com/realms/data"
	testAudience = "fluss-gateway"
)

// jwksServer serves a replaceable JWK Set and counts fetches.
type jwksServer struct {
	*httptest.Server
	body   atomic.Pointer[[]byte]
	status atomic.Int32
	hits   atomic.Int32
}

func newJWKSServer(t *testing.T, keys ...jwkset.JWK) *jwksServer {
	t.Helper()
	s := &jwksServer{}
	s.status.Store(http.StatusOK)
	s.set(t, keys...)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.hits.Add(1)
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(int(s.status.Load()))
		_, _ = w.Write(*s.body.Load())
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(t *testing.T, keys ...jwkset.JWK) {
	t.Helper()
	raw := jwksJSON(t, keys...)
	s.body.Store(&raw)
}

func jwksJSON(t *testing.T, keys ...jwkset.JWK) []byte {
	t.Helper()
	set := jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{}}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.Marshal())
	}
	raw, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func jwkOf(t *testing.T, pub any, kid string, alg jwkset.ALG) jwkset.JWK {
	t.Helper()
	k, err := jwkset.NewJWKFromKey(pub, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: kid, ALG: alg, USE: jwkset.UseSig}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// standardKeys: RSA (RS256 and alg-less), EC P-256 and Ed25519 public keys.
func standardKeys(t *testing.T) []jwkset.JWK {
	testKeys(t)
	return []jwkset.JWK{
		jwkOf(t, &rsaKey.PublicKey, "rsa1", jwkset.AlgRS256),
		jwkOf(t, &rsaKey.PublicKey, "rsa-any", ""),
		jwkOf(t, &ecKey.PublicKey, "ec1", jwkset.AlgES256),
		jwkOf(t, edKey.Public(), "ed1", jwkset.AlgEdDSA),
	}
}

func claims(mut func(jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss": testIssuer,
		"aud": testAudience,
		"sub": "alice",
		"exp": now.Add(5 * time.Minute).Unix(),
		"iat": now.Unix(),
		"nbf": now.Unix(),
	}
	if mut != nil {
		mut(c)
	}
	return c
}

func sign(t *testing.T, m jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func seg(v any) string {
	raw, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(raw)
}

func newJWTAuth(t *testing.T, srv *jwksServer, mut func(*JWTConfig)) Authenticator {
	t.Helper()
	c := JWTConfig{Issuer: testIssuer, Audience: testAudience, JWKSURL: srv.URL + "/jwks"}
	if mut != nil {
		mut(&c)
	}
	return mustNew(t, Config{Method: MethodJWT, JWT: c})
}

func TestJWT(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, standardKeys(t)...)
	a := newJWTAuth(t, srv, nil)
	rsaOnly := newJWTAuth(t, srv, func(c *JWTConfig) { c.Algorithms = []string{"RS256"} })
	byEmail := newJWTAuth(t, srv, func(c *JWTConfig) { c.PrincipalClaim = "email" })

	pubDER, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	valid := sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(nil))
	parts := strings.Split(valid, ".")
	forgedPayload := seg(claims(func(c jwt.MapClaims) { c["sub"] = "admin" }))
	critHeader := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims(nil))
		tok.Header["kid"] = "rsa1"
		tok.Header["crit"] = []string{"exp"}
		s, err := tok.SignedString(rsaKey)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}()

	type tc struct {
		name   string
		a      Authenticator
		authz  string
		want   string
		reason error
	}
	bearer := func(s string) string { return "Bearer " + s }
	cases := []tc{
		{"RS256", a, bearer(valid), "alice", nil},
		{"ES256", a, bearer(sign(t, jwt.SigningMethodES256, ecKey, "ec1", claims(nil))), "alice", nil},
		{"EdDSA", a, bearer(sign(t, jwt.SigningMethodEdDSA, edKey, "ed1", claims(nil))), "alice", nil},
		{"PS256 on an alg-less key", a, bearer(sign(t, jwt.SigningMethodPS256, rsaKey, "rsa-any", claims(nil))), "alice", nil},
		{"no kid: tries every key", a, bearer(sign(t, jwt.SigningMethodES256, ecKey, "", claims(nil))), "alice", nil},
		{"audience array", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { c["aud"] = []string{"other", testAudience} }))), "alice", nil},
		{"expired within clock skew", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-10 * time.Second).Unix() }))), "alice", nil},
		{"no nbf and no iat", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { delete(c, "nbf"); delete(c, "iat") }))), "alice", nil},
		{"custom principal claim", byEmail, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { c["email"] = "alice@example.com" }))), "alice@example.com", nil},

		{"no Authorization header", a, "", "", ErrNoCredentials},
		{"Basic scheme", a, basic("alice", "pw"), "", ErrNoCredentials},
		{"empty bearer", a, "Bearer", "", ErrMalformedCredentials},
		{"two tokens", a, "Bearer " + valid + " " + valid, "", ErrMalformedCredentials},
		{"expired", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() }))), "", ErrInvalidCredentials},
		{"not yet valid (nbf)", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() }))), "", ErrInvalidCredentials},
		{"issued in the future (iat)", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { c["iat"] = time.Now().Add(time.Hour).Unix() }))), "", ErrInvalidCredentials},
		{"no exp", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { delete(c, "exp") }))), "", ErrInvalidCredentials},
		{"exp not a number", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { c["exp"] = "tomorrow" }))), "", ErrInvalidCredentials},
		{"wrong issuer", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example.com" }))), "", ErrInvalidCredentials},
		{"no issuer", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { delete(c, "iss") }))), "", ErrInvalidCredentials},
		{"wrong audience", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { c["aud"] = "another-api" }))), "", ErrInvalidCredentials},
		{"no audience", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { delete(c, "aud") }))), "", ErrInvalidCredentials},
		{"wrong key, known kid", a, bearer(sign(t, jwt.SigningMethodRS256, rsaOther, "rsa1", claims(nil))), "", ErrInvalidCredentials},
		{"wrong key, no kid", a, bearer(sign(t, jwt.SigningMethodRS256, rsaOther, "", claims(nil))), "", ErrInvalidCredentials},
		{"unknown kid", a, bearer(sign(t, jwt.SigningMethodRS256, rsaOther, "rotated-away", claims(nil))), "", ErrInvalidCredentials},
		{"alg none", a, bearer(sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "", claims(nil))), "", ErrInvalidCredentials},
		{"alg none with a kid", a, bearer(seg(map[string]string{"alg": "none", "typ": "JWT", "kid": "rsa1"}) + "." + seg(claims(nil)) + "."), "", ErrInvalidCredentials},
		{"HS256 keyed with the RSA public key PEM", a, bearer(sign(t, jwt.SigningMethodHS256, pubPEM, "rsa1", claims(nil))), "", ErrInvalidCredentials},
		{"HS256 keyed with the RSA public key DER, alg-less kid", a, bearer(sign(t, jwt.SigningMethodHS256, pubDER, "rsa-any", claims(nil))), "", ErrInvalidCredentials},
		{"alg not allowed by config", rsaOnly, bearer(sign(t, jwt.SigningMethodES256, ecKey, "ec1", claims(nil))), "", ErrInvalidCredentials},
		{"alg differs from the JWK alg", a, bearer(sign(t, jwt.SigningMethodPS256, rsaKey, "rsa1", claims(nil))), "", ErrInvalidCredentials},
		{"RS256 header on an EC key", a, bearer(sign(t, jwt.SigningMethodES256, ecKey, "ec1", claims(nil))[:0] + seg(map[string]string{"alg": "RS256", "kid": "ec1"}) + "." + parts[1] + "." + parts[2]), "", ErrInvalidCredentials},
		{"tampered payload", a, bearer(parts[0] + "." + forgedPayload + "." + parts[2]), "", ErrInvalidCredentials},
		{"truncated signature", a, bearer(valid[:len(valid)-8]), "", ErrInvalidCredentials},
		{"unsupported crit header", a, bearer(critHeader), "", ErrInvalidCredentials},
		{"no sub", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { delete(c, "sub") }))), "", ErrInvalidCredentials},
		{"numeric sub", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { c["sub"] = 42 }))), "", ErrInvalidCredentials},
		{"empty sub", a, bearer(sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(func(c jwt.MapClaims) { c["sub"] = "" }))), "", ErrInvalidCredentials},
		{"custom claim missing", byEmail, bearer(valid), "", ErrInvalidCredentials},
		{"malformed: one segment", a, "Bearer abc", "", ErrInvalidCredentials},
		{"malformed: bad base64", a, "Bearer !!!.!!!.!!!", "", ErrInvalidCredentials},
		{"malformed: empty segments", a, "Bearer ..", "", ErrInvalidCredentials},
		{"malformed: JSON garbage", a, bearer(base64.RawURLEncoding.EncodeToString([]byte("{")) + "." + parts[1] + "." + parts[2]), "", ErrInvalidCredentials},
		{"malformed: four segments", a, bearer(valid + ".x"), "", ErrInvalidCredentials},
		{"too long", a, bearer(strings.Repeat("a", maxBearerBytes+1)), "", ErrInvalidCredentials},
	}
	wantMessage := map[string]string{
		"expired":                    "expired",
		"not yet valid (nbf)":        "not valid yet",
		"issued in the future (iat)": "issued in the future",
		"no exp":                     "lacks a required claim",
		"wrong issuer":               "unexpected issuer",
		"wrong audience":             "unexpected audience",
		"wrong key, known kid":       "signature is invalid",
		"wrong key, no kid":          "signature is invalid",
		"unknown kid":                "unknown key",
		"alg none":                   "algorithm that is not accepted",
		"alg none with a kid":        "algorithm that is not accepted",
		"HS256 keyed with the RSA public key PEM":               "algorithm that is not accepted",
		"HS256 keyed with the RSA public key DER, alg-less kid": "algorithm that is not accepted",
		"alg not allowed by config":                             "algorithm that is not accepted",
		"alg differs from the JWK alg":                          "signature is invalid",
		"RS256 header on an EC key":                             "signature is invalid",
		"tampered payload":                                      "signature is invalid",
		"truncated signature":                                   "signature is invalid",
		"unsupported crit header":                               "critical",
		"no sub":                                                `"sub" claim`,
		"malformed: bad base64":                                 "not a well-formed JWT",
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.a.Authenticate(context.Background(), request("10.0.0.9:1", "Authorization", c.authz))
			if c.reason == nil {
				if err != nil || !reflect.DeepEqual(p, domain.Principal{Name: c.want, Method: MethodJWT}) {
					t.Fatalf("got %+v, %v", p, err)
				}
				return
			}
			tok := strings.TrimPrefix(c.authz, "Bearer ")
			var secrets []string
			if tok != c.authz && tok != "" {
				secrets = append(secrets, tok)
			}
			if i := strings.IndexByte(tok, '.'); i > 8 {
				secrets = append(secrets, tok[:i])
			}
			wantUnauthenticated(t, err, c.reason, secrets...)
			if want, ok := wantMessage[c.name]; ok && !strings.Contains(err.Error(), want) {
				t.Fatalf("message %q, want it to contain %q", err, want)
			}
			want := `Bearer realm="fluss-gateway"`
			switch c.reason {
			case ErrInvalidCredentials:
				want += `, error="invalid_token"`
			case ErrMalformedCredentials:
				want += `, error="invalid_request"`
			}
			if got := c.a.ChallengeFor(err); got != want {
				t.Fatalf("challenge %q, want %q", got, want)
			}
		})
	}
}

func TestJWTKeyRotation(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, standardKeys(t)...)
	a := newJWTAuth(t, srv, nil)
	ja := a.(*jwtAuth)
	ctx := context.Background()
	if got := srv.hits.Load(); got != 1 {
		t.Fatalf("initial fetches %d", got)
	}
	// The issuer rotates to a new key; the first token naming it reloads.
	srv.set(t, jwkOf(t, &rsaOther.PublicKey, "rsa2", jwkset.AlgRS256))
	ja.keys.mu.Lock()
	ja.keys.lastAttempt = time.Time{} // as if the last reload were long ago
	ja.keys.mu.Unlock()
	p, err := a.Authenticate(ctx, request("", "Authorization", "Bearer "+sign(t, jwt.SigningMethodRS256, rsaOther, "rsa2", claims(nil))))
	if err != nil || p.Name != "alice" {
		t.Fatalf("rotated key: %+v %v", p, err)
	}
	if got := srv.hits.Load(); got != 2 {
		t.Fatalf("fetches after rotation %d, want 2", got)
	}
	// Old keys are gone after the reload.
	_, err = a.Authenticate(ctx, request("", "Authorization", "Bearer "+sign(t, jwt.SigningMethodRS256, rsaKey, "rsa1", claims(nil))))
	wantUnauthenticated(t, err, ErrInvalidCredentials)
	// Forged kids within the refresh gap do not reach the issuer.
	for range 5 {
		_, err = a.Authenticate(ctx, request("", "Authorization", "Bearer "+sign(t, jwt.SigningMethodRS256, rsaOther, "forged", claims(nil))))
		wantUnauthenticated(t, err, ErrInvalidCredentials)
	}
	if got := srv.hits.Load(); got != 2 {
		t.Fatalf("fetches after forged kids %d, want 2 (the rotation reload was just now: throttled)", got)
	}
	// A failing reload keeps the previous set.
	srv.status.Store(http.StatusInternalServerError)
	ja.keys.mu.Lock()
	ja.keys.lastAttempt = time.Time{}
	ja.keys.mu.Unlock()
	if ja.keys.refreshForUnknownKey(ctx, ja.keys.current.Load()) {
		t.Fatal("refresh reported success on HTTP 500")
	}
	if p, err := a.Authenticate(ctx, request("", "Authorization", "Bearer "+sign(t, jwt.SigningMethodRS256, rsaOther, "rsa2", claims(nil)))); err != nil || p.Name != "alice" {
		t.Fatalf("after failed reload: %+v %v", p, err)
	}
}

func TestJWTConcurrent(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, standardKeys(t)...)
	a := newJWTAuth(t, srv, nil)
	ja := a.(*jwtAuth)
	ja.keys.refreshGap = 0
	good := "Bearer " + sign(t, jwt.SigningMethodES256, ecKey, "ec1", claims(nil))
	unknown := "Bearer " + sign(t, jwt.SigningMethodES256, ecKey, "unknown", claims(nil))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for range 20 {
				authz := good
				if i%2 == 1 {
					authz = unknown
				}
				_, err := a.Authenticate(context.Background(), request("", "Authorization", authz))
				if authz == good && err != nil {
					t.Error(err)
					return
				}
				if authz == unknown && domain.KindOf(err) != domain.KindUnauthenticated {
					t.Errorf("unknown kid: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestJWKSSources(t *testing.T) {
	t.Parallel()
	keys := standardKeys(t)
	base := JWTConfig{Issuer: testIssuer, Audience: testAudience}
	tok := "Bearer " + sign(t, jwt.SigningMethodEdDSA, edKey, "ed1", claims(nil))

	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "jwks.json")
		if err := os.WriteFile(path, jwksJSON(t, keys...), 0o600); err != nil {
			t.Fatal(err)
		}
		c := base
		c.JWKSFile = path
		a := mustNew(t, Config{Method: MethodJWT, JWT: c})
		if _, err := a.Authenticate(context.Background(), request("", "Authorization", tok)); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("unusable documents", func(t *testing.T) {
		oct := []byte(`{"keys":[{"kty":"oct","kid":"hmac","alg":"HS256","k":"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"}]}`)
		enc, err := jwkset.NewJWKFromKey(&rsaKey.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: "enc", USE: jwkset.UseEnc}})
		if err != nil {
			t.Fatal(err)
		}
		for name, body := range map[string][]byte{
			"not json":        []byte("<html>"),
			"no keys":         []byte(`{"keys":[]}`),
			"symmetric only":  oct,
			"encryption only": jwksJSON(t, enc),
			"broken key only": []byte(`{"keys":[{"kty":"RSA","kid":"x","n":"AQAB"}]}`),
			"too large":       append([]byte(`{"keys":[],"pad":"`), append([]byte(strings.Repeat("x", maxJWKSBytes)), '"', '}')...),
		} {
			t.Run(name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "jwks.json")
				if err := os.WriteFile(path, body, 0o600); err != nil {
					t.Fatal(err)
				}
				c := base
				c.JWKSFile = path
				_, err := New(context.Background(), Config{Method: MethodJWT, JWT: c})
				wantConfigError(t, err, KeyJWTJWKSFile)
			})
		}
		t.Run("bad keys are skipped when a good one remains", func(t *testing.T) {
			var set jwkset.JWKSMarshal
			if err := json.Unmarshal(oct, &set); err != nil {
				t.Fatal(err)
			}
			set.Keys = append(set.Keys, enc.Marshal(), keys[0].Marshal())
			raw, _ := json.Marshal(set)
			ks, err := parseKeySet(raw)
			if err != nil || ks.size != 1 {
				t.Fatalf("%v %v", ks, err)
			}
		})
	})

	t.Run("url answering 500", func(t *testing.T) {
		srv := newJWKSServer(t, keys...)
		srv.status.Store(http.StatusInternalServerError)
		c := base
		c.JWKSURL = srv.URL
		_, err := New(context.Background(), Config{Method: MethodJWT, JWT: c})
		wantConfigError(t, err, KeyJWTJWKSURL)
	})

	t.Run("url timing out", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		t.Cleanup(srv.Close)
		c := base
		c.JWKSURL = srv.URL
		c.FetchTimeout = 50 * time.Millisecond
		start := time.Now()
		_, err := New(context.Background(), Config{Method: MethodJWT, JWT: c})
		wantConfigError(t, err, KeyJWTJWKSURL)
		if time.Since(start) > 5*time.Second {
			t.Fatal("fetch timeout not applied")
		}
	})

	t.Run("redirect leaving https", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, "http://idp.example.com/jwks", nil)
		if defaultJWKSClient().CheckRedirect(req, nil) == nil {
			t.Fatal("redirect to plain http accepted")
		}
	})
}

func TestJWKSPeriodicRefresh(t *testing.T) {
	t.Parallel()
	keys := standardKeys(t)
	raw := jwksJSON(t, keys...)
	var loads atomic.Int32
	s := &keySource{
		load: func(context.Context) ([]byte, error) {
			if loads.Add(1)%2 == 0 {
				return nil, errors.New("transient")
			}
			return raw, nil
		},
		fetchTimeout: time.Second,
		refreshGap:   time.Hour,
		now:          time.Now,
	}
	if err := s.reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.start(5 * time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for loads.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	s.close()
	s.close() // idempotent
	if loads.Load() < 5 {
		t.Fatalf("only %d loads", loads.Load())
	}
	if s.current.Load() == nil {
		t.Fatal("failed reloads dropped the key set")
	}
	n := loads.Load()
	time.Sleep(30 * time.Millisecond)
	if loads.Load() != n {
		t.Fatal("refresher still running after Close")
	}
}
