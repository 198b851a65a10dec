package bootstrap

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.opentelemetry.io/otel"
	"go.uber.org/fx"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/telemetry"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
)

// TelemetryModule sets up the OpenTelemetry SDK from the OTEL_* environment,
// installs it as the global providers, serves the Prometheus exposition on
// `gateway.metrics.exporter.prometheus.listen` when `gateway.metrics.enabled`,
// and flushes everything on stop. It provides the gateway's instruments
// (*telemetry.Instrumentation: REST, write, Fluss connection/request and
// writer metrics, backend spans) and wraps the *slog.Logger seen by every
// module so that records logged with a context carry trace_id, span_id and
// request_id.
var TelemetryModule = fx.Options(
	fx.Module("telemetry",
		fx.Provide(newTelemetry, newInstrumentation, newMetricsServer),
		fx.Invoke(func(*MetricsServer) {}),
	),
	// At the root, so the decoration reaches every module.
	fx.Decorate(func(log *slog.Logger) *slog.Logger { return slog.New(telemetry.NewLogHandler(log.Handler())) }),
)

// newInstrumentation creates the gateway's instruments once, on the
// configured providers.
func newInstrumentation(p *telemetry.Providers, cfg *config.Config, log *slog.Logger) *telemetry.Instrumentation {
	in, err := telemetry.NewInstrumentation(telemetry.InstrumentationOptions{
		TracerProvider: p.TracerProvider,
		MeterProvider:  p.MeterProvider,
		TableLabel:     cfg.Metrics.TableLabel,
		DatabaseLabel:  cfg.Metrics.DatabaseLabel,
		MaxTables:      cfg.Metrics.MaxTables,
		FlussCodeName:  func(code int32) string { return wire.ErrorCode(code).String() },
	})
	if err != nil {
		// The failed instruments are no-ops; the gateway serves anyway.
		log.Warn("some telemetry instruments could not be created", "error", err)
	}
	return in
}

func newTelemetry(lc fx.Lifecycle, cfg *config.Config, log *slog.Logger) (*telemetry.Providers, error) {
	p, err := telemetry.Setup(context.Background(), telemetry.Options{
		ServiceVersion: Version,
		InstanceID:     cfg.InstanceID,
		Prometheus:     cfg.Metrics.Enabled,
		Labels:         map[string]string{"gateway_id": cfg.Identity.GatewayID, "host": cfg.Identity.Host},
	})
	if err != nil {
		return nil, err
	}
	for _, w := range p.Warnings {
		log.Warn("opentelemetry setting ignored", "reason", w)
	}
	// Export failures surface in the gateway's own JSON log.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("opentelemetry", "error", err)
	}))
	otel.SetTracerProvider(p.TracerProvider)
	otel.SetMeterProvider(p.MeterProvider)
	otel.SetTextMapPropagator(p.Propagators)
	lc.Append(fx.StopHook(p.Shutdown))
	return p, nil
}

// MetricsServer serves GET /metrics on its own listener. Addr is nil when
// the listener is disabled.
type MetricsServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// Addr is the bound address, or nil when metrics are disabled.
func (m *MetricsServer) Addr() net.Addr {
	if m.ln == nil {
		return nil
	}
	return m.ln.Addr()
}

func newMetricsServer(lc fx.Lifecycle, cfg *config.Config, p *telemetry.Providers, log *slog.Logger) *MetricsServer {
	m := &MetricsServer{}
	if !cfg.Metrics.Enabled || p.MetricsHandler == nil {
		return m
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", p.MetricsHandler)
	// Idle keep-alive connections of scrapers are closed like the REST
	// listener's (issue 27: they were kept forever).
	idle := cfg.REST.IdleTimeout
	if idle <= 0 {
		idle = time.Minute
	}
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: cfg.REST.HeaderReadTimeout, IdleTimeout: idle,
		WriteTimeout: max(cfg.REST.WriteTimeout, 30*time.Second)}
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			// Bind before returning so a taken port fails startup.
			ln, err := net.Listen("tcp", cfg.Metrics.PrometheusListen)
			if err != nil {
				return err
			}
			m.ln, m.done = ln, make(chan error, 1)
			go func() { m.done <- m.srv.Serve(ln) }()
			log.Info("metrics listener serving", "address", ln.Addr().String(), "path", "/metrics")
			return nil
		},
		OnStop: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			err := m.srv.Shutdown(ctx)
			if serveErr := <-m.done; !errors.Is(serveErr, http.ErrServerClosed) {
				err = errors.Join(err, serveErr)
			}
			return err
		},
	})
	return m
}
