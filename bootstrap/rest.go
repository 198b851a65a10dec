package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/fx"

	httpadapter "github.com/fluss-gateway/fluss-gateway-go/adapters/http"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/telemetry"
	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

// RESTModule serves the REST API on `gateway.rest.listen`: it binds in
// OnStart (so a taken port fails startup), serves in a goroutine, flips
// readiness to serving once listening, and on stop turns /ready to 503 while
// still serving for `gateway.shutdown.readiness-grace`, then stops accepting
// and lets in-flight requests finish within `gateway.shutdown.drain-timeout`.
var RESTModule = fx.Module("rest",
	fx.Provide(
		httpadapter.NewReadiness,
		newSealer,
		application.NewCatalogService,
		newRecordService,
		newScanService,
		newIdempotentWrites,
		newMemoryBudget,
		func() IdentityFactory { return NewIdentity },
		newRESTServer,
	),
	fx.Invoke(func(*RESTServer) {}),
)

// RESTServer runs the REST API's fiber application on its listener, with
// TLS when `gateway.rest.tls.cert-file` is set.
type RESTServer struct {
	app       *fiber.App
	readiness *httpadapter.Readiness
	cfg       *config.Config
	listen    string
	grace     time.Duration
	drain     time.Duration
	log       *slog.Logger
	factory   IdentityFactory
	identity  *lateIdentity
	tls       *tlsReloader
	ln        net.Listener
	guard     *httpadapter.GuardedListener
	meter     metric.Meter
	stopping  atomic.Bool
	linger    *httpadapter.Lingering // under ln (and TLS): ends lingering closes on stop
	done      chan error
}

// Addr is the bound address once started (useful with port 0).
func (s *RESTServer) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Readiness is the lifecycle state the server reports on /ready.
func (s *RESTServer) Readiness() *httpadapter.Readiness { return s.readiness }

type restParams struct {
	fx.In
	Lifecycle fx.Lifecycle
	Config    *config.Config
	Catalog   *application.CatalogService
	Records   *application.RecordService
	Scans     *application.ScanService
	Clusters  domain.Clusters
	Readiness *httpadapter.Readiness
	Telemetry *telemetry.Providers
	Inst      *telemetry.Instrumentation
	Identity  IdentityFactory
	Logger    *slog.Logger

	// Idempotency is nil when gateway.idempotency.enabled is false.
	Idempotency *application.IdempotentWrites
	Budget      *membudget.Budget
}

func newRESTServer(p restParams) (*RESTServer, error) {
	identity := &lateIdentity{}
	policy, err := loadPolicy(p.Config)
	if err != nil {
		return nil, err
	}
	var authorizer httpadapter.Authorizer
	if policy != nil {
		authorizer = policy
	}
	q := p.Config.Security.Quota
	app, err := httpadapter.New(httpadapter.Options{
		RequestTimeout:  p.Config.REST.RequestTimeout,
		MaxRequestBytes: p.Config.REST.MaxRequestBytes,
		ReadTimeout:     p.Config.REST.HeaderReadTimeout,
		WriteTimeout:    p.Config.REST.WriteTimeout,
		IdleTimeout:     p.Config.REST.IdleTimeout,
		// The per-address cap is enforced by the listener (GuardListener,
		// start), which counts lingering connections; fasthttp's own cap is
		// off.
		MaxConnsPerAddress:      0,
		MaxMetadataRequestBytes: p.Config.REST.MaxMetadataRequestBytes,
		SingleValueHeaders:      singleValueHeaders(p.Config),
		Admission:               admission(p.Config),
		MemoryBudget:            p.Budget,
		MaxLookupResponseBytes:  p.Config.REST.MaxLookupResponseBytes,
		Quota: httpadapter.Quota{
			RequestsPerSecond: q.RequestsPerSecond,
			BytesPerSecond:    q.BytesPerSecond,
			PerTable:          q.PerTable,
			MaxPrincipals:     q.MaxPrincipals,
		},
		Logger:         p.Logger,
		AuditLogger:    p.Logger.With(slog.String("logger", httpadapter.AuditLoggerName)),
		TracerProvider: p.Telemetry.TracerProvider,
		MeterProvider:  p.Telemetry.MeterProvider,
		Propagators:    p.Telemetry.Propagators,
		Observer:       p.Inst.Gateway(),
		Docs:           p.Config.REST.DocsEnabled,
		Browser:        browserGuard(p.Config),
		Authorizer:     authorizer,
		StreamMaxRows:  p.Config.Limits.WriteStreamMaxRows,
	}, httpadapter.Deps{Catalog: p.Catalog, Records: p.Records, Scans: p.Scans, Readiness: p.Readiness, Identity: identity,
		Idempotency: idempotentWriter(p.Idempotency)})
	if err != nil {
		return nil, err
	}
	s := &RESTServer{
		app:       app,
		readiness: p.Readiness,
		cfg:       p.Config,
		listen:    p.Config.REST.Listen,
		grace:     p.Config.Shutdown.ReadinessGrace,
		drain:     p.Config.Shutdown.DrainTimeout,
		log:       p.Logger,
		factory:   p.Identity,
		identity:  identity,
	}
	if p.Telemetry != nil && p.Telemetry.MeterProvider != nil {
		s.meter = p.Telemetry.MeterProvider.Meter(telemetry.ScopeName)
	}
	p.Lifecycle.Append(fx.Hook{OnStart: s.start, OnStop: s.stop})
	return s, nil
}

// singleValueHeaders are the identity headers a request may carry at most
// once: two principal headers are ambiguous (a proxy may pass one and the
// gateway read the other).
func singleValueHeaders(cfg *config.Config) []string {
	var out []string
	if cfg.Security.Authentication == config.AuthTrustedHeader {
		name := cfg.Security.TrustedHeaderName
		if name == "" {
			name = config.DefaultTrustedHeaderName
		}
		out = append(out, name)
	}
	if h := cfg.Security.ActAs.Header; h != "" {
		out = append(out, h)
	}
	return out
}

// newRecordService builds the data-plane use cases with the configured
// limits and delivery bound.
func newRecordService(cfg *config.Config, clusters domain.Clusters, inst *telemetry.Instrumentation, tokens *sealed.Sealer) *application.RecordService {
	l := cfg.Limits
	return application.NewRecordService(clusters, application.RecordOptions{
		Limits: application.RecordLimits{
			WriteMaxRows:                 l.WriteMaxRows,
			LookupMaxKeys:                l.LookupMaxKeys,
			LookupMaxKeyBytes:            l.LookupMaxKeyBytes,
			PrefixLookupMaxPrefixes:      l.PrefixLookupMaxPrefixes,
			PrefixLookupMaxRowsPerPrefix: l.PrefixLookupMaxRowsPerPrefix,
		},
		MaxDeliveryTime: cfg.REST.MaxDeliveryTime,
		Metrics:         inst.Gateway(),
		Tokens:          tokens,
	})
}

var (
	_ application.ScanMetrics   = (*telemetry.GatewayMetrics)(nil)
	_ application.RecordMetrics = (*telemetry.GatewayMetrics)(nil)
)

// newScanService provides the log scan use cases (issue 23), their cursors
// sealed with the gateway's one sealer.
func newScanService(cfg *config.Config, clusters domain.Clusters, sealer *sealed.Sealer, inst *telemetry.Instrumentation) *application.ScanService {
	return application.NewScanService(clusters, sealer, application.ScanOptions{
		Limits:  application.ScanLimits{MaxRows: cfg.Scan.MaxRows, MaxWait: cfg.Scan.MaxWait, MaxBytes: int(cfg.Scan.MaxBytes)},
		Metrics: inst.Gateway(),
	})
}

// newIdempotentWrites builds the Idempotency-Key use case over the
// records use case (nil when gateway.idempotency.enabled is false).
func newIdempotentWrites(cfg *config.Config, records *application.RecordService, inst *telemetry.Instrumentation) *application.IdempotentWrites {
	c := cfg.Idempotency
	if !c.Enabled {
		return nil
	}
	return application.NewIdempotentWrites(records, application.IdempotencyOptions{
		Ledger:  domain.TablePath{Database: c.Database, Table: c.Table},
		Window:  c.Window,
		Lease:   c.Lease,
		Buckets: c.Buckets,
		Metrics: inst.Gateway(),
	})
}

// idempotentWriter keeps a nil use case a nil interface.
func idempotentWriter(w *application.IdempotentWrites) httpadapter.IdempotentWriter {
	if w == nil {
		return nil
	}
	return w
}

// browserGuard maps the Host allow-list and CORS. The Host allow-list
// applies to trust mode while it is loopback-only: with
// `gateway.security.trust.allow-non-loopback` anyone on the network is
// trusted already, and a rebound name adds nothing.
func browserGuard(cfg *config.Config) httpadapter.BrowserGuard {
	g := cfg.Security.Guard
	b := httpadapter.BrowserGuard{CORS: httpadapter.CORS{
		AllowedOrigins: g.CORSAllowedOrigins,
		AllowedMethods: g.CORSAllowedMethods,
		AllowedHeaders: g.CORSAllowedHeaders,
		MaxAgeSeconds:  int(g.CORSMaxAge / time.Second),
	}}
	if cfg.Security.Authentication == config.AuthTrust && !cfg.Security.TrustAllowNonLoopback {
		b.AllowedHosts = g.TrustAllowedHosts
	}
	return b
}

// admission maps the configured budgets; the write rate limit applies only
// when enabled.
func admission(cfg *config.Config) httpadapter.Admission {
	l := cfg.Limits
	a := httpadapter.Admission{
		MetadataConcurrency:     l.MetadataMaxConcurrentRequests,
		WriteConcurrency:        l.WriteMaxConcurrentRequests,
		LookupConcurrency:       l.LookupMaxConcurrentRequests,
		PrefixLookupConcurrency: l.PrefixLookupMaxConcurrentRequests,
		ScanConcurrency:         cfg.Scan.MaxConcurrentRequests,
		MaxWait:                 cfg.REST.AdmissionMaxWait,
	}
	if l.WriteRateLimitEnabled {
		a.WriteRequestsPerSecond = l.WriteRateLimitRequestsPerSecond
		a.WriteBytesPerSecond = l.WriteRateLimitBytesPerSecond
	}
	return a
}

// start builds the caller authenticator and the TLS configuration (both
// may fail startup naming the keys), then binds the listener.
func (s *RESTServer) start(ctx context.Context) (err error) {
	auth, err := s.factory(ctx, s.cfg, s.log)
	if err != nil {
		return err
	}
	s.identity.set(auth)
	defer func() {
		if err != nil {
			_ = s.identity.close()
			if s.tls != nil {
				s.tls.close()
			}
		}
	}()
	if s.cfg.REST.TLS.Enabled() {
		if s.tls, err = newTLSReloader(s.cfg.REST.TLS, s.log); err != nil {
			return fmt.Errorf("REST listener TLS: %w", err)
		}
	}
	ln, err := net.Listen("tcp", s.listen)
	if err != nil {
		return fmt.Errorf("REST listener on %s (%s): %w", s.listen, config.KeyRESTListen, err)
	}
	// The guard caps connections (lingering ones included) and keeps
	// accepting through EMFILE; the lingering close wraps its connections,
	// under TLS.
	maxConns := s.cfg.REST.MaxConnections
	fdLimit := raiseDescriptorLimit(s.log)
	if maxConns == 0 {
		maxConns = derivedMaxConnections(fdLimit)
	}
	s.guard = httpadapter.GuardListener(ln, httpadapter.ListenerLimits{
		MaxConns:           maxConns,
		MaxConnsPerAddress: s.cfg.REST.MaxConnectionsPerAddress,
		Readiness:          s.readiness,
		Logger:             s.log,
	})
	if s.meter != nil {
		registerListenerMetrics(s.meter, s.guard, s.log)
	}
	s.log.Info("REST connection limits", "max_connections", maxConns, "max_connections_per_address",
		s.cfg.REST.MaxConnectionsPerAddress, "descriptor_limit", fdLimit)
	s.linger = httpadapter.LingeringListener(s.guard, s.cfg.REST.LingerTimeout, 2*s.cfg.REST.MaxRequestBytes)
	ln = s.linger
	if s.tls != nil {
		s.tls.start()
		ln = newHandshakeListener(ln, s.tls.Config(), s.cfg.REST.TLS.HandshakeTimeout)
	}
	s.ln, s.done = ln, make(chan error, 1)
	go func() {
		err := s.app.Listener(ln)
		if !s.stopping.Load() {
			// Never silently: the guard retries accept errors, so this is
			// a bug or a closed socket; /ready turns 503 for good.
			s.log.Error("REST listener stopped serving before shutdown", "error", err)
			s.readiness.SetListenerFailed()
		}
		s.done <- err
	}()
	s.readiness.SetServing()
	s.log.Info("REST listener serving", "address", ln.Addr().String(), "scheme", s.Scheme())
	return nil
}

// waitGrace waits out the readiness grace, or less if the stop context ends.
func (s *RESTServer) waitGrace(ctx context.Context) {
	t := time.NewTimer(s.grace)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Scheme is https when the listener terminates TLS, else http.
func (s *RESTServer) Scheme() string {
	if s.cfg.REST.TLS.Enabled() {
		return "https"
	}
	return "http"
}

// stop shuts the listener down in two phases. During the readiness grace
// /ready answers 503 (with Retry-After) while the listener keeps accepting
// and serving, so load balancers and probes observe the instance leaving
// rather than a refused connection. Then application requests are refused,
// the listener closes, and in-flight requests get until the drain timeout to
// finish.
func (s *RESTServer) stop(ctx context.Context) error {
	s.stopping.Store(true)
	s.readiness.BeginShutdown()
	defer s.readiness.SetStopped()
	started := time.Now()
	if s.grace > 0 {
		s.log.Info("REST listener leaving: /ready answers 503 while requests are still served",
			"readiness_grace", config.FormatDuration(s.grace))
		s.waitGrace(ctx)
	}
	s.readiness.BeginDraining()
	ctx, cancel := context.WithTimeout(ctx, s.drain)
	defer cancel()
	err := s.app.ShutdownWithContext(ctx)
	// Closing the listener also ends a Serve that had not registered it yet.
	_ = s.ln.Close()
	select {
	case serveErr := <-s.done:
		err = errors.Join(err, serveErr)
	case <-ctx.Done():
		err = errors.Join(err, ctx.Err())
	}
	// The lingering closes of the last connections end now, not a linger
	// timeout later.
	if s.linger != nil {
		s.linger.Shutdown()
	}
	if s.tls != nil {
		s.tls.close()
	}
	if cerr := s.identity.close(); cerr != nil {
		s.log.Warn("closing the caller authenticator", "error", cerr)
	}
	if err != nil {
		s.log.Warn("REST listener stopped before every request finished", "after", time.Since(started).String(), "error", err)
		return fmt.Errorf("draining the REST listener: %w", err)
	}
	s.log.Info("REST listener drained", "after", time.Since(started).String())
	return nil
}
