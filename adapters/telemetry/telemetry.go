// Package telemetry sets up the OpenTelemetry SDK for the gateway: a
// TracerProvider and a MeterProvider configured from the standard OTEL_*
// environment, W3C TraceContext and Baggage propagation, an optional
// Prometheus exposition of the metrics, Go runtime metrics, and one shutdown
// that flushes everything.
//
// Exporters follow the OpenTelemetry environment specification:
// OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER take a comma-separated list
// of "otlp" (the default), "console" (one JSON document per span or metric
// export on standard output) and "none"; OTEL_LOGS_EXPORTER accepts the
// same values, but the gateway's logs are always its JSON lines on standard
// error (no OTLP log export): "otlp" there only draws a warning. Unknown
// values draw a warning and are ignored, as the specification asks. OTLP
// export is off unless an OTLP endpoint is configured: traces are exported
// when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is
// set; metrics likewise with the METRICS variables. The sampler is
// OTEL_TRACES_SAMPLER (always_on, always_off, traceidratio,
// parentbased_always_on (the default), parentbased_always_off,
// parentbased_traceidratio; OTEL_TRACES_SAMPLER_ARG is the ratio), with one
// addition: a span linked to a sampled span is sampled too, so the shared
// fluss.PutKv/fluss.ProduceLog span of a batch is recorded whenever one of
// the requests whose rows it carries is (LinkedSampler). OTEL_EXPORTER_OTLP_PROTOCOL (or the per-signal
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
	"io"
	"net/http"
	"os"
	"slices"
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
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
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
	// Console is where the console exporters write; nil is os.Stdout.
	Console io.Writer
	// Labels are resource attributes that also label every Prometheus
	// series (the official gateway's gateway_id and host, from `gateway.id`
	// and `gateway.host`); empty values are left out.
	Labels map[string]string
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
	// TracesExported and MetricsExported tell whether any export (OTLP or
	// console) is on.
	TracesExported  bool
	MetricsExported bool
	// Warnings are the settings Setup ignored (unknown exporter or sampler
	// values, OTLP log export); the caller logs them.
	Warnings []string

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

	console := opts.Console
	if console == nil {
		console = os.Stdout
	}
	warn := func(msg string) { p.Warnings = append(p.Warnings, msg) }
	for _, v := range exporterValues(getenv, "OTEL_LOGS_EXPORTER", warn) {
		if v == "otlp" && strings.TrimSpace(getenv("OTEL_LOGS_EXPORTER")) != "" {
			warn("OTEL_LOGS_EXPORTER=otlp: the gateway does not export logs over OTLP; its logs stay JSON lines on standard error")
		}
	}

	traceExps, err := newTraceExporters(ctx, getenv, console, warn)
	if err != nil {
		return nil, err
	}
	if len(traceExps) > 0 {
		topts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithSampler(samplerFromEnv(getenv, warn))}
		for _, exp := range traceExps {
			topts = append(topts, sdktrace.WithBatcher(exp))
		}
		tp := sdktrace.NewTracerProvider(topts...)
		p.TracerProvider, p.TracesExported = tp, true
		p.shutdowns = append(p.shutdowns, tp.Shutdown)
	}

	var readers []sdkmetric.Option
	metricExps, err := newMetricExporters(ctx, getenv, console, warn)
	if err != nil {
		return nil, err
	}
	for _, exp := range metricExps {
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
		p.MetricsExported = true
	}
	if opts.Prometheus {
		reg := promclient.NewRegistry()
		popts := []otelprom.Option{otelprom.WithRegisterer(reg)}
		if keys := labelKeys(opts.Labels); len(keys) > 0 {
			popts = append(popts, otelprom.WithResourceAsConstantLabels(attribute.NewAllowKeysFilter(keys...)))
		}
		exp, err := otelprom.New(popts...)
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
	for _, k := range labelKeys(opts.Labels) {
		attrs = append(attrs, attribute.String(string(k), opts.Labels[string(k)]))
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

// labelKeys returns the keys of the non-empty labels, sorted.
func labelKeys(labels map[string]string) []attribute.Key {
	var keys []attribute.Key
	for k, v := range labels {
		if v != "" {
			keys = append(keys, attribute.Key(k))
		}
	}
	slices.Sort(keys)
	return keys
}

// signal holds the per-signal variable names.
type signal struct {
	name, exporterVar, endpointVar, protocolVar string
}

var (
	tracesSignal  = signal{"traces", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"}
	metricsSignal = signal{"metrics", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"}
)

// exporterValues reads a comma-separated OTEL_*_EXPORTER list: "" is otlp;
// "none" alone turns the signal off; unknown values are reported through
// warn and dropped.
func exporterValues(getenv func(string) string, name string, warn func(string)) []string {
	raw := strings.TrimSpace(getenv(name))
	if raw == "" {
		return []string{"otlp"}
	}
	var out []string
	for _, v := range strings.Split(raw, ",") {
		switch v = strings.ToLower(strings.TrimSpace(v)); v {
		case "otlp", "console":
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		case "none", "":
		default:
			warn(fmt.Sprintf("%s=%q: exporter %q is not supported (otlp, console, none); ignored", name, raw, v))
		}
	}
	return out
}

// otlpProtocol decides whether a signal is exported over OTLP and with
// which protocol; "" means not exported.
func otlpProtocol(getenv func(string) string, s signal) (string, error) {
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

// exporterMakers build one signal's exporters: to the console, or OTLP over
// gRPC or HTTP/protobuf.
type exporterMakers[E any] struct {
	console, grpc, http func() (E, error)
}

// newExporters builds the exporters that the signal's OTEL_*_EXPORTER names
// (exporterValues): `console` writes to the console writer, `otlp` uses the
// protocol of OTEL_EXPORTER_OTLP_[SIGNAL_]PROTOCOL (otlpProtocol); kind names
// the signal in errors ("trace", "metric").
func newExporters[E any](getenv func(string) string, sig signal, warn func(string), kind string, m exporterMakers[E]) ([]E, error) {
	var exps []E
	for _, v := range exporterValues(getenv, sig.exporterVar, warn) {
		if v == "console" {
			exp, err := m.console()
			if err != nil {
				return nil, fmt.Errorf("telemetry: console %s exporter: %w", kind, err)
			}
			exps = append(exps, exp)
			continue
		}
		proto, err := otlpProtocol(getenv, sig)
		var exp E
		switch {
		case err != nil:
			return nil, err
		case proto == "":
			continue
		case proto == "grpc":
			exp, err = m.grpc()
		default:
			exp, err = m.http()
		}
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP %s exporter: %w", kind, err)
		}
		exps = append(exps, exp)
	}
	return exps, nil
}

func newTraceExporters(ctx context.Context, getenv func(string) string, console io.Writer, warn func(string)) ([]sdktrace.SpanExporter, error) {
	return newExporters(getenv, tracesSignal, warn, "trace", exporterMakers[sdktrace.SpanExporter]{
		console: func() (sdktrace.SpanExporter, error) { return stdouttrace.New(stdouttrace.WithWriter(console)) },
		grpc:    func() (sdktrace.SpanExporter, error) { return otlptracegrpc.New(ctx) },
		http:    func() (sdktrace.SpanExporter, error) { return otlptracehttp.New(ctx) },
	})
}

func newMetricExporters(ctx context.Context, getenv func(string) string, console io.Writer, warn func(string)) ([]sdkmetric.Exporter, error) {
	return newExporters(getenv, metricsSignal, warn, "metric", exporterMakers[sdkmetric.Exporter]{
		console: func() (sdkmetric.Exporter, error) { return stdoutmetric.New(stdoutmetric.WithWriter(console)) },
		grpc:    func() (sdkmetric.Exporter, error) { return otlpmetricgrpc.New(ctx) },
		http:    func() (sdkmetric.Exporter, error) { return otlpmetrichttp.New(ctx) },
	})
}
