// Package bootstrap is the composition root: the only package that knows
// every adapter. It wires them with go.uber.org/fx, one module per area
// (configuration and logging, telemetry, clusters, REST server), and runs the
// process (Main).
//
// The Fluss adapter is plugged in at FlussClusterFactory (fluss.go, provided
// by ClustersModule), the identity adapter at NewIdentity (identity.go).
package bootstrap

import (
	"log/slog"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
)

// Version is the gateway version, set at build time with
// -ldflags "-X github.com/fluss-gateway/fluss-gateway-go/bootstrap.Version=…".
var Version = "dev"

// Commit is the source revision the binary was built from, set like Version
// (bootstrap.Commit); empty when unknown.
var Commit = ""

// stopMargin is added to the readiness grace and the drain timeout for the
// other stop hooks (closing clusters, flushing telemetry).
const stopMargin = 5 * time.Second

// ConfigModule supplies the validated configuration and the logger.
func ConfigModule(cfg *config.Config, log *slog.Logger) fx.Option {
	return fx.Module("config", fx.Supply(cfg, log))
}

// Options is the whole gateway as one fx option: the modules plus fx's own
// logging and timeouts. Tests add fx.Decorate or fx.Populate to it.
func Options(cfg *config.Config, log *slog.Logger) fx.Option {
	startTimeout := 15 * time.Second
	for _, cl := range cfg.Clusters {
		startTimeout = max(startTimeout, cl.ConnectTimeout+stopMargin)
	}
	return fx.Options(
		ConfigModule(cfg, log),
		TelemetryModule,
		ClustersModule,
		RESTModule,
		fx.StartTimeout(startTimeout),
		fx.StopTimeout(cfg.Shutdown.ReadinessGrace+cfg.Shutdown.DrainTimeout+stopMargin),
		fx.WithLogger(func() fxevent.Logger {
			l := &fxevent.SlogLogger{Logger: log}
			l.UseLogLevel(slog.LevelDebug)
			return l
		}),
	)
}

// New builds the gateway application; extra options come last so they can
// decorate anything (for example the ClusterFactory).
func New(cfg *config.Config, log *slog.Logger, extra ...fx.Option) *fx.App {
	return fx.New(Options(cfg, log), fx.Options(extra...))
}
