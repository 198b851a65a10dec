package bootstrap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
)

func TestFlussConfigAutoCreatePartitions(t *testing.T) {
	cases := []struct {
		name        string
		env         map[string]string
		wantDisable bool
	}{
		{name: "default creates partitions", wantDisable: false},
		{name: "enabled", env: map[string]string{"FLUSS_GATEWAY__CLUSTER__DEFAULT__WRITE__AUTO_CREATE_PARTITIONS": "true"}, wantDisable: false},
		{name: "disabled", env: map[string]string{"FLUSS_GATEWAY__CLUSTER__DEFAULT__WRITE__AUTO_CREATE_PARTITIONS": "false"}, wantDisable: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(config.Options{Env: tc.env})
			require.NoError(t, err)
			cl, ok := cfg.Cluster("default")
			require.True(t, ok)
			fc := flussConfig(cl, nil)
			assert.Equal(t, tc.wantDisable, fc.Writer.DisableDynamicPartitions)
			assert.Equal(t, "default", fc.ID)
		})
	}
}
