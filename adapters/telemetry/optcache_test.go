package telemetry

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestOptionCache: a key's attributes are built once and the same option is
// returned after; past maxCachedOptions keys, options are still right but
// built per call (the cache does not grow).
func TestOptionCache(t *testing.T) {
	var c optionCache
	builds := 0
	build := func(v string) func() []attribute.KeyValue {
		return func() []attribute.KeyValue { builds++; return []attribute.KeyValue{AttrCode.String(v)} }
	}
	want := func(v string) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(AttrCode.String(v)))
	}
	k := optKey{family: famEntries, s0: "success", s1: "ok", table: domain.TablePath{Database: "d", Table: "t"}}
	first := c.get(k, build("ok"))
	assert.Equal(t, want("ok"), first)
	assert.Equal(t, first, c.get(k, build("ok")))
	assert.Equal(t, 1, builds, "built once")
	k.table.Table = "u"
	assert.Equal(t, want("u"), c.get(k, build("u")), "another table, another key")
	for i := range maxCachedOptions + 10 {
		v := fmt.Sprint(i)
		assert.Equal(t, want(v), c.get(optKey{family: famIngest, s0: v}, build(v)))
	}
	assert.Len(t, c.m, maxCachedOptions)
	builds = 0
	assert.Equal(t, want("over"), c.get(optKey{family: famIngest, s0: "over"}, build("over")))
	assert.Equal(t, want("over"), c.get(optKey{family: famIngest, s0: "over"}, build("over")))
	assert.Equal(t, 2, builds, "past the bound: built per call")
}

// BenchmarkRecordWriteRequest records what one write request records (its
// REST request, verdicts and body, the writer's verdicts and one send).
func BenchmarkRecordWriteRequest(b *testing.B) {
	h := newHarness(b, InstrumentationOptions{TableLabel: true})
	g, w := h.in.Gateway(), h.in.WriterHooks("c1")
	table := domain.TablePath{Database: "d", Table: "bench"}
	results := make([]domain.EntryResult, 500)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		g.ObserveRequestDetail(ctx, "POST", "/v1/clusters/{cluster}/databases/{database}/tables/{table}/records", 200, "", table, time.Millisecond)
		g.RecordEntries(ctx, table, results)
		g.ObserveIngest(ctx, "application/json", table, 500, 120_000)
		w.EntriesDone(table, 500, nil)
		w.BatchesSent(table, 4, 500, 40_000)
	}
}
