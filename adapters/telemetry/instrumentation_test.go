package telemetry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// harness is an Instrumentation over an in-memory span recorder and a manual
// metric reader.
type harness struct {
	in     *Instrumentation
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
}

func newHarness(t testing.TB, opts InstrumentationOptions) *harness {
	t.Helper()
	h := &harness{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	h.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	opts.TracerProvider, opts.MeterProvider = h.tp, mp
	in, err := NewInstrumentation(opts)
	require.NoError(t, err)
	h.in = in
	t.Cleanup(func() {
		_ = h.tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return h
}

// metrics collects and indexes the metrics of the gateway's scope by name.
func (h *harness) metrics(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func set(kvs ...attribute.KeyValue) attribute.Set { return attribute.NewSet(kvs...) }

func sum[N int64 | float64](monotonic bool, points ...metricdata.DataPoint[N]) metricdata.Sum[N] {
	return metricdata.Sum[N]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: monotonic, DataPoints: points}
}

func point[N int64 | float64](v N, kvs ...attribute.KeyValue) metricdata.DataPoint[N] {
	return metricdata.DataPoint[N]{Attributes: set(kvs...), Value: v}
}

// assertMetric compares one metric, ignoring timestamps and exemplars; data
// points are compared as sets.
func assertMetric(t *testing.T, got map[string]metricdata.Metrics, name, unit string, data metricdata.Aggregation) {
	t.Helper()
	m, ok := got[name]
	if !assert.Truef(t, ok, "metric %s missing; have %v", name, keys(got)) {
		return
	}
	assert.Equal(t, unit, m.Unit, name)
	metricdatatest.AssertAggregationsEqual(t, data, m.Data, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// histPoint builds the expected histogram point of the given observations.
func histPoint[N int64 | float64](bounds []float64, attrs attribute.Set, obs ...N) metricdata.HistogramDataPoint[N] {
	p := metricdata.HistogramDataPoint[N]{Attributes: attrs, Bounds: bounds, BucketCounts: make([]uint64, len(bounds)+1)}
	for i, v := range obs {
		p.Count++
		p.Sum += v
		if lo, _ := p.Min.Value(); i == 0 || v < lo {
			p.Min = metricdata.NewExtrema(v)
		}
		if hi, _ := p.Max.Value(); i == 0 || v > hi {
			p.Max = metricdata.NewExtrema(v)
		}
		b := 0
		for b < len(bounds) && float64(v) > bounds[b] {
			b++
		}
		p.BucketCounts[b]++
	}
	return p
}

func hist[N int64 | float64](points ...metricdata.HistogramDataPoint[N]) metricdata.Histogram[N] {
	return metricdata.Histogram[N]{Temporality: metricdata.CumulativeTemporality, DataPoints: points}
}

func TestGatewayMetrics(t *testing.T) {
	t.Parallel()
	h := newHarness(t, InstrumentationOptions{})
	g, ctx := h.in.Gateway(), context.Background()

	g.ObserveRequest(ctx, "POST", "/v1/clusters/{cluster}/databases", 201, 20*time.Millisecond)
	g.ObserveRequest(ctx, "POST", "/v1/clusters/{cluster}/databases", 201, 40*time.Millisecond)
	g.ObserveRequestDetail(ctx, "GET", "/v1/clusters/{cluster}/databases/{database}", 404, "database_not_found", domain.TablePath{Database: "shop"}, 2*time.Millisecond)
	g.ObserveRequestDetail(ctx, "BREW", "", 405, "method_not_allowed", domain.TablePath{}, time.Millisecond)

	table := domain.TablePath{Database: "shop", Table: "orders"}
	g.RecordEntries(ctx, table, []domain.EntryResult{
		{}, {}, {},
		{Code: "invalid_argument", Applied: domain.AppliedNo},
		{Code: "invalid_argument"},
		{Code: "timeout", Applied: domain.AppliedUnknown},
	})
	// Verdicts run by run count for their rows.
	g.RecordEntryRuns(ctx, table, []domain.ResultRun{
		{Rows: 4000, Result: domain.EntryResult{}},
		{Rows: 20, Result: domain.EntryResult{Code: "timeout", Applied: domain.AppliedUnknown}},
	})
	g.ObserveIngest(ctx, "application/x-ndjson", table, 1000, 5000)
	g.ObserveIngest(ctx, "application/x-ndjson", table, 3, 100)
	g.ObserveIngest(ctx, "application/json", table, 20, 300)

	got := h.metrics(t)
	dbs := []attribute.KeyValue{AttrMethod.String("POST"), AttrRoute.String("/v1/clusters/{cluster}/databases"), AttrErrorCode.String("ok")}
	db := []attribute.KeyValue{AttrMethod.String("GET"), AttrRoute.String("/v1/clusters/{cluster}/databases/{database}"), AttrErrorCode.String("database_not_found")}
	other := []attribute.KeyValue{AttrMethod.String("_OTHER"), AttrRoute.String("unmatched"), AttrErrorCode.String("method_not_allowed")}
	assertMetric(t, got, MetricRESTRequests, "{request}", sum(true,
		point(int64(2), append(dbs, AttrStatusCode.String("201"), AttrStatusClass.String("2xx"))...),
		point(int64(1), append(db, AttrStatusCode.String("404"), AttrStatusClass.String("4xx"))...),
		point(int64(1), append(other, AttrStatusCode.String("405"), AttrStatusClass.String("4xx"))...),
	))
	assertMetric(t, got, MetricRESTRequestDuration, "s", hist(
		histPoint(secondsBuckets, set(append(dbs, AttrStatusClass.String("2xx"))...), 0.02, 0.04),
		histPoint(secondsBuckets, set(append(db, AttrStatusClass.String("4xx"))...), 0.002),
		histPoint(secondsBuckets, set(append(other, AttrStatusClass.String("4xx"))...), 0.001),
	))
	assertMetric(t, got, MetricWriteEntries, "{entry}", sum(true,
		point(int64(4003), AttrOutcome.String("success"), AttrCode.String("ok")),
		point(int64(2), AttrOutcome.String("failed"), AttrCode.String("invalid_argument")),
		point(int64(21), AttrOutcome.String("unknown"), AttrCode.String("timeout")),
	))
	assertMetric(t, got, MetricWriteBodyRows, "{entry}", sum(true,
		point(int64(1003), AttrContentType.String("application/x-ndjson")),
		point(int64(20), AttrContentType.String("application/json")),
	))
	assertMetric(t, got, MetricWriteBodyBytes, "By", sum(true,
		point(int64(5100), AttrContentType.String("application/x-ndjson")),
		point(int64(300), AttrContentType.String("application/json")),
	))
}

func TestTableLabelIsOptIn(t *testing.T) {
	t.Parallel()
	table := domain.TablePath{Database: "shop", Table: "orders"}
	for _, withTable := range []bool{false, true} {
		t.Run(fmt.Sprint(withTable), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, InstrumentationOptions{TableLabel: withTable})
			h.in.Gateway().RecordEntries(context.Background(), table, []domain.EntryResult{{}})
			h.in.WriterHooks("c1").BatchesSent(table, 1, 2, 30)
			want := func(kvs ...attribute.KeyValue) []attribute.KeyValue {
				if withTable {
					kvs = append(kvs, AttrTable.String("shop.orders"))
				}
				return kvs
			}
			got := h.metrics(t)
			assertMetric(t, got, MetricWriteEntries, "{entry}", sum(true,
				point(int64(1), want(AttrOutcome.String("success"), AttrCode.String("ok"))...)))
			assertMetric(t, got, MetricBackendWriteRows, "{row}", sum(true,
				point(int64(2), want(AttrCluster.String("c1"))...)))
		})
	}
}

// fakeRPCError has the method set of rpc.Classified.
type fakeRPCError struct {
	notSent, ambiguous bool
	code               int32
}

func (e *fakeRPCError) Error() string         { return fmt.Sprintf("fluss error %d", e.code) }
func (e *fakeRPCError) NotSent() bool         { return e.notSent }
func (e *fakeRPCError) Ambiguous() bool       { return e.ambiguous }
func (e *fakeRPCError) Retriable() bool       { return true }
func (e *fakeRPCError) FlussErrorCode() int32 { return e.code }

func TestFlussHooksMetrics(t *testing.T) {
	t.Parallel()
	h := newHarness(t, InstrumentationOptions{})
	f, ctx := h.in.FlussHooks("c1"), context.Background()

	f.OnFlussConnect("127.0.0.1:9123", 10*time.Millisecond, nil)
	f.OnFlussConnect("127.0.0.1:9124", 20*time.Millisecond, nil)
	f.OnFlussConnect("127.0.0.1:9125", time.Second, errors.New("refused"))
	f.OnFlussDisconnect("127.0.0.1:9123", nil)

	f.OnFlussRequest(ctx, "127.0.0.1:9124", "PUT_KV", 0, 100, 20, 5*time.Millisecond, nil)
	f.OnFlussRequest(ctx, "127.0.0.1:9124", "PUT_KV", 0, 100, 20, 15*time.Millisecond, fmt.Errorf("wrapped: %w", &fakeRPCError{code: 12}))
	f.OnFlussRequest(ctx, "127.0.0.1:9124", "LOOKUP", 0, 100, 0, time.Millisecond, &fakeRPCError{notSent: true, code: 1})
	f.OnFlussRequest(ctx, "127.0.0.1:9124", "LOOKUP", 0, 100, 0, time.Millisecond, &fakeRPCError{ambiguous: true, code: 25})
	f.OnFlussRequest(ctx, "127.0.0.1:9124", "LOOKUP", 0, 100, 0, time.Millisecond, context.Canceled)

	c := AttrCluster.String("c1")
	got := h.metrics(t)
	assertMetric(t, got, MetricConnectionsActive, "{connection}", sum(false, point(int64(1), c)))
	assertMetric(t, got, MetricConnectionsCreated, "{connection}", sum(true, point(int64(2), c)))
	assertMetric(t, got, MetricConnectionsFailed, "{connection}", sum(true, point(int64(1), c)))
	assertMetric(t, got, MetricConnectionsClosed, "{connection}", sum(true, point(int64(1), c, AttrOutcome.String("ok"))))
	assertMetric(t, got, MetricConnectDuration, "s", hist(
		histPoint(secondsBuckets, set(c, AttrOutcome.String("ok")), 0.01, 0.02),
		histPoint(secondsBuckets, set(c, AttrOutcome.String("error")), 1.0),
	))
	req := func(n int64, api, outcome, code string) metricdata.DataPoint[int64] {
		return point(n, c, AttrAPI.String(api), AttrOutcome.String(outcome), AttrFlussCode.String(code))
	}
	assertMetric(t, got, MetricBackendRequests, "{request}", sum(true,
		req(1, "PUT_KV", "ok", "0"),
		req(1, "PUT_KV", "error", "12"),
		req(1, "LOOKUP", "not_sent", "1"),
		req(1, "LOOKUP", "ambiguous", "25"),
		req(1, "LOOKUP", "error", "0"),
	))
	assertMetric(t, got, MetricBackendRequestDuration, "s", hist(
		histPoint(secondsBuckets, set(c, AttrAPI.String("PUT_KV"), AttrOutcome.String("ok")), 0.005),
		histPoint(secondsBuckets, set(c, AttrAPI.String("PUT_KV"), AttrOutcome.String("error")), 0.015),
		histPoint(secondsBuckets, set(c, AttrAPI.String("LOOKUP"), AttrOutcome.String("not_sent")), 0.001),
		histPoint(secondsBuckets, set(c, AttrAPI.String("LOOKUP"), AttrOutcome.String("ambiguous")), 0.001),
		histPoint(secondsBuckets, set(c, AttrAPI.String("LOOKUP"), AttrOutcome.String("error")), 0.001),
	))
	assert.Empty(t, h.spans.Ended(), "requests without a span in their context are not traced")
}

func TestWriterHooksMetrics(t *testing.T) {
	t.Parallel()
	h := newHarness(t, InstrumentationOptions{})
	w := h.in.WriterHooks("c1")
	table := domain.TablePath{Database: "shop", Table: "orders"}

	w.BatchesSent(table, 3, 10, 1000) // batches of 334/333/333 bytes, 4/3/3 rows
	w.BatchesSent(table, 1, 5, 2<<20)
	w.Retried(table, 2, "not_leader_or_follower")
	w.Retried(table, 1, "storage_backpressure")
	w.EntriesDone(table, 7, map[string]int{"timeout": 2, "invalid_argument": 0})
	w.BufferUsage(4096, 64<<20)
	w.BufferUsage(1024, 64<<20)
	w.KvPressure(table, 3, 0.5, 750*time.Millisecond)
	w.KvPressure(table, 4, 1, 3*time.Second)
	w.KvPressure(table, 4, 0.01, 0)

	c := AttrCluster.String("c1")
	got := h.metrics(t)
	assertMetric(t, got, MetricBackendWriteRows, "{row}", sum(true, point(int64(15), c)))
	assertMetric(t, got, MetricBackendWriteBytes, "By", sum(true, point(int64(1000+2<<20), c)))
	assertMetric(t, got, MetricWriterBatches, "{batch}", sum(true, point(int64(4), c)))
	assertMetric(t, got, MetricWriterBatchSize, "By", hist(histPoint(bytesBuckets, set(c), int64(334), 333, 333, 2<<20)))
	assertMetric(t, got, MetricWriterBatchRows, "{row}", hist(histPoint(rowsBuckets, set(c), int64(4), 3, 3, 5)))
	assertMetric(t, got, MetricWriterRetries, "{batch}", sum(true,
		point(int64(2), c, AttrCode.String("not_leader_or_follower")),
		point(int64(1), c, AttrCode.String("storage_backpressure")),
	))
	assertMetric(t, got, MetricWriterEntries, "{entry}", sum(true,
		point(int64(7), c, AttrOutcome.String("success"), AttrCode.String("ok")),
		point(int64(2), c, AttrOutcome.String("failed"), AttrCode.String("timeout")),
	))
	assertMetric(t, got, MetricWriterBufferUsed, "By", metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{point(int64(1024), c)}})
	assertMetric(t, got, MetricWriterBufferCapacity, "By", metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{point(int64(64<<20), c)}})
	assertMetric(t, got, MetricWriterKvPressure, "", hist(histPoint(pressureBuckets, set(c), 0.5, 1, 0.01)))
	assertMetric(t, got, MetricWriterKvThrottle, "s", sum(true, point(3.75, c)))
}
