// Package telemetry sets up the OpenTelemetry SDK for the gateway: a
// TracerProvider and a MeterProvider configured from the standard OTEL_*
// environment, W3C TraceContext and Baggage propagation, an optional
// Prometheus exposition of the metrics, Go runtime metrics, and one shutdown
// that flushes everything.
//
// Export is off unless an OTLP endpoint is configured: traces are exported
// when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is
// set and OTEL_TRACES_EXPORTER is not "none"; metrics likewise with the
// METRICS variables. OTEL_EXPORTER_OTLP_PROTOCOL (or the per-signal
// OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL) selects "grpc" or
// "http/protobuf" (the default). OTEL_SDK_DISABLED=true turns everything off.
// Endpoint, headers, TLS, timeouts, sampler, export interval and resource
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) are read by the SDK and the
// exporters themselves.
//
// On top of the providers, NewInstrumentation creates the gateway's own
// instruments and hands out the observers the other adapters call through
// interfaces of their own (this package imports none of them):
// GatewayMetrics (REST requests, write verdicts), FlussHooks (the rpc
// layer's connect, disconnect and request hooks, with client spans),
// WriterHooks (writer batches, retries, buffer, KV backpressure, and backend
// spans linked to the REST requests whose rows they carry). LogHandler adds
// trace_id, span_id and request_id to slog records. The Prometheus family
// names are listed next to the instrument names (instrumentation.go).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/runtime"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// DefaultServiceName is the service.name unless OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES say otherwise.
const DefaultServiceName = "fluss-gateway"

// Options configure Setup.
type Options struct {
	// ServiceVersion becomes service.version.
	ServiceVersion string
	// InstanceID becomes service.instance.id when set (gateway.instance-id).
	InstanceID string
	// Prometheus adds a pull reader whose exposition MetricsHandler serves
	// (gateway.metrics.enabled).
	Prometheus bool
	// Getenv reads the OTEL_* variables that decide which exporters exist;
	// nil uses os.Getenv. The exporters read their own settings from the
	// process environment.
	Getenv func(string) string
}

// Providers are the configured SDK components. Pass them to the
// instrumentation explicitly; bootstrap also installs them as the globals.
type Providers struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Propagators    propagation.TextMapPropagator
	// MetricsHandler serves the Prometheus text exposition; nil unless
	// Options.Prometheus is set and the SDK is enabled.
	MetricsHandler http.Handler
	// TracesExported and MetricsExported tell whether OTLP export is on.
	TracesExported  bool
	MetricsExported bool

	shutdowns []func(context.Context) error
}

// Shutdown flushes and stops every component, returning all their errors
// joined. It is safe to call once.
func (p *Providers) Shutdown(ctx context.Context) error {
	var errs []error
	for i := len(p.shutdowns) - 1; i >= 0; i-- {
		errs = append(errs, p.shutdowns[i](ctx))
	}
	p.shutdowns = nil
	return errors.Join(errs...)
}

// Setup builds the providers from opts and the environment. On error,
// everything built so far is shut down.
func Setup(ctx context.Context, opts Options) (_ *Providers, err error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	p := &Providers{
		TracerProvider: tracenoop.NewTracerProvider(),
		MeterProvider:  metricnoop.NewMeterProvider(),
		Propagators:    propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return p, nil
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, p.Shutdown(ctx))
		}
	}()

	res, err := newResource(ctx, opts)
	if err != nil {
		return nil, err
	}

	traceExp, err := newTraceExporter(ctx, getenv)
	if err != nil {
		return nil, err
	}
	if traceExp != nil {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(traceExp), sdktrace.WithResource(res))
		p.TracerProvider, p.TracesExported = tp, true
		p.shutdowns = append(p.shutdowns, tp.Shutdown)
	}

	var readers []sdkmetric.Option
	metricExp, err := newMetricExporter(ctx, getenv)
	if err != nil {
		return nil, err
	}
	if metricExp != nil {
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExp)))
		p.MetricsExported = true
	}
	if opts.Prometheus {
		reg := promclient.NewRegistry()
		exp, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			return nil, fmt.Errorf("telemetry: prometheus exporter: %w", err)
		}
		readers = append(readers, sdkmetric.WithReader(exp))
		p.MetricsHandler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	}
	if len(readers) > 0 {
		mp := sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
		p.MeterProvider = mp
		p.shutdowns = append(p.shutdowns, mp.Shutdown)
		if err := runtime.Start(runtime.WithMeterProvider(mp)); err != nil {
			return nil, fmt.Errorf("telemetry: runtime metrics: %w", err)
		}
	}
	return p, nil
}

func newResource(ctx context.Context, opts Options) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", DefaultServiceName)}
	if opts.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", opts.ServiceVersion))
	}
	if opts.InstanceID != "" {
		attrs = append(attrs, attribute.String("service.instance.id", opts.InstanceID))
	}
	// Later options win: the environment overrides the defaults above.
	res, err := resource.New(ctx,
		resource.WithAttributes(attrs...),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	// A partial resource (for example one malformed OTEL_RESOURCE_ATTRIBUTES
	// entry) is still usable; the SDK reports the rest through otel.Handle.
	return res, nil
}

// signal holds the per-signal variable names.
type signal struct {
	name, exporterVar, endpointVar, protocolVar string
}

var (
	tracesSignal  = signal{"traces", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"}
	metricsSignal = signal{"metrics", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"}
)

// otlpProtocol decides whether a signal is exported and over which protocol;
// "" means not exported.
func otlpProtocol(getenv func(string) string, s signal) (string, error) {
	switch exp := strings.TrimSpace(getenv(s.exporterVar)); exp {
	case "", "otlp":
	case "none":
		return "", nil
	default:
		return "", fmt.Errorf("telemetry: %s=%q is not supported; use otlp or none", s.exporterVar, exp)
	}
	if strings.TrimSpace(getenv(s.endpointVar)) == "" && strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) == "" {
		return "", nil
	}
	proto := strings.TrimSpace(getenv(s.protocolVar))
	if proto == "" {
		proto = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	switch proto {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("telemetry: OTLP protocol %q for %s is not supported; use grpc or http/protobuf", proto, s.name)
}

func newTraceExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	proto, err := otlpProtocol(getenv, tracesSignal)
	var exp sdktrace.SpanExporter
	switch {
	case err != nil || proto == "":
		return nil, err
	case proto == "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP trace exporter: %w", err)
	}
	return exp, nil
}

func newMetricExporter(ctx context.Context, getenv func(string) string) (sdkmetric.Exporter, error) {
	proto, err := otlpProtocol(getenv, metricsSignal)
	var exp sdkmetric.Exporter
	switch {
	case err != nil || proto == "":
		return nil, err
	case proto == "grpc":
		exp, err = otlpmetricgrpc.New(ctx)
	default:
		exp, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP metric exporter: %w", err)
	}
	return exp, nil
}
