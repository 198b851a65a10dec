package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Keys added to log records by LogHandler.
const (
	LogKeyTraceID   = "trace_id"
	LogKeySpanID    = "span_id"
	LogKeyRequestID = "request_id"
)

type requestIDKey struct{}

// SetRequestID puts the gateway request id on the span of ctx (attribute
// gateway.request_id; a no-op for a non-recording span) and returns a context
// that carries it for LogHandler. The HTTP adapter calls it, or does the same
// with the OTel API, right after the server span starts.
func SetRequestID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	trace.SpanFromContext(ctx).SetAttributes(RequestIDKey.String(id))
	return ContextWithRequestID(ctx, id)
}

// ContextWithRequestID returns a context carrying the request id for logs.
func ContextWithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFromContext returns the request id set by SetRequestID or
// ContextWithRequestID, or "".
func RequestIDFromContext(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// LogHandler wraps a slog handler (the gateway's JSON handler) so that every
// record logged with a context (InfoContext, ...) carries trace_id and
// span_id of the context's span, and request_id from ContextWithRequestID
// unless the record already has one. Records without a valid span or request
// id are passed through unchanged. Like any attribute added at Handle time,
// the keys land inside the innermost WithGroup group, if any.
type LogHandler struct {
	next slog.Handler
}

// NewLogHandler wraps next; wrapping a LogHandler again returns it as is.
func NewLogHandler(next slog.Handler) slog.Handler {
	if h, ok := next.(*LogHandler); ok {
		return h
	}
	return &LogHandler{next: next}
}

// Enabled implements slog.Handler.
func (h *LogHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle implements slog.Handler.
func (h *LogHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx == nil {
		return h.next.Handle(ctx, r)
	}
	sc := trace.SpanContextFromContext(ctx)
	reqID := RequestIDFromContext(ctx)
	if reqID != "" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == LogKeyRequestID {
				reqID = ""
				return false
			}
			return true
		})
	}
	if !sc.IsValid() && reqID == "" {
		return h.next.Handle(ctx, r)
	}
	r = r.Clone()
	if sc.IsValid() {
		r.AddAttrs(slog.String(LogKeyTraceID, sc.TraceID().String()), slog.String(LogKeySpanID, sc.SpanID().String()))
	}
	if reqID != "" {
		r.AddAttrs(slog.String(LogKeyRequestID, reqID))
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h *LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &LogHandler{next: h.next.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h *LogHandler) WithGroup(name string) slog.Handler {
	return &LogHandler{next: h.next.WithGroup(name)}
}
