package http

import (
	"context"
	"errors"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"log/slog"
	"time"

	"github.com/gofiber/contrib/otelfiber/v2"
	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// Catalog is what the handlers need from the catalog use cases; it is
// implemented by *application.CatalogService.
type Catalog interface {
	Clusters() []string
	ListDatabases(ctx context.Context, scope application.Scope, page application.PageRequest) (application.Page[string], error)
	GetDatabase(ctx context.Context, scope application.Scope, name string) (domain.DatabaseInfo, error)
	DatabaseExists(ctx context.Context, scope application.Scope, name string) (bool, error)
	CreateDatabase(ctx context.Context, scope application.Scope, cmd application.CreateDatabase) (domain.DatabaseInfo, bool, error)
	DropDatabase(ctx context.Context, scope application.Scope, cmd application.DropDatabase) error
	ListTables(ctx context.Context, scope application.Scope, database string, page application.PageRequest) (application.Page[string], error)
	GetTable(ctx context.Context, scope application.Scope, path domain.TablePath) (domain.TableInfo, error)
	TableExists(ctx context.Context, scope application.Scope, path domain.TablePath) (bool, error)
	CreateTable(ctx context.Context, scope application.Scope, cmd application.CreateTable) (domain.TableInfo, bool, error)
	AlterTable(ctx context.Context, scope application.Scope, cmd application.AlterTable) (domain.TableInfo, bool, error)
	DropTable(ctx context.Context, scope application.Scope, path domain.TablePath, ignoreIfNotExists bool) error
	ListPartitions(ctx context.Context, scope application.Scope, path domain.TablePath, page application.PageRequest) (application.Page[domain.PartitionInfo], error)
	CreatePartition(ctx context.Context, scope application.Scope, cmd application.CreatePartition) (domain.PartitionInfo, bool, error)
	DropPartition(ctx context.Context, scope application.Scope, cmd application.DropPartition) error
}

var _ Catalog = (*application.CatalogService)(nil)

// Records is what the data-plane handlers need from the record use cases;
// it is implemented by *application.RecordService.
type Records interface {
	Write(ctx context.Context, scope application.Scope, cmd application.WriteCommand) (application.WriteResult, error)
	Lookup(ctx context.Context, scope application.Scope, path domain.TablePath, dec application.KeyDecoder) (application.LookupResult, error)
	PrefixLookup(ctx context.Context, scope application.Scope, path domain.TablePath, dec application.PrefixDecoder) (application.PrefixLookupResult, error)
}

var _ Records = (*application.RecordService)(nil)

// Options configure the REST API.
type Options struct {
	// RequestTimeout is every request's deadline (gateway.rest.write.request-timeout).
	// A caller may ask for a shorter one with the X-Fluss-Request-Timeout
	// header; a longer one is clamped to it.
	RequestTimeout time.Duration
	// MaxRequestBytes caps request bodies (gateway.rest.write.max-request-bytes).
	MaxRequestBytes int64
	// MaxMetadataRequestBytes caps the (decompressed) bodies of the catalog
	// routes (gateway.rest.metadata.max-request-bytes); 0 is
	// DefaultMaxMetadataRequestBytes, and it never exceeds MaxRequestBytes.
	MaxMetadataRequestBytes int64
	// ReadTimeout bounds reading one request (gateway.rest.header-read-timeout);
	// fasthttp cannot bound the head alone.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing one response (gateway.rest.response-write-timeout):
	// a client that stops reading loses its connection. 0: none.
	WriteTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a keep-alive
	// connection (gateway.rest.idle-timeout); 0 uses ReadTimeout.
	IdleTimeout time.Duration
	// MaxConnsPerAddress caps the open connections of one client IP address
	// (gateway.rest.max-connections-per-address); more are refused at
	// accept. 0: no cap.
	MaxConnsPerAddress int
	// SingleValueHeaders are headers a request may carry at most once (the
	// trusted principal header, the act-as header); Authorization is always
	// one of them. A repeated one answers 400 and closes the connection.
	SingleValueHeaders []string
	// Admission configures the concurrency budgets and the write rate limit.
	Admission Admission
	// MemoryBudget is the data-plane memory budget
	// (gateway.rest.memory-budget-bytes, budget.go): request bodies, the
	// bytes gzip bodies expand to, decoded rows and lookup answers are
	// charged to it; nil charges nothing.
	MemoryBudget *membudget.Budget
	// MaxLookupResponseBytes caps the answer of one lookup or prefix lookup
	// (gateway.rest.lookup.max-response-bytes); 0 is
	// DefaultMaxLookupResponseBytes.
	MaxLookupResponseBytes int64
	// Quota configures per-principal rate limits; the zero value has none.
	Quota Quota
	// AuditLogger receives one record per write request (see auditWrite);
	// nil uses Logger with the attribute logger=audit.
	AuditLogger *slog.Logger
	// Logger receives access and error logs; nil uses slog.Default().
	Logger *slog.Logger
	// TracerProvider, MeterProvider and Propagators instrument every route
	// through otelfiber; nil uses the OpenTelemetry globals.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Propagators    propagation.TextMapPropagator
	// Observer receives every request's method, route template, status and
	// duration (REST metrics); nil: none.
	Observer RequestObserver
	// Docs serves the API reference page at GET /docs (docs.go;
	// gateway.rest.docs.enabled).
	Docs bool
	// Browser checks Host and Origin and configures CORS (origin.go).
	Browser BrowserGuard
	// Authorizer is the gateway-side authorization policy (authorize.go);
	// nil allows every authenticated request. DDL is audited either way.
	Authorizer Authorizer
	// StreamMaxRows caps the entries of one streamed write body (NDJSON or
	// Arrow IPC; gateway.rest.write.stream.max-rows); 0 means
	// DefaultStreamMaxRows.
	StreamMaxRows int
}

// RequestObserver records REST requests; telemetry.GatewayMetrics implements
// it. errorCode is the error envelope's code ("" without error); table is
// the table (or only the database) the route names, zero for other routes.
type RequestObserver interface {
	ObserveRequestDetail(ctx context.Context, method, route string, status int, errorCode string, table domain.TablePath, elapsed time.Duration)
}

// Deps are the ports and state the API serves.
type Deps struct {
	Catalog Catalog
	// Records serves the data-plane routes; nil answers them 501 unsupported.
	Records Records
	// Scans serves the log scan routes (an extension); nil answers them 501.
	Scans     Scans
	Readiness *Readiness
	// Identity authenticates callers of the /v1/clusters routes; nil trusts
	// every caller as an anonymous principal. When it also has a
	// ChallengeFor(error) string method (adapters/identity.Authenticator),
	// 401 answers carry its WWW-Authenticate challenge.
	Identity domain.Identity

	// Idempotency serves writes with an Idempotency-Key; nil answers them
	// 501 unsupported.
	Idempotency IdempotentWriter
}

type api struct {
	opts        Options
	log         *slog.Logger
	catalog     Catalog
	records     Records
	scans       Scans
	admission   *admission
	quotas      *quotas
	budget      *membudget.Budget
	pending     pendingCharges
	lookupCosts lookupCosts
	audit       *slog.Logger
	readiness   *Readiness
	identity    domain.Identity
	routes      routeTable
	started     time.Time
	openapi     []byte

	// app is the fiber application the connection-level hooks use.
	app *fiber.App
	// singleHeaders: see Options.SingleValueHeaders.
	singleHeaders []string

	// idempotency: see Deps.Idempotency.
	idempotency IdempotentWriter
}

// New builds the fiber application serving the REST API. It does not
// listen; call Listener or Test on the result.
func New(opts Options, deps Deps) (*fiber.App, error) {
	if deps.Catalog == nil || deps.Readiness == nil {
		return nil, errors.New("http: Deps.Catalog and Deps.Readiness are required")
	}
	if opts.RequestTimeout <= 0 || opts.MaxRequestBytes <= 0 {
		return nil, errors.New("http: Options.RequestTimeout and Options.MaxRequestBytes must be positive")
	}
	var maxKeys, maxPrefixes int
	if r, ok := deps.Records.(interface {
		Limits() application.RecordLimits
	}); ok {
		l := r.Limits()
		maxKeys, maxPrefixes = l.LookupMaxKeys, l.PrefixLookupMaxPrefixes
	}
	doc, err := openAPIJSON(maxKeys, maxPrefixes)
	if err != nil {
		return nil, err
	}
	a := &api{
		opts:      opts,
		log:       opts.Logger,
		catalog:   deps.Catalog,
		records:   deps.Records,
		scans:     deps.Scans,
		admission: newAdmission(opts.Admission, opts.MaxRequestBytes),
		quotas:    newQuotas(opts.Quota, opts.MaxRequestBytes),
		budget:    opts.MemoryBudget,
		audit:     opts.AuditLogger,
		readiness: deps.Readiness,
		identity:  deps.Identity,
		routes:    allRoutes(),
		started:   time.Now(),
		openapi:   doc,
	}
	a.idempotency = deps.Idempotency
	a.pending.collectAt = collectAt(opts.MemoryBudget)
	a.singleHeaders = append([]string{fiber.HeaderAuthorization}, opts.SingleValueHeaders...)
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.audit == nil {
		a.audit = a.log.With(slog.String("logger", AuditLoggerName))
	}
	bodyLimit := int(min(opts.MaxRequestBytes, int64(^uint(0)>>1)))
	app := fiber.New(fiber.Config{
		AppName:               "fluss-gateway",
		BodyLimit:             bodyLimit,
		ReadTimeout:           opts.ReadTimeout,
		WriteTimeout:          opts.WriteTimeout,
		IdleTimeout:           opts.IdleTimeout,
		CaseSensitive:         true,
		StrictRouting:         true,
		Immutable:             true,
		DisableStartupMessage: true,
		ErrorHandler:          a.errorHandler,
		// Bodies are read by admitBody, after authentication and once
		// charged to the memory budget (budget.go); streamed write bodies
		// (ingest.go) are read by their handler as they arrive.
		StreamRequestBody: true,
	})
	a.app = app
	srv := app.Server()
	srv.ExpectHandler = a.expectContinue
	srv.HeaderReceived = a.bodyReadTimeout
	srv.MaxConnsPerIP = opts.MaxConnsPerAddress
	srv.ConnState = a.pending.connState
	srv.Handler = a.knownMethods(srv.Handler)

	otelOpts := []otelfiber.Option{
		otelfiber.WithCustomAttributes(func(c *fiber.Ctx) []attribute.KeyValue {
			return []attribute.KeyValue{attribute.String("gateway.request_id", requestID(c))}
		}),
		// Probes would flood traces; they are still counted by the access log.
		otelfiber.WithNext(func(c *fiber.Ctx) bool { return a.routes.isOpen(c.Path()) }),
		// Span names use the OpenAPI route template, so traces and the
		// document speak the same language.
		otelfiber.WithSpanNameFormatter(func(c *fiber.Ctx) string {
			if r, ok := c.Locals(localRoute).(string); ok {
				return c.Method() + " " + r
			}
			return c.Method() + " <unmatched>"
		}),
	}
	if opts.TracerProvider != nil {
		otelOpts = append(otelOpts, otelfiber.WithTracerProvider(opts.TracerProvider))
	}
	// otelfiber's own HTTP metrics stay off: they label series with the
	// client-supplied Host header (net.host.name), so any caller could grow
	// the metric set without bound, and they duplicate the bounded
	// fluss_gateway_rest_* families the access log records.
	otelOpts = append(otelOpts, otelfiber.WithMeterProvider(metricnoop.NewMeterProvider()))
	if opts.Propagators != nil {
		otelOpts = append(otelOpts, otelfiber.WithPropagators(opts.Propagators))
	}

	app.Use(a.requestContext)
	app.Use(a.checkFraming)
	if tracingOff(opts.TracerProvider) {
		// No span is ever recorded: only the trace context is carried.
		propagators := opts.Propagators
		if propagators == nil {
			propagators = otel.GetTextMapPropagator()
		}
		app.Use(a.propagateOnly(propagators))
	} else {
		app.Use(otelfiber.Middleware(otelOpts...))
	}
	app.Use(compressResponse)
	if m := opts.Browser.corsMiddleware(); m != nil {
		app.Use(m)
	}
	app.Use(a.errorsAndPanics)
	app.Use(a.browserGuard)
	app.Use(unlessDocs(acceptJSON))
	app.Use(a.acceptance)
	app.Use(a.deadline)
	for _, r := range a.routes {
		h := r.handler
		chain := []fiber.Handler{route(r.path, func(c *fiber.Ctx) error { return c.Next() })}
		if r.audit {
			chain = append(chain, a.auditWrite)
		}
		chain = append(chain, a.authenticate(r), a.authorize(r), checkQuery(r.query), a.admitBodyFor(r), a.quota(r), a.admit(r.admission),
			func(c *fiber.Ctx) error { return h(a, c) })
		app.Add(r.method, fiberPath(r.path), chain...)
	}
	if opts.Docs {
		registerDocs(app)
	}
	return app, nil
}
