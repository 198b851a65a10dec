package identity

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func TestNewValidation(t *testing.T) {
	t.Parallel()
	good := hash(t, "pw")
	cases := []struct {
		name    string
		cfg     Config
		key     string
		secrets []string
	}{
		{"unknown method", Config{Method: "kerberos"}, KeyAuthentication, nil},
		{"bad realm", Config{Realm: `a"b`}, KeyRealm, nil},
		{"password without users", Config{Method: MethodPassword}, KeyUsers, nil},
		{"password clear text instead of hash", Config{Method: MethodPassword, Users: map[string]string{"alice": "hunter2"}}, KeyUsers, []string{"hunter2"}},
		{"password bcrypt cost too high", Config{Method: MethodPassword, Users: map[string]string{"a": "$2a$17$" + strings.Repeat("a", 53)}}, KeyUsers, nil},
		{"password user with colon", Config{Method: MethodPassword, Users: map[string]string{"a:b": good}}, KeyUsers, nil},
		{"password cache ttl", Config{Method: MethodPassword, Users: map[string]string{"a": good}, PasswordCacheTTL: 1 << 62}, KeyPasswordCacheTTL, nil},
		{"token without tokens", Config{Method: MethodToken}, KeyTokens, nil},
		{"token clear text key", Config{Method: MethodToken, Tokens: map[string]string{"my-plain-token": "alice"}}, KeyTokens, []string{"my-plain-token"}},
		{"token bad principal", Config{Method: MethodToken, Tokens: map[string]string{HashToken("t"): ""}}, KeyTokens, nil},
		{"trusted header bad name", Config{Method: MethodTrustedHeader, TrustedHeader: TrustedHeaderConfig{Name: "x user"}}, KeyTrustedHeaderName, nil},
		{"trusted header authorization", Config{Method: MethodTrustedHeader, TrustedHeader: TrustedHeaderConfig{Name: "authorization"}}, KeyTrustedHeaderName, nil},
		{"trusted header bad cidr", Config{Method: MethodTrustedHeader, TrustedHeader: TrustedHeaderConfig{TrustedCIDRs: []string{"10.0.0.0/33"}}}, KeyTrustedHeaderCIDRs, nil},
		{"mtls bad field", Config{Method: MethodMTLS, MTLS: MTLSConfig{PrincipalField: "serial"}}, KeyMTLSPrincipalField, nil},
		{"jwt no issuer", Config{Method: MethodJWT, JWT: JWTConfig{Audience: "a", JWKSFile: "x"}}, KeyJWTIssuer, nil},
		{"jwt no audience", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", JWKSFile: "x"}}, KeyJWTAudience, nil},
		{"jwt no jwks", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a"}}, KeyJWTJWKSURL, nil},
		{"jwt both jwks", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a", JWKSFile: "x", JWKSURL: "https://idp/jwks"}}, KeyJWTJWKSFile, nil},
		{"jwt plain http remote", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a", JWKSURL: "http://idp.example.com/jwks"}}, KeyJWTJWKSURL, nil},
		{"jwt url with credentials", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a", JWKSURL: "https://u:p@idp/jwks"}}, KeyJWTJWKSURL, nil},
		{"jwt relative url", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a", JWKSURL: "/jwks"}}, KeyJWTJWKSURL, nil},
		{"jwt hs256", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a", JWKSFile: "x", Algorithms: []string{"RS256", "HS256"}}}, KeyJWTAlgorithms, nil},
		{"jwt none", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a", JWKSFile: "x", Algorithms: []string{"none"}}}, KeyJWTAlgorithms, nil},
		{"jwt unknown alg", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a", JWKSFile: "x", Algorithms: []string{"RS1"}}}, KeyJWTAlgorithms, nil},
		{"jwt negative skew", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a", JWKSFile: "x", ClockSkew: -1}}, KeyJWTClockSkew, nil},
		{"jwt huge skew", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a", JWKSFile: "x", ClockSkew: 1 << 50}}, KeyJWTClockSkew, nil},
		{"jwt refresh interval", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a", JWKSFile: "x", RefreshInterval: 1}}, KeyJWTRefreshInterval, nil},
		{"jwt fetch timeout", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a", JWKSFile: "x", FetchTimeout: -1}}, KeyJWTFetchTimeout, nil},
		{"jwt missing file", Config{Method: MethodJWT, JWT: JWTConfig{Issuer: "i", Audience: "a", JWKSFile: "/nonexistent/jwks.json"}}, KeyJWTJWKSFile, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New(context.Background(), tc.cfg)
			if a != nil {
				t.Fatal("authenticator returned with an error")
			}
			wantConfigError(t, err, tc.key, tc.secrets...)
		})
	}
	t.Run("all problems reported", func(t *testing.T) {
		_, err := New(context.Background(), Config{Method: MethodJWT, Realm: "\n"})
		for _, key := range []string{KeyRealm, KeyJWTIssuer, KeyJWTAudience, KeyJWTJWKSURL} {
			if !strings.Contains(err.Error(), key) {
				t.Errorf("%q misses %s", err, key)
			}
		}
	})
}

func TestParseUsers(t *testing.T) {
	t.Parallel()
	h := hash(t, "stored")
	users, err := ParseUsers(" alice:clear-pw , bob:bcrypt:" + h + ",, carol:a:b:c ")
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 3 || users["bob"] != h {
		t.Fatalf("users %v", users)
	}
	for user, pw := range map[string]string{"alice": "clear-pw", "bob": "stored", "carol": "a:b:c"} {
		if bcrypt.CompareHashAndPassword([]byte(users[user]), []byte(pw)) != nil {
			t.Fatalf("%s: password does not verify", user)
		}
	}
	a := mustNew(t, Config{Method: MethodPassword, Users: users})
	if p, err := a.Authenticate(context.Background(), request("", "Authorization", basic("carol", "a:b:c"))); err != nil || p.Name != "carol" {
		t.Fatalf("%+v %v", p, err)
	}
	if u, err := ParseUsers(""); err != nil || len(u) != 0 {
		t.Fatalf("empty: %v %v", u, err)
	}
	for _, raw := range []string{
		"alice",                       // no separator
		":hunter2",                    // empty principal
		"alice:",                      // empty secret
		"alice:hunter2,alice:hunter3", // duplicate
		"alice:bcrypt:$1$hunter2",     // malformed hash
		"alice:" + strings.Repeat("h", 73) + "hunter2", // beyond bcrypt's limit
	} {
		_, err := ParseUsers(raw)
		wantConfigError(t, err, KeyUsers, "hunter2", "hunter3")
	}
}

func TestParseTokens(t *testing.T) {
	t.Parallel()
	d := HashToken("hashed-token")
	tokens, err := ParseTokens("plain-token:alice, sha256:" + strings.ToUpper(d) + ":bob, with:colon:carol")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{HashToken("plain-token"): "alice", d: "bob", HashToken("with:colon"): "carol"}
	if len(tokens) != len(want) {
		t.Fatalf("tokens %v", tokens)
	}
	for k, v := range want {
		if tokens[k] != v {
			t.Fatalf("tokens %v, want %v", tokens, want)
		}
	}
	a := mustNew(t, Config{Method: MethodToken, Tokens: tokens})
	for tok, who := range map[string]string{"plain-token": "alice", "hashed-token": "bob", "with:colon": "carol"} {
		if p, err := a.Authenticate(context.Background(), request("", "Authorization", "Bearer "+tok)); err != nil || p.Name != who {
			t.Fatalf("%s: %+v %v", who, p, err)
		}
	}
	for _, raw := range []string{
		"sekrit-token",                  // no principal
		"sekrit-token:",                 // empty principal
		":alice",                        // empty token
		"sekrit-token:a,sekrit-token:b", // duplicate
		"sha256:" + HashToken("sekrit-token") + ":a,sekrit-token:b", // duplicate across forms
		"sha256:abc:alice", // short digest
		"sha256:" + strings.Repeat("z", 64) + ":alice", // not hex
	} {
		_, err := ParseTokens(raw)
		wantConfigError(t, err, KeyTokens, "sekrit-token")
	}
}

func TestSplitList(t *testing.T) {
	t.Parallel()
	got := SplitList(" a, ,b ,c,")
	if strings.Join(got, "|") != "a|b|c" {
		t.Fatalf("%q", got)
	}
	if SplitList("") != nil {
		t.Fatal("empty list")
	}
}
