package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGuardValidationNamesKeys(t *testing.T) {
	t.Parallel()
	cases := []validationCase{
		{"short token key", "gateway.security.token-key: short\n", "gateway.security.token-key must have at least 32 bytes"},
		{"token key ok", "gateway.security.token-key: 0123456789abcdef0123456789abcdef\n", ""},
		{"short token", "gateway.security.authentication: token\ngateway.security.tokens: abc:alice\n", "token entry 0 is 3 bytes, shorter than gateway.security.token.min-length (16)"},
		{"short token not echoed", "gateway.security.authentication: token\ngateway.security.tokens: x-0123456789abcdef:bob, s3cr:alice\n", "token entry 1 is 4 bytes"},
		{"digest has no length", "gateway.security.authentication: token\ngateway.security.tokens: sha256:" + strings.Repeat("ab", 32) + ":alice\n", ""},
		{"min length lowered", "gateway.security.authentication: token\ngateway.security.tokens: abc:alice\ngateway.security.token.min-length: 3\n", ""},
		{"bad origin", "gateway.rest.cors.allowed-origins: https://a.example/path\n", "gateway.rest.cors.allowed-origins: \"https://a.example/path\" is not an origin"},
		{"origins ok", "gateway.rest.cors.allowed-origins: https://a.example, http://localhost:3000\n", ""},
		{"lower-case method", "gateway.rest.cors.allowed-methods: get\n", "gateway.rest.cors.allowed-methods: \"get\" is not an HTTP method"},
		{"host with port", "gateway.security.trust.allowed-hosts: localhost:8080\n", "gateway.security.trust.allowed-hosts: \"localhost:8080\" is not a host name"},
		{"hosts ok", "gateway.security.trust.allowed-hosts: localhost, gw.internal, ::1, [::1]\n", ""},
		{"min length zero", "gateway.security.token.min-length: 0\n", "gateway.security.token.min-length must be between 1 and 1024"},
	}
	runValidationCases(t, cases)
}

func TestTokenKeyRedactedInDump(t *testing.T) {
	t.Parallel()
	cfg, err := loadFile(t, "gateway.security.token-key: 0123456789abcdef0123456789abcdef\n")
	require.NoError(t, err)
	assert.Equal(t, "0123456789abcdef0123456789abcdef", cfg.Security.Guard.TokenKey.Reveal())
	var dump string
	for _, e := range globalEntries {
		if e.key == KeyTokenKey {
			dump = e.render(cfg)
		}
	}
	assert.Equal(t, Redacted, dump)
}

// guardSample gives TestEveryKeyHasAWorkingEnvironmentVariable a file and an
// environment value for the keys of guard.go, nil for other keys.
func guardSample(key string) []string {
	switch key {
	case KeyTokenKey:
		return []string{"file-value-0123456789abcdef012345", "env-value-0123456789abcdef0123456"}
	case KeyTokenMinLength:
		return []string{"20", "30"}
	case KeyCORSAllowedOrigins:
		return []string{"https://a.example", "https://b.example"}
	case KeyCORSAllowedMethods:
		return []string{"GET", "POST"}
	case KeyJWTMaxLifetime:
		return []string{"1h", "2h"}
	case KeyCORSMaxAge:
		return []string{"1m", "2m"}
	}
	return nil
}
