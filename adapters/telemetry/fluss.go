package telemetry

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// FlussHooks observes the Fluss rpc layer of one cluster. It implements
// rpc.ConnectHook, rpc.DisconnectHook and rpc.RequestHook structurally (this
// package does not import rpc; tests/otel asserts the conformance): pass it in
// rpc.Config.Hooks (fluss.Config.Hooks).
//
// Metrics: fluss_gateway_connections_{active,created_total,closed_total,
// failed_total}, fluss_gateway_connect_duration_seconds,
// fluss_gateway_backend_requests_total{api,outcome,fluss_code} and
// fluss_gateway_backend_request_duration_seconds{api,outcome}, each with the
// cluster attribute.
//
// Spans: a request whose context carries a span gets a client child span
// `fluss.<Api>` (fluss.CreateDatabase, fluss.Lookup, ...) spanning the call;
// a request made inside a span started by StartBackendSpan for the same API
// annotates that span instead. Requests without a span in their context
// (background metadata refreshes) are not traced.
type FlussHooks struct {
	in          *Instrumentation
	cluster     attribute.KeyValue // metric attribute
	spanCluster attribute.KeyValue // span attribute
}

// FlussHooks returns the rpc hooks for one cluster.
func (in *Instrumentation) FlussHooks(cluster string) *FlussHooks {
	return &FlussHooks{in: in, cluster: AttrCluster.String(cluster), spanCluster: SpanAttrCluster.String(cluster)}
}

// Outcomes of Fluss requests and connections.
const (
	OutcomeOK        = "ok"        // request answered without a request-level error; connection closed by its owner
	OutcomeError     = "error"     // answered with a Fluss error, or an unclassified failure
	OutcomeNotSent   = "not_sent"  // the server cannot have seen the request
	OutcomeAmbiguous = "ambiguous" // sent, but the outcome is unknown
)

// OnFlussConnect implements rpc.ConnectHook.
func (h *FlussHooks) OnFlussConnect(_ string, elapsed time.Duration, err error) {
	ctx := context.Background()
	outcome := OutcomeOK
	if err != nil {
		outcome = OutcomeError
		h.in.connFailed.Add(ctx, 1, metric.WithAttributes(h.cluster))
	} else {
		h.in.connCreated.Add(ctx, 1, metric.WithAttributes(h.cluster))
		h.in.connActive.Add(ctx, 1, metric.WithAttributes(h.cluster))
	}
	h.in.connDuration.Record(ctx, seconds(elapsed), metric.WithAttributes(h.cluster, AttrOutcome.String(outcome)))
}

// OnFlussDisconnect implements rpc.DisconnectHook.
func (h *FlussHooks) OnFlussDisconnect(_ string, err error) {
	ctx := context.Background()
	outcome := OutcomeOK
	if err != nil {
		outcome = OutcomeError
	}
	h.in.connClosed.Add(ctx, 1, metric.WithAttributes(h.cluster, AttrOutcome.String(outcome)))
	h.in.connActive.Add(ctx, -1, metric.WithAttributes(h.cluster))
}

// OnFlussRequest implements rpc.RequestHook.
func (h *FlussHooks) OnFlussRequest(ctx context.Context, addr, api string, version int16, requestBytes, responseBytes int, elapsed time.Duration, err error) {
	outcome, code := classifyFluss(err)
	h.in.backendRequests.Add(ctx, 1, metric.WithAttributes(
		h.cluster, AttrAPI.String(api), AttrOutcome.String(outcome), AttrFlussCode.String(h.in.flussCode(code))))
	h.in.backendDuration.Record(ctx, seconds(elapsed), metric.WithAttributes(h.cluster, AttrAPI.String(api), AttrOutcome.String(outcome)))

	name := SpanName(api)
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, SpanAttrAPIVersion.Int(int(version)), SpanAttrRequestSize.Int(requestBytes), SpanAttrResponseSize.Int(responseBytes))
	attrs = appendServerAddr(attrs, addr)

	if bs := backendSpanFrom(ctx); bs != nil && bs.name == name {
		// The writer's span for this very request: annotate it.
		bs.span.SetAttributes(attrs...)
		if err != nil {
			bs.span.RecordError(err)
		}
		return
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	end := time.Now()
	attrs = append(attrs, SpanAttrAPI.String(api), h.spanCluster)
	_, span := h.in.tracer.Start(ctx, name,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(end.Add(-elapsed)),
		trace.WithAttributes(attrs...))
	finishSpan(span, code, 0, err)
	span.End(trace.WithTimestamp(end))
}

// flussClassified is the method set of rpc.Classified that telemetry needs
// (standard types only, so rpc is not imported).
type flussClassified interface {
	NotSent() bool
	Ambiguous() bool
	FlussErrorCode() int32
}

// classifyFluss returns the outcome and the Fluss error code of a request.
func classifyFluss(err error) (string, int32) {
	if err == nil {
		return OutcomeOK, 0
	}
	var c flussClassified
	if !errors.As(err, &c) {
		return OutcomeError, 0
	}
	switch {
	case c.NotSent():
		return OutcomeNotSent, c.FlussErrorCode()
	case c.Ambiguous():
		return OutcomeAmbiguous, c.FlussErrorCode()
	default:
		return OutcomeError, c.FlussErrorCode()
	}
}

func appendServerAddr(attrs []attribute.KeyValue, addr string) []attribute.KeyValue {
	if addr == "" {
		return attrs
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return append(attrs, SpanAttrServerAddr.String(addr))
	}
	attrs = append(attrs, SpanAttrServerAddr.String(host))
	if p, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, SpanAttrServerPort.Int(p))
	}
	return attrs
}
