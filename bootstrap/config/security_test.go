package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSecurityKeysLoad(t *testing.T) {
	t.Parallel()
	cfg, err := loadFile(t, `
gateway.security.authentication: jwt
gateway.security.realm: acme
gateway.security.jwt.issuer: https://idp.example.com
gateway.security.jwt.audience: gateway
gateway.security.jwt.jwks-url: https://user:pw@idp.example.com/jwks?key=k
gateway.security.jwt.principal-claim: email
gateway.security.jwt.algorithms: RS256, ES256
gateway.security.jwt.clock-skew: 1m
gateway.security.act-as.header: x-on-behalf-of
gateway.security.act-as.allowed-principals: ingest, etl
gateway.security.quota.requests-per-second: 50
gateway.security.quota.bytes-per-second: 1MiB
gateway.security.quota.per-table: true
gateway.rest.listen: 0.0.0.0:8443
gateway.rest.tls.cert-file: /etc/gw/tls.crt
gateway.rest.tls.key-file: /etc/gw/tls.key
gateway.rest.tls.min-version: "1.3"
gateway.rest.tls.client-ca-file: /etc/gw/ca.crt
gateway.rest.tls.client-auth: request
gateway.rest.tls.reload-interval: 5s
gateway.security.password.cache-ttl: 0
`)
	require.NoError(t, err)
	s := cfg.Security
	assert.Equal(t, AuthJWT, s.Authentication)
	assert.Equal(t, "acme", s.Realm)
	assert.Equal(t, []string{"RS256", "ES256"}, s.JWT.Algorithms)
	assert.Equal(t, time.Minute, s.JWT.ClockSkew)
	assert.Equal(t, 15*time.Minute, s.JWT.RefreshInterval, "default")
	assert.Equal(t, []string{"ingest", "etl"}, s.ActAs.AllowedPrincipals)
	assert.Equal(t, Quota{RequestsPerSecond: 50, BytesPerSecond: 1 << 20, PerTable: true, MaxPrincipals: 10_000}, s.Quota)
	assert.Negative(t, s.PasswordCacheTTL, "0 disables the cache")
	assert.Equal(t, TLS{CertFile: "/etc/gw/tls.crt", KeyFile: "/etc/gw/tls.key", MinVersion: "1.3",
		ClientCAFile: "/etc/gw/ca.crt", ClientAuth: ClientAuthRequest, ReloadInterval: 5 * time.Second,
		HandshakeTimeout: DefaultTLSHandshakeTimeout}, cfg.REST.TLS)
	assert.NotContains(t, cfg.Redacted(), "pw@", "URL credentials are redacted in the dump")
	assert.Contains(t, cfg.Redacted(), `gateway.security.password.cache-ttl: "0"`)
	assert.NotContains(t, cfg.Warnings(), "has no TLS")

	again, err := loadFile(t, cfg.Redacted())
	require.NoError(t, err, cfg.Redacted())
	assert.Equal(t, cfg.Redacted(), again.Redacted())
}

func TestSecurityValidationNamesKeys(t *testing.T) {
	t.Parallel()
	tls := "gateway.rest.tls.cert-file: /c\ngateway.rest.tls.key-file: /k\n"
	cases := []validationCase{
		{"jwt without issuer", "gateway.security.authentication: jwt\ngateway.security.jwt.audience: a\ngateway.security.jwt.jwks-file: /j\n", "gateway.security.jwt.issuer is required"},
		{"jwt without audience", "gateway.security.authentication: jwt\ngateway.security.jwt.issuer: i\ngateway.security.jwt.jwks-file: /j\n", "gateway.security.jwt.audience is required"},
		{"jwt two sources", "gateway.security.authentication: jwt\ngateway.security.jwt.issuer: i\ngateway.security.jwt.audience: a\ngateway.security.jwt.jwks-file: /j\ngateway.security.jwt.jwks-url: https://x/j\n", "set only one of gateway.security.jwt.jwks-file and gateway.security.jwt.jwks-url"},
		{"jwt no source", "gateway.security.authentication: jwt\ngateway.security.jwt.issuer: i\ngateway.security.jwt.audience: a\n", "one of gateway.security.jwt.jwks-url and gateway.security.jwt.jwks-file is required"},
		{"jwt plain http", "gateway.security.authentication: jwt\ngateway.security.jwt.issuer: i\ngateway.security.jwt.audience: a\ngateway.security.jwt.jwks-url: http://idp.example.com/j\n", "gateway.security.jwt.jwks-url: plain http is accepted only for loopback hosts"},
		{"jwt skew", "gateway.security.authentication: jwt\ngateway.security.jwt.issuer: i\ngateway.security.jwt.audience: a\ngateway.security.jwt.jwks-file: /j\ngateway.security.jwt.clock-skew: 11m\n", "gateway.security.jwt.clock-skew must not exceed 10m"},
		{"mtls without TLS", "gateway.security.authentication: mtls\n", "gateway.security.authentication mtls requires TLS on the REST listener"},
		{"mtls without client auth", "gateway.security.authentication: mtls\n" + tls + "gateway.rest.tls.client-ca-file: /ca\n", "gateway.rest.tls.client-auth to request or require"},
		{"principal field", "gateway.security.mtls.principal-field: serial\n", "gateway.security.mtls.principal-field: expected cn, subject"},
		{"bad cidr", "gateway.security.authentication: trusted-header\ngateway.security.trusted-header.trusted-cidrs: 10.0.0.0/8,proxy\n", `gateway.security.trusted-header.trusted-cidrs: "proxy" is not a CIDR`},
		{"act-as header", "gateway.security.act-as.header: Authorization\n", "gateway.security.act-as.header must be a legal HTTP header name"},
		{"act-as same as trusted header", "gateway.security.authentication: trusted-header\ngateway.security.act-as.header: X-Forwarded-User\n", "gateway.security.act-as.header must differ from gateway.security.trusted-header.name"},
		{"act-as principal", "gateway.security.act-as.allowed-principals: \"a,b\\x01c\"\n", "gateway.security.act-as.allowed-principals"},
		{"realm", "gateway.security.realm: 'a\"b'\n", "gateway.security.realm must be printable ASCII"},
		{"quota principals", "gateway.security.quota.max-principals: 0\n", "gateway.security.quota.max-principals must be greater than zero"},
		{"cert without key", "gateway.rest.tls.cert-file: /c\n", "gateway.rest.tls.cert-file and gateway.rest.tls.key-file must be set together"},
		{"min version", tls + "gateway.rest.tls.min-version: \"1.1\"\n", "gateway.rest.tls.min-version: expected 1.2 or 1.3"},
		{"client auth without CA", tls + "gateway.rest.tls.client-auth: require\n", "gateway.rest.tls.client-auth require requires gateway.rest.tls.client-ca-file"},
		{"CA without TLS", "gateway.rest.tls.client-ca-file: /ca\n", "gateway.rest.tls.client-ca-file requires gateway.rest.tls.cert-file"},
		{"cache ttl", "gateway.security.password.cache-ttl: 2d\n", "gateway.security.password.cache-ttl must not exceed 24h"},
		{"user mode under mtls ok", "gateway.security.authentication: mtls\n" + tls + "gateway.rest.tls.client-ca-file: /ca\ngateway.rest.tls.client-auth: require\n" +
			"gateway.cluster.default.connection.identity-mode: user\ngateway.cluster.default.connection.service.account: svc\ngateway.cluster.default.connection.service.secret: pw\n", ""},
	}
	runValidationCases(t, cases)
}

func TestSecurityEnvironmentVariables(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Options{Env: map[string]string{
		"FLUSS_GATEWAY__SECURITY__AUTHENTICATION":                "trusted-header",
		"FLUSS_GATEWAY__SECURITY__TRUSTED_HEADER__TRUSTED_CIDRS": "10.1.0.0/16, 192.168.1.7",
		"FLUSS_GATEWAY__SECURITY__TRUST__ALLOW_NON_LOOPBACK":     "true",
		"FLUSS_GATEWAY__REST__TLS__CLIENT_AUTH":                  "none",
	}})
	require.NoError(t, err)
	assert.Equal(t, []string{"10.1.0.0/16", "192.168.1.7"}, cfg.Security.TrustedHeaderCIDRs)
	assert.True(t, cfg.Security.TrustAllowNonLoopback)
}
