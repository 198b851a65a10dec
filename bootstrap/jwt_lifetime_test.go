package bootstrap

import (
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 27, finding 6: a JWT valid for 100 years is refused (longer than
// gateway.security.jwt.max-lifetime, 24h by default), with or without iat;
// a token within the bound is accepted.
func TestJWTMaxLifetime(t *testing.T) {
	idp := newJWTIssuer(t)
	path := idp.jwksFile
	sign := func(claims jwt.MapClaims) string {
		claims["iss"], claims["aud"], claims["sub"] = "https://idp.test", "gw", "alice"
		return idp.sign(t, claims)
	}
	rest, _ := startSecure(t, map[string]string{
		"FLUSS_GATEWAY__SECURITY__AUTHENTICATION": "jwt",
		"FLUSS_GATEWAY__SECURITY__JWT__ISSUER":    "https://idp.test",
		"FLUSS_GATEWAY__SECURITY__JWT__AUDIENCE":  "gw",
		"FLUSS_GATEWAY__SECURITY__JWT__JWKS_FILE": path,
	})
	url := "http://" + rest.Addr().String() + "/v1/clusters"
	c := &http.Client{Timeout: 10 * time.Second}
	now := time.Now()
	century := now.AddDate(100, 0, 0).Unix()
	for name, tc := range map[string]struct {
		claims jwt.MapClaims
		want   int
	}{
		"100 years with iat":    {jwt.MapClaims{"iat": now.Unix(), "exp": century}, 401},
		"100 years without iat": {jwt.MapClaims{"exp": century}, 401},
		"old iat, long exp":     {jwt.MapClaims{"iat": now.Add(-time.Hour).Unix(), "exp": now.Add(24 * time.Hour).Unix()}, 401},
		"one hour":              {jwt.MapClaims{"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}, 200},
	} {
		status, _, body := send(t, c, "GET", url, "Authorization", "Bearer "+sign(tc.claims))
		assert.Equal(t, tc.want, status, "%s: %s", name, body)
		if tc.want == 401 {
			assert.Contains(t, body, "max-lifetime", name)
		}
	}
}

// Issue 27, finding 6: a principal name with bidirectional controls (it
// would display as another name in logs) is refused.
func TestPrincipalWithBidiControlsIsRefused(t *testing.T) {
	rest, _ := startSecure(t, map[string]string{"FLUSS_GATEWAY__SECURITY__AUTHENTICATION": "trusted-header"})
	url := "http://" + rest.Addr().String() + "/v1/clusters"
	c := &http.Client{Timeout: 10 * time.Second}
	status, _, body := send(t, c, "GET", url, "X-Forwarded-User", "alice")
	require.Equal(t, 200, status, body)
	for _, name := range []string{"ali\u202ece", "\u2066bob\u2069", "eve\u200f"} {
		status, _, body = send(t, c, "GET", url, "X-Forwarded-User", name)
		assert.Equal(t, 401, status, "%q: %s", name, body)
	}
}
