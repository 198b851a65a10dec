package http

import (
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// tracingOff reports whether tp never records a span: the OpenTelemetry
// no-op provider, which the telemetry adapter installs when no trace
// exporter is configured (OTEL_TRACES_EXPORTER unset or "none"). A nil
// provider (the global one, which may be replaced later) counts as on.
func tracingOff(tp trace.TracerProvider) bool {
	_, off := tp.(tracenoop.TracerProvider)
	return off
}

// propagateOnly is what otelfiber's middleware amounts to when no span is
// ever recorded, without its per-request work (issue 22: an http.Header
// copy of every request header, span and metric attribute sets, a
// cancellable context, ~8 % of the CPU of a small lookup request). What
// stays observable is kept: the caller's trace context (traceparent,
// tracestate, baggage) is extracted into the request's context, so that
// log lines carry its trace_id and calls to Fluss continue it, and injected
// back into the answer's headers, as otelfiber does with the no-op tracer
// (which hands the remote span context on as the request's span); an error
// returned by the chain goes through the error handler. Probes are skipped,
// as otelfiber's Next does.
func (a *api) propagateOnly(propagators propagation.TextMapPropagator) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if a.routes.isOpen(c.Path()) {
			return c.Next()
		}
		saved := c.UserContext()
		c.SetUserContext(propagators.Extract(saved, requestCarrier{h: &c.Request().Header}))
		if err := c.Next(); err != nil {
			_ = c.App().Config().ErrorHandler(c, err)
		}
		propagators.Inject(c.UserContext(), responseCarrier{h: &c.Response().Header})
		c.SetUserContext(saved)
		return nil
	}
}

// requestCarrier reads a request's headers for a propagator without
// copying them (propagation.HeaderCarrier needs an http.Header).
type requestCarrier struct{ h *fasthttp.RequestHeader }

var (
	_ propagation.TextMapCarrier = requestCarrier{}
	_ propagation.ValuesGetter   = requestCarrier{}
)

// Get returns the first value of key (case-insensitive), "" when absent.
func (r requestCarrier) Get(key string) string { return string(r.h.Peek(key)) }

// Values returns every value of key, as http.Header.Values does (the
// baggage propagator joins repeated headers).
func (r requestCarrier) Values(key string) []string {
	var out []string
	for _, v := range r.h.PeekAll(key) {
		out = append(out, string(v))
	}
	return out
}

// Set is not used on a request's headers.
func (r requestCarrier) Set(string, string) {}

// Keys lists the request's header names.
func (r requestCarrier) Keys() []string {
	var out []string
	for k := range r.h.All() {
		out = append(out, string(k))
	}
	return out
}

// responseCarrier writes a propagator's headers into an answer.
type responseCarrier struct{ h *fasthttp.ResponseHeader }

// Get returns the answer's value of key.
func (r responseCarrier) Get(key string) string { return string(r.h.Peek(key)) }

// Set sets key on the answer.
func (r responseCarrier) Set(key, value string) { r.h.Set(key, value) }

// Keys is not used on an answer's headers.
func (r responseCarrier) Keys() []string { return nil }
