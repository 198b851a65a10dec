package bootstrap

import (
	"context"
	"log/slog"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/telemetry"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
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
func FlussClusterFactory(inst *telemetry.Instrumentation) ClusterFactory {
	return func(ctx context.Context, cluster config.Cluster, log *slog.Logger) (ClusterBackend, error) {
		return openFlussCluster(ctx, cluster, log, inst)
	}
}

func openFlussCluster(ctx context.Context, cluster config.Cluster, log *slog.Logger, inst *telemetry.Instrumentation) (ClusterBackend, error) {
	return fluss.Open(ctx, flussConfig(cluster, inst), log)
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
