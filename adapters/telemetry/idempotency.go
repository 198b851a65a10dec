package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Metric names of the Idempotency-Key extension.
const (
	// MetricIdempotencyRequests counts keyed writes by outcome: claimed,
	// replayed, conflict, reused, unknown, error.
	MetricIdempotencyRequests = "fluss_gateway_idempotency_requests_total"
	// MetricIdempotencyWait is the time keyed writes waited for another
	// attempt's answer (recorded only when they waited).
	MetricIdempotencyWait = "fluss_gateway_idempotency_wait_duration_seconds"
)

// SpanAttrIdempotencyOutcome is the outcome attribute of the idempotency
// spans (`idempotency.claim`: won or lost; `idempotency.record`;
// `idempotency.wait`).
const SpanAttrIdempotencyOutcome = attribute.Key("fluss.idempotency.outcome")

func newIdempotencyInstruments(b *builder) (metric.Int64Counter, metric.Float64Histogram) {
	return b.counter(MetricIdempotencyRequests, "{request}", "Writes with an Idempotency-Key by outcome: claimed (this request wrote), replayed (the recorded answer), conflict (409: another attempt in flight), reused (422: another body), unknown (a dead attempt's outcome_unknown answer), error (the ledger failed)."),
		b.histogram(MetricIdempotencyWait, "s", "Time writes with an Idempotency-Key waited for the answer of another attempt holding the key (in-progress waits).", secondsBuckets)
}

// RecordIdempotency counts one keyed write (application.IdempotencyMetrics):
// fluss_gateway_idempotency_requests_total{outcome} and, when it waited,
// fluss_gateway_idempotency_wait_duration_seconds{outcome}.
func (g *GatewayMetrics) RecordIdempotency(ctx context.Context, table domain.TablePath, outcome string, waited time.Duration) {
	attrs := g.in.tableAttr([]attribute.KeyValue{AttrOutcome.String(outcome)}, table)
	g.in.idemRequests.Add(ctx, 1, metric.WithAttributes(attrs...))
	if waited > 0 {
		g.in.idemWait.Record(ctx, seconds(waited), metric.WithAttributes(attrs...))
	}
}

// StartIdempotencySpan starts the internal span `idempotency.<step>` under
// the request's span; end records the outcome and any error.
func (g *GatewayMetrics) StartIdempotencySpan(ctx context.Context, step string) (context.Context, func(string, error)) {
	ctx, span := g.in.tracer.Start(ctx, "idempotency."+step)
	return ctx, func(outcome string, err error) {
		span.SetAttributes(SpanAttrIdempotencyOutcome.String(outcome))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}
