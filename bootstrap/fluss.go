package bootstrap

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
)

// OpenFlussCluster is THE place where the Fluss adapter (adapters/fluss) is
// plugged into the gateway: ClustersModule provides it as the ClusterFactory
// for every cluster whose `gateway.cluster.<id>.backend` is fluss (the
// default). Wire it by replacing this body with a call that opens the
// adapter's per-cluster client from cluster (BootstrapServers,
// ConnectTimeout, EffectiveSecurityProtocol, ServiceAccount,
// ServiceSecret.Reveal(), IdentityMode, ConnectionMax,
// ConnectionIdleTimeout) and returns a value with
// Session(ctx, domain.Principal) (domain.Session, error) and
// Close(ctx) error.
//
// Until then it fails startup with a message naming the key, so a gateway
// never pretends to serve a cluster it cannot reach.
func OpenFlussCluster(_ context.Context, cluster config.Cluster, _ *slog.Logger) (ClusterBackend, error) {
	return nil, fmt.Errorf("%s is %q but the Fluss adapter is not wired into bootstrap yet (bootstrap/fluss.go: OpenFlussCluster); "+
		"set it to %q for an in-memory development catalog",
		config.ClusterKey(cluster.ID, "backend"), config.BackendFluss, config.BackendMemory)
}
