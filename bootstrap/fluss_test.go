package bootstrap

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/lookup"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
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

// Issue 21: the writer's buffer is sized from the data-plane memory budget,
// which counts the writer's copy of the rows, so that budget and writer
// have one bound rather than budget plus 64 MiB.
func TestWriterBufferMemoryFollowsTheBudget(t *testing.T) {
	tests := []struct {
		name   string
		budget *membudget.Budget
		want   int64
	}{
		{name: "no budget: the writer's default", budget: nil, want: 0},
		{name: "the default budget", budget: membudget.New(64<<20, 0), want: 64 << 20},
		{name: "a chart-sized budget", budget: membudget.New(115<<20, 0), want: 115 << 20},
		{name: "a tiny budget keeps a floor", budget: membudget.New(2<<20, 0), want: minWriterBufferMemory},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, writerBufferMemory(tc.budget))
		})
	}
}

// TestClusterTuningDefaults: the configuration's defaults of the writer and
// lookup tuning keys are the Fluss adapter's own, and a configured 0 reaches
// the adapter as its "none" (-1), not as "default".
func TestClusterTuningDefaults(t *testing.T) {
	fc := flussConfig(config.DefaultCluster("default"), nil)
	assert.Equal(t, writer.DefaultLinger, fc.Writer.Linger)
	assert.Equal(t, writer.DefaultKvLinger, fc.Writer.KvLinger)
	assert.Equal(t, writer.DefaultLingerAfterInFlight, fc.Writer.LingerAfterInFlight)
	assert.Equal(t, writer.DefaultLanes, fc.Writer.Lanes)
	assert.Equal(t, writer.DefaultMaxInFlightPerBucket, fc.Writer.MaxInFlightPerBucket)
	assert.Equal(t, writer.DefaultBatchSize, fc.Writer.BatchSize)
	assert.Equal(t, lookup.DefaultMaxInFlightPerServer, fc.Lookup.MaxInFlightPerServer)
	assert.Equal(t, lookup.DefaultMaxKeysPerRequest, fc.Lookup.MaxKeysPerRequest)

	cl := config.DefaultCluster("default")
	cl.WriteLinger, cl.WriteKvLinger, cl.WriteLingerAfterInFlight, cl.LookupMaxInFlight = 0, 0, 0, 0
	fc = flussConfig(cl, nil)
	assert.Equal(t, time.Duration(-1), fc.Writer.Linger)
	assert.Equal(t, time.Duration(-1), fc.Writer.KvLinger)
	assert.Equal(t, -1, fc.Writer.LingerAfterInFlight)
	assert.Equal(t, -1, fc.Lookup.MaxInFlightPerServer)
}
