package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The listener-hardening keys of issue 14: defaults, overrides, validation.
func TestListenerHardeningKeys(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Options{})
	require.NoError(t, err)
	assert.Equal(t, int64(1<<20), cfg.REST.MaxMetadataRequestBytes)
	assert.Equal(t, 30*time.Second, cfg.REST.WriteTimeout)
	assert.Equal(t, 60*time.Second, cfg.REST.IdleTimeout)
	assert.Equal(t, 256, cfg.REST.MaxConnectionsPerAddress)
	assert.Equal(t, 2*time.Second, cfg.REST.LingerTimeout)
	assert.Equal(t, 10, cfg.Security.MaxFailedLogins)
	assert.Equal(t, time.Minute, cfg.Security.FailedLoginWindow)

	cfg, err = loadFile(t, "gateway.rest.metadata.max-request-bytes: 64KiB\ngateway.rest.write-timeout: 5s\n"+
		"gateway.rest.idle-timeout: 500ms\ngateway.rest.max-connections-per-address: 8\ngateway.rest.linger-timeout: 1s\n"+
		"gateway.security.password.max-failed-logins: 0\ngateway.security.password.failed-login-window: 10m\n")
	require.NoError(t, err)
	assert.Equal(t, int64(64<<10), cfg.REST.MaxMetadataRequestBytes)
	assert.Equal(t, 5*time.Second, cfg.REST.WriteTimeout)
	assert.Equal(t, 500*time.Millisecond, cfg.REST.IdleTimeout)
	assert.Equal(t, 8, cfg.REST.MaxConnectionsPerAddress)
	assert.Equal(t, time.Second, cfg.REST.LingerTimeout)
	assert.Equal(t, 0, cfg.Security.MaxFailedLogins, "0 turns the throttle off")
	assert.Equal(t, 10*time.Minute, cfg.Security.FailedLoginWindow)
	assert.Contains(t, cfg.Redacted(), `gateway.rest.response-write-timeout: "5s"`, "the dump shows the new name")
	assert.NotContains(t, cfg.Redacted(), "gateway.rest.write-timeout")

	for _, c := range []struct{ yaml, want string }{
		{"gateway.rest.metadata.max-request-bytes: 0\n", "gateway.rest.metadata.max-request-bytes: invalid byte size"},
		{"gateway.rest.max-connections-per-address: 0\n", "gateway.rest.max-connections-per-address must be greater than zero"},
		{"gateway.rest.write-timeout: 0s\n", "gateway.rest.write-timeout"},
		{"gateway.rest.response-write-timeout: 0s\n", "gateway.rest.response-write-timeout"},
		{"gateway.rest.response-write-timeout: 5s\ngateway.rest.write-timeout: 6s\n", "gateway.rest.write-timeout"},
		{"gateway.rest.idle-timeout: 1 parsec\n", "gateway.rest.idle-timeout"},
		{"gateway.rest.linger-timeout: -1s\n", "gateway.rest.linger-timeout"},
		{"gateway.security.password.failed-login-window: 2d\n", "gateway.security.password.failed-login-window must be between 1ms and 24h"},
	} {
		_, err := loadFile(t, c.yaml)
		require.Error(t, err, c.yaml)
		assert.Contains(t, err.Error(), c.want)
	}
}
