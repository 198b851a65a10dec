package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIdempotencyConfig(t *testing.T) {
	cfg, err := Load(Options{Env: map[string]string{}})
	require.NoError(t, err)
	assert.Equal(t, DefaultIdempotency(), cfg.Idempotency)
	assert.True(t, cfg.Idempotency.Enabled)
	assert.Equal(t, 24*time.Hour, cfg.Idempotency.Window)

	for _, tc := range []struct {
		env  map[string]string
		fail string
	}{
		{env: map[string]string{EnvVar(KeyIdempotencyWindow): "30s"}, fail: KeyIdempotencyWindow},
		{env: map[string]string{EnvVar(KeyIdempotencyWindow): "8d"}, fail: KeyIdempotencyWindow},
		{env: map[string]string{EnvVar(KeyIdempotencyTable): ""}, fail: KeyIdempotencyTable},
		{env: map[string]string{EnvVar(KeyIdempotencyBuckets): "5000"}, fail: KeyIdempotencyBuckets},
		{env: map[string]string{EnvVar(KeyIdempotencyWindow): "1h", EnvVar(KeyIdempotencyLease): "10s", EnvVar(KeyIdempotencyDatabase): "ops"}},
		{env: map[string]string{EnvVar(KeyIdempotencyEnabled): "false", EnvVar(KeyIdempotencyWindow): "30s"}},
	} {
		cfg, err := Load(Options{Env: tc.env})
		if tc.fail != "" {
			require.Error(t, err, "%v", tc.env)
			assert.Contains(t, err.Error(), tc.fail)
			continue
		}
		require.NoError(t, err, "%v", tc.env)
		if tc.env[EnvVar(KeyIdempotencyDatabase)] == "ops" {
			assert.Equal(t, Idempotency{Enabled: true, Database: "ops", Table: "idempotency_keys", Window: time.Hour, Lease: 10 * time.Second}, cfg.Idempotency)
		}
	}
}
