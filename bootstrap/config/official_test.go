package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOfficialGatewayKeySetLoads: a file with every key of the official
// gateway's newest conf/gateway.yaml (testdata/official-gateway-keys.yaml,
// its optional keys set too) starts this gateway unchanged: the new
// request-timeout name, gateway.id and gateway.host, and the named TLS
// profile the REST listener uses.
func TestOfficialGatewayKeySetLoads(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Options{Path: "testdata/official-gateway-keys.yaml"})
	require.NoError(t, err)
	assert.Equal(t, 30*time.Second, cfg.REST.RequestTimeout)
	assert.Equal(t, Identity{GatewayID: "gateway-production", Host: "192.0.2.10"}, cfg.Identity)
	assert.Equal(t, "gateway-1", cfg.InstanceID)
	assert.Equal(t, map[string]TLSProfile{"public": {CertificateFile: "/etc/fluss/tls/server.pem",
		PrivateKeyFile: "/etc/fluss/tls/server.key", HandshakeTimeout: 5 * time.Second}}, cfg.TLSProfiles)
	assert.Equal(t, "public", cfg.REST.TLS.Profile)
	assert.Equal(t, "/etc/fluss/tls/server.pem", cfg.REST.TLS.CertFile)
	assert.Equal(t, "/etc/fluss/tls/server.key", cfg.REST.TLS.KeyFile)
	assert.True(t, cfg.REST.TLS.Enabled())
	assert.Equal(t, []string{"127.0.0.1:9123"}, cfg.Clusters[0].BootstrapServers)

	// The dump names the new keys only and loads back to the same settings.
	dump := cfg.Redacted()
	assert.Contains(t, dump, "gateway.rest.request-timeout: \"30s\"")
	assert.NotContains(t, dump, KeyWriteRequestTimeout)
	assert.Contains(t, dump, "gateway.tls.profile.public.handshake-timeout: \"5s\"")
	again, err := Load(Options{Path: writeFile(t, dump)})
	require.NoError(t, err)
	assert.Equal(t, cfg.Settings(), again.Settings())
}

func TestRequestTimeoutAliasAndProfiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		file    string
		env     map[string]string
		wantErr string
		check   func(t *testing.T, c *Config)
	}{
		{name: "old name", file: "gateway.rest.write.request-timeout: 7s\n", check: func(t *testing.T, c *Config) {
			assert.Equal(t, 7*time.Second, c.REST.RequestTimeout)
		}},
		{name: "new name", file: "gateway.rest.request-timeout: 8s\n", check: func(t *testing.T, c *Config) {
			assert.Equal(t, 8*time.Second, c.REST.RequestTimeout)
		}},
		{name: "both, same value", file: "gateway.rest.request-timeout: 8s\ngateway.rest.write.request-timeout: 8s\n", check: func(t *testing.T, c *Config) {
			assert.Equal(t, 8*time.Second, c.REST.RequestTimeout)
		}},
		{name: "both, different values", file: "gateway.rest.request-timeout: 8s\ngateway.rest.write.request-timeout: 9s\n", wantErr: "set gateway.rest.request-timeout only"},
		{name: "old name from the environment", env: map[string]string{"FLUSS_GATEWAY__REST__WRITE__REQUEST_TIMEOUT": "6s"}, check: func(t *testing.T, c *Config) {
			assert.Equal(t, 6*time.Second, c.REST.RequestTimeout)
		}},
		{name: "profile from the environment", env: map[string]string{
			"FLUSS_GATEWAY__TLS__PROFILES": "edge", "FLUSS_GATEWAY__REST__TLS__PROFILE": "edge",
			"FLUSS_GATEWAY__TLS__PROFILE__EDGE__CERTIFICATE_FILE": "/c.pem", "FLUSS_GATEWAY__TLS__PROFILE__EDGE__PRIVATE_KEY_FILE": "/k.pem",
			"FLUSS_GATEWAY__TLS__PROFILE__EDGE__HANDSHAKE_TIMEOUT": "2s",
		}, check: func(t *testing.T, c *Config) {
			assert.Equal(t, "/c.pem", c.REST.TLS.CertFile)
			assert.Equal(t, 2*time.Second, c.REST.TLS.HandshakeTimeout)
		}},
		{name: "undeclared profile", file: "gateway.rest.tls.profile: nope\n", wantErr: "not declared in gateway.tls.profiles"},
		{name: "profile without key", file: "gateway.tls.profiles: a\ngateway.tls.profile.a.certificate-file: /c.pem\n", wantErr: "are both required"},
		{name: "option of an undeclared profile", file: "gateway.tls.profiles: a\ngateway.tls.profile.a.certificate-file: /c.pem\ngateway.tls.profile.a.private-key-file: /k.pem\ngateway.tls.profile.b.certificate-file: /c.pem\n", wantErr: "not declared"},
		{name: "unknown profile option", file: "gateway.tls.profile.a.cert: /c.pem\n", wantErr: "unknown configuration key"},
		{name: "profile and cert-file both", file: "gateway.tls.profiles: a\ngateway.tls.profile.a.certificate-file: /c.pem\ngateway.tls.profile.a.private-key-file: /k.pem\ngateway.rest.tls.profile: a\ngateway.rest.tls.cert-file: /x.pem\ngateway.rest.tls.key-file: /y.pem\n", wantErr: "use one"},
		{name: "bad handshake timeout", file: "gateway.tls.profiles: a\ngateway.tls.profile.a.certificate-file: /c.pem\ngateway.tls.profile.a.private-key-file: /k.pem\ngateway.tls.profile.a.handshake-timeout: 5\n", wantErr: "handshake-timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := loadCase(t, tc.file, tc.env, tc.wantErr)
			if cfg == nil {
				return
			}
			tc.check(t, cfg)
		})
	}
}
