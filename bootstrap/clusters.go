package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"go.uber.org/fx"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/memory"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// ClusterBackend is one opened cluster: it hands out a session per principal
// and releases its connections on Close.
type ClusterBackend interface {
	Session(ctx context.Context, p domain.Principal) (domain.Session, error)
	Close(ctx context.Context) error
}

// ClusterFactory opens the backend of one configured cluster whose
// `gateway.cluster.<id>.backend` is fluss. It runs during startup with the
// start context; an error fails startup. The default is
// FlussClusterFactory (bootstrap/fluss.go); tests may replace it with
// fx.Decorate.
type ClusterFactory func(ctx context.Context, cluster config.Cluster, log *slog.Logger) (ClusterBackend, error)

// ClustersModule provides domain.Clusters over every configured cluster:
// fluss backends through the ClusterFactory, memory backends in process.
var ClustersModule = fx.Module("clusters",
	fx.Provide(
		FlussClusterFactory,
		fx.Annotate(newClusterSet, fx.As(new(domain.Clusters))),
	),
)

// clusterSet is the gateway's domain.Clusters: the configured ids, resolved
// to backends opened at startup.
type clusterSet struct {
	cfg      []config.Cluster
	backends atomic.Pointer[map[string]ClusterBackend]
}

var _ domain.Clusters = (*clusterSet)(nil)

type clusterSetParams struct {
	fx.In
	Lifecycle fx.Lifecycle
	Config    *config.Config
	Factory   ClusterFactory
	Logger    *slog.Logger
}

func newClusterSet(p clusterSetParams) *clusterSet {
	s := &clusterSet{cfg: p.Config.Clusters}
	p.Lifecycle.Append(fx.Hook{
		OnStart: func(ctx context.Context) error { return s.open(ctx, p.Factory, p.Logger) },
		OnStop:  s.close,
	})
	return s
}

// open opens every backend; on failure the ones already open are closed.
func (s *clusterSet) open(ctx context.Context, factory ClusterFactory, log *slog.Logger) error {
	opened := make(map[string]ClusterBackend, len(s.cfg))
	for _, cl := range s.cfg {
		var (
			b   ClusterBackend
			err error
		)
		switch cl.Backend {
		case config.BackendMemory:
			b = memory.NewCluster()
		default:
			b, err = factory(ctx, cl, log.With("cluster", cl.ID))
		}
		if err != nil {
			for _, o := range opened {
				_ = o.Close(ctx)
			}
			return fmt.Errorf("cluster %s: %w", cl.ID, err)
		}
		opened[cl.ID] = b
		// Opening a Fluss backend connects nothing (identity mode user only
		// probes), so the line says what was configured, not that the
		// cluster is reachable: that shows on the first request.
		attrs := []any{"cluster", cl.ID, "backend", string(cl.Backend)}
		if cl.Backend == config.BackendMemory {
			attrs = append(attrs, "note", "in-process catalog, nothing is stored in Fluss")
		} else {
			attrs = append(attrs, "bootstrap_servers", cl.BootstrapServers,
				"security_protocol", string(cl.EffectiveSecurityProtocol()),
				"identity_mode", string(cl.IdentityMode),
				"auto_create_partitions", cl.AutoCreatePartitions,
				"note", "connections to Fluss are opened on first use; reachability shows on requests")
		}
		log.Info("cluster configured", attrs...)
	}
	s.backends.Store(&opened)
	return nil
}

func (s *clusterSet) close(ctx context.Context) error {
	m := s.backends.Swap(nil)
	if m == nil {
		return nil
	}
	var errs []error
	for id, b := range *m {
		if err := b.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// Names returns the configured cluster ids in configuration order.
func (s *clusterSet) Names() []string {
	ids := make([]string, len(s.cfg))
	for i, cl := range s.cfg {
		ids[i] = cl.ID
	}
	return ids
}

// Session resolves a configured cluster to a session for p.
func (s *clusterSet) Session(ctx context.Context, cluster string, p domain.Principal) (domain.Session, error) {
	m := s.backends.Load()
	if m == nil {
		return nil, domain.Errorf(domain.KindUnavailable, "clusters are not open")
	}
	b, ok := (*m)[cluster]
	if !ok {
		return nil, domain.NotFound(domain.ResourceCluster, "cluster `%s` is not configured", cluster)
	}
	return b.Session(ctx, p)
}
