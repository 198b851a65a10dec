package telemetry

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/attribute"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestLookupKeysFromTheOptionCache: fluss_gateway_lookup_keys_total keeps
// its series and sums when its attribute sets come from the option cache
// (issue 22), with and without the table and database labels, for repeated
// calls and several tables.
func TestLookupKeysFromTheOptionCache(t *testing.T) {
	t.Parallel()
	orders, users := domain.TablePath{Database: "shop", Table: "orders"}, domain.TablePath{Database: "crm", Table: "users"}
	kind, outcome := AttrKind.String, AttrOutcome.String
	cases := []struct {
		name string
		opts InstrumentationOptions
		// labels are the table attributes of orders and users.
		labels func(domain.TablePath) []attribute.KeyValue
	}{
		{name: "no table labels", labels: func(domain.TablePath) []attribute.KeyValue { return nil }},
		{name: "table label", opts: InstrumentationOptions{TableLabel: true},
			labels: func(p domain.TablePath) []attribute.KeyValue {
				return []attribute.KeyValue{AttrTable.String(p.String())}
			}},
		{name: "database label", opts: InstrumentationOptions{DatabaseLabel: true},
			labels: func(p domain.TablePath) []attribute.KeyValue {
				return []attribute.KeyValue{AttrDatabase.String(p.Database)}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, tc.opts)
			g, ctx := h.in.Gateway(), context.Background()
			for range 3 {
				g.RecordLookups(ctx, orders, KindLookup, 2, 1, 0)
				g.RecordLookups(ctx, users, KindPrefixLookup, 1, 0, 1)
			}
			g.RecordLookups(ctx, orders, KindLookup, 0, 0, 5)
			at := func(p domain.TablePath, kvs ...attribute.KeyValue) []attribute.KeyValue {
				return append(kvs, tc.labels(p)...)
			}
			want := []struct {
				n     int64
				attrs []attribute.KeyValue
			}{
				{6, at(orders, kind(KindLookup), outcome(OutcomeFound))},
				{3, at(orders, kind(KindLookup), outcome(OutcomeMissed))},
				{5, at(orders, kind(KindLookup), outcome(OutcomeFailed))},
				{3, at(users, kind(KindPrefixLookup), outcome(OutcomeFound))},
				{3, at(users, kind(KindPrefixLookup), outcome(OutcomeFailed))},
			}
			assertMetric(t, h.metrics(t), MetricLookupKeys, "{key}", sum(true,
				point(want[0].n, want[0].attrs...), point(want[1].n, want[1].attrs...), point(want[2].n, want[2].attrs...),
				point(want[3].n, want[3].attrs...), point(want[4].n, want[4].attrs...)))
		})
	}
}

// TestStatusCode: the status_code values made once read as strconv.Itoa's.
func TestStatusCode(t *testing.T) {
	t.Parallel()
	for _, status := range []int{0, 99, 100, 200, 404, 429, 499, 599, 600, 999, -1} {
		assert.Equal(t, strconv.Itoa(status), statusCode(status), status)
	}
	h := newHarness(t, InstrumentationOptions{})
	g, ctx := h.in.Gateway(), context.Background()
	g.ObserveRequestDetail(ctx, "POST", "/r", 200, "", domain.TablePath{}, time.Millisecond)
	g.ObserveRequestDetail(ctx, "POST", "/r", 200, "", domain.TablePath{}, time.Millisecond)
	g.ObserveRequestDetail(ctx, "POST", "/r", 429, "resource_exhausted", domain.TablePath{}, time.Millisecond)
	assertMetric(t, h.metrics(t), MetricRESTRequests, "{request}", sum(true,
		point(int64(2), AttrMethod.String("POST"), AttrRoute.String("/r"), AttrStatusCode.String("200"),
			AttrStatusClass.String("2xx"), AttrErrorCode.String(CodeOK)),
		point(int64(1), AttrMethod.String("POST"), AttrRoute.String("/r"), AttrStatusCode.String("429"),
			AttrStatusClass.String("4xx"), AttrErrorCode.String("resource_exhausted")),
	))
}
