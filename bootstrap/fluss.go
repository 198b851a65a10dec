package bootstrap

import (
	"context"
	"log/slog"

	"go.uber.org/fx"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/telemetry"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// FlussClusterFactory is the ClusterFactory of ClustersModule: it opens the
// Fluss adapter (adapters/fluss) for one cluster whose
// `gateway.cluster.<id>.backend` is fluss (the default), observed by the
// telemetry adapter. In identity mode service it performs no I/O: an
// unreachable cluster or wrong credentials surface as 503 `unavailable` on
// requests, never as a failed start. In identity mode user it probes, within
// the start context and `connect-timeout`, that the cluster accepts a SASL
// authorization id, and fails the start when the cluster refuses it (Fluss
// 0.9.1) or refuses the service account; an unreachable cluster is logged and
// probed again on first use (user requests answer 503 until the probe
// passes).
//
// Each cluster's writer buffer (adapters/fluss/writer Options.BufferMemory)
// is sized from the data-plane memory budget when there is one (see
// writerBufferMemory).
func FlussClusterFactory(p flussFactoryParams) ClusterFactory {
	return func(ctx context.Context, cluster config.Cluster, log *slog.Logger) (ClusterBackend, error) {
		cfg := flussConfig(cluster, p.Instrumentation)
		cfg.Writer.BufferMemory = writerBufferMemory(p.Budget)
		return fluss.Open(ctx, cfg, log)
	}
}

// flussFactoryParams are FlussClusterFactory's dependencies; the budget is
// absent in graphs without the REST module.
type flussFactoryParams struct {
	fx.In
	Instrumentation *telemetry.Instrumentation
	Budget          *membudget.Budget `optional:"true"`
}

// minWriterBufferMemory is the smallest writer buffer writerBufferMemory
// gives: a request larger than the budget still runs once it runs alone
// (membudget.Charge), and the writer must not refuse it as too large.
const minWriterBufferMemory = 16 << 20

// writerBufferMemory is the writer buffer of a process whose data-plane
// memory budget is b: the budget's size (at least minWriterBufferMemory),
// so that the writer's bound is the budget's rather than a second one on
// top of it. The budget already counts the writer's copy of every row a
// JSON write hands it (adapters/http records.go, chargeWriterCopy), so
// budget and writer together hold at most the budget, not budget plus
// buffer. 0 (the writer's default) without a budget.
func writerBufferMemory(b *membudget.Budget) int64 {
	if b == nil {
		return 0
	}
	return max(b.Capacity(), minWriterBufferMemory)
}

// flussConfig maps one cluster's configuration to the Fluss adapter's.
func flussConfig(cluster config.Cluster, inst *telemetry.Instrumentation) fluss.Config {
	cfg := fluss.Config{
		ID:               cluster.ID,
		BootstrapServers: cluster.BootstrapServers,
		ConnectTimeout:   cluster.ConnectTimeout,
		IdentityMode:     fluss.IdentityMode(cluster.IdentityMode),
		MaxUserSessions:  cluster.ConnectionMax,
		UserIdleTimeout:  cluster.ConnectionIdleTimeout,
		ClientVersion:    Version,
	}
	// gateway.cluster.<id>.write.auto-create-partitions (default true): when
	// false, rows for a missing partition fail with partition_not_found.
	cfg.Writer.DisableDynamicPartitions = !cluster.AutoCreatePartitions
	cfg.Writer.MaxThrottle = cluster.MaxThrottle
	// Writer and lookup tuning (gateway.cluster.<id>.write.* and lookup.*):
	// the adapter's options read 0 as "default", so a configured 0 ("never
	// linger", "always linger", "no bound") becomes their -1.
	cfg.Writer.Linger = zeroAsNone(cluster.WriteLinger)
	cfg.Writer.KvLinger = zeroAsNone(cluster.WriteKvLinger)
	cfg.Writer.LingerAfterInFlight = zeroAsNone(cluster.WriteLingerAfterInFlight)
	cfg.Writer.Lanes = cluster.WriteLanes
	cfg.Writer.MaxInFlightPerBucket = cluster.WriteMaxInFlightPerBucket
	cfg.Writer.BatchSize = int(cluster.WriteBatchSize)
	cfg.Lookup.MaxInFlightPerServer = zeroAsNone(cluster.LookupMaxInFlight)
	cfg.Lookup.MaxKeysPerRequest = cluster.LookupMaxKeysPerRequest
	if cluster.EffectiveSecurityProtocol() == config.ProtocolSASL {
		cfg.Username = cluster.ServiceAccount
		cfg.Password = cluster.ServiceSecret.Reveal()
	}
	if inst != nil {
		cfg.Hooks = []any{inst.FlussHooks(cluster.ID)}
		hooks := inst.WriterHooks(cluster.ID)
		cfg.Writer.Metrics, cfg.Writer.Pressure, cfg.Writer.Tracer = hooks, hooks, hooks
	}
	return cfg
}

// zeroAsNone maps a configured 0 to the -1 the Fluss adapter's options use
// for "none" (their 0 means "the default").
func zeroAsNone[T ~int | ~int64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}
