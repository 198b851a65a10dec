package telemetry

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// seriesOf counts the data points (series) of a counter.
func seriesOf(t *testing.T, got map[string]metricdata.Metrics, name string) []attribute.Set {
	t.Helper()
	m, ok := got[name]
	require.True(t, ok, "metric %s missing", name)
	s, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "metric %s is not an int64 sum", name)
	out := make([]attribute.Set, 0, len(s.DataPoints))
	for _, p := range s.DataPoints {
		out = append(out, p.Attributes)
	}
	return out
}

// TestTableLabelCardinalityCap: 10,000 distinct tables with table and
// database labels on give at most MaxTables+1 values per family: the first
// MaxTables tables by first use, then `other`.
func TestTableLabelCardinalityCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, InstrumentationOptions{TableLabel: true, DatabaseLabel: true, MaxTables: 50})
	g, w, ctx := h.in.Gateway(), h.in.WriterHooks("c1"), context.Background()
	for i := range 10_000 {
		table := domain.TablePath{Database: fmt.Sprintf("db%d", i), Table: fmt.Sprintf("t%d", i)}
		g.RecordEntries(ctx, table, []domain.EntryResult{{}})
		g.ObserveRequestDetail(ctx, "POST", "/v1/clusters/{cluster}/databases/{database}/tables/{table}/records", 200, "", table, time.Millisecond)
		g.RecordLookups(ctx, table, KindLookup, 1, 1, 0)
		w.BatchesSent(table, 1, 1, 10)
	}
	got := h.metrics(t)
	for _, name := range []string{MetricWriteEntries, MetricRESTRequests, MetricBackendWriteRows} {
		series := seriesOf(t, got, name)
		assert.LessOrEqual(t, len(series), 51, name)
		tables := map[string]bool{}
		for _, s := range series {
			v, ok := s.Value(AttrTable)
			require.True(t, ok, "%s: no table attribute", name)
			tables[v.AsString()] = true
		}
		assert.Len(t, tables, 51, name)
		assert.True(t, tables["db0.t0"] && tables["db49.t49"] && tables[OtherLabel], name)
		assert.False(t, tables["db50.t50"], name)
	}
	assert.LessOrEqual(t, len(seriesOf(t, got, MetricLookupKeys)), 2*51)
}

func TestLookupKeysAndEntryOutcomes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, InstrumentationOptions{FlussCodeName: func(c int32) string { return fmt.Sprintf("NAME_%d", c) }})
	g, w, ctx := h.in.Gateway(), h.in.WriterHooks("c1"), context.Background()
	table := domain.TablePath{Database: "shop", Table: "orders"}
	g.RecordLookups(ctx, table, KindLookup, 3, 2, 0)
	g.RecordLookups(ctx, table, KindPrefixLookup, 1, 0, 1)
	w.EntriesDoneApplied(table, 2, map[string]int{"invalid_argument": 1}, map[string]int{"timeout": 4})
	h.in.FlussHooks("c1").OnFlussRequest(ctx, "127.0.0.1:1", "PUT_KV", 0, 1, 1, time.Millisecond, &fakeRPCError{code: 36})

	got := h.metrics(t)
	assertMetric(t, got, MetricLookupKeys, "{key}", sum(true,
		point(int64(3), AttrKind.String(KindLookup), AttrOutcome.String(OutcomeFound)),
		point(int64(2), AttrKind.String(KindLookup), AttrOutcome.String(OutcomeMissed)),
		point(int64(1), AttrKind.String(KindPrefixLookup), AttrOutcome.String(OutcomeFound)),
		point(int64(1), AttrKind.String(KindPrefixLookup), AttrOutcome.String(OutcomeFailed)),
	))
	c := AttrCluster.String("c1")
	assertMetric(t, got, MetricWriterEntries, "{entry}", sum(true,
		point(int64(2), c, AttrOutcome.String(OutcomeSuccess), AttrCode.String(CodeOK)),
		point(int64(1), c, AttrOutcome.String(OutcomeFailed), AttrCode.String("invalid_argument")),
		point(int64(4), c, AttrOutcome.String(OutcomeUnknown), AttrCode.String("timeout")),
	))
	reqs := seriesOf(t, got, MetricBackendRequests)
	require.Len(t, reqs, 1)
	v, _ := reqs[0].Value(AttrFlussCode)
	assert.Equal(t, "NAME_36", v.AsString())
}

func TestScanMetrics(t *testing.T) {
	t.Parallel()
	h := newHarness(t, InstrumentationOptions{})
	g, ctx := h.in.Gateway(), context.Background()
	table := domain.TablePath{Database: "shop", Table: "events"}
	g.RecordScan(ctx, table, 7, false, CodeOK)
	g.RecordScan(ctx, table, 0, true, CodeOK)
	g.RecordScan(ctx, table, 0, false, "invalid_argument")

	got := h.metrics(t)
	assertMetric(t, got, MetricScanRequests, "{request}", sum(true,
		point(int64(1), AttrOutcome.String(CodeOK), AttrCaughtUp.Bool(false)),
		point(int64(1), AttrOutcome.String(CodeOK), AttrCaughtUp.Bool(true)),
		point(int64(1), AttrOutcome.String("invalid_argument"), AttrCaughtUp.Bool(false)),
	))
	assertMetric(t, got, MetricScanRecords, "{record}", sum(true, point(int64(7))))
}
