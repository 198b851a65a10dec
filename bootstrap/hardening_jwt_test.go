package bootstrap

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rotatingJWKS serves a JWKS whose keys the test can change.
type rotatingJWKS struct {
	mu   sync.Mutex
	keys map[string]*ecdsa.PrivateKey
}

func (j *rotatingJWKS) add(t *testing.T, kid string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.keys == nil {
		j.keys = map[string]*ecdsa.PrivateKey{}
	}
	j.keys[kid] = key
}

func (j *rotatingJWKS) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var keys []any
	for kid, k := range j.keys {
		keys = append(keys, ecJWK(k, kid))
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
}

func (j *rotatingJWKS) sign(t *testing.T, kid, sub string) string {
	t.Helper()
	j.mu.Lock()
	key := j.keys[kid]
	j.mu.Unlock()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": "https://idp.test", "aud": "gw", "sub": sub,
		"exp": time.Now().Add(time.Hour).Unix()})
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// Finding 2: an unauthenticated request with a 1ns deadline and an unknown
// key id must not spend the on-demand JWKS reload: a token signed with a
// freshly rotated key is accepted at once afterwards.
func TestJWKSReloadIsNotStarvedByShortDeadlines(t *testing.T) {
	jwks := &rotatingJWKS{}
	jwks.add(t, "k1")
	idp := httptest.NewServer(jwks)
	t.Cleanup(idp.Close)
	rest, _ := startSecure(t, map[string]string{
		"FLUSS_GATEWAY__SECURITY__AUTHENTICATION": "jwt",
		"FLUSS_GATEWAY__SECURITY__JWT__ISSUER":    "https://idp.test",
		"FLUSS_GATEWAY__SECURITY__JWT__AUDIENCE":  "gw",
		"FLUSS_GATEWAY__SECURITY__JWT__JWKS_URL":  idp.URL + "/jwks",
	})
	url := "http://" + rest.Addr().String() + "/v1/clusters"
	c := &http.Client{Timeout: 5 * time.Second}
	status, _, body := send(t, c, "GET", url, "Authorization", "Bearer "+jwks.sign(t, "k1", "alice"))
	require.Equal(t, 200, status, body)

	jwks.add(t, "k2") // rotation at the issuer
	forged := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"sub": "mallory"})
	forged.Header["kid"] = "k2"
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	forgedTok, err := forged.SignedString(other)
	require.NoError(t, err)
	status, _, _ = send(t, c, "GET", url, "Authorization", "Bearer "+forgedTok, "X-Fluss-Request-Timeout", "1ns")
	assert.NotEqual(t, 200, status)

	ok := false
	for deadline := time.Now().Add(2 * time.Second); !ok && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		status, _, _ = send(t, c, "GET", url, "Authorization", "Bearer "+jwks.sign(t, "k2", "alice"))
		ok = status == 200
	}
	assert.True(t, ok, "a token of the rotated key is accepted within 2s, not after the 30s reload gap")
}
