package telemetry

import (
	"context"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// PrometheusFamilies are the family names and types the gateway's own
// instruments produce through the OTel Prometheus exporter.
var PrometheusFamilies = map[string]string{
	"fluss_gateway_rest_requests_total":              "counter",
	"fluss_gateway_rest_request_duration_seconds":    "histogram",
	"fluss_gateway_write_entries_total":              "counter",
	"fluss_gateway_backend_write_rows_total":         "counter",
	"fluss_gateway_backend_write_bytes_total":        "counter",
	"fluss_gateway_backend_requests_total":           "counter",
	"fluss_gateway_backend_request_duration_seconds": "histogram",
	"fluss_gateway_connections_active":               "gauge",
	"fluss_gateway_connections_created_total":        "counter",
	"fluss_gateway_connections_closed_total":         "counter",
	"fluss_gateway_connections_failed_total":         "counter",
	"fluss_gateway_connect_duration_seconds":         "histogram",
	"fluss_client_writer_batches_total":              "counter",
	"fluss_client_writer_batch_size_bytes":           "histogram",
	"fluss_client_writer_batch_rows":                 "histogram",
	"fluss_client_writer_retries_total":              "counter",
	"fluss_client_writer_entries_total":              "counter",
	"fluss_client_writer_buffer_used_bytes":          "gauge",
	"fluss_client_writer_buffer_capacity_bytes":      "gauge",
	"fluss_client_writer_kv_pressure":                "histogram",
	"fluss_client_writer_kv_throttle_seconds_total":  "counter",
}

var typeLine = regexp.MustCompile(`(?m)^# TYPE (\S+) (\S+)$`)

// TestPrometheusFamilyNames checks that the instrument names and units come
// out of the Prometheus exporter as the documented family names, next to the
// Go runtime families, with no table or request labels by default.
func TestPrometheusFamilyNames(t *testing.T) {
	t.Parallel()
	p, err := Setup(context.Background(), Options{Prometheus: true, Getenv: env(nil)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	in, err := NewInstrumentation(InstrumentationOptions{TracerProvider: p.TracerProvider, MeterProvider: p.MeterProvider})
	require.NoError(t, err)

	ctx := context.Background()
	table := domain.TablePath{Database: "shop", Table: "orders"}
	in.Gateway().ObserveRequest(ctx, "POST", "/v1/clusters/{cluster}/databases", 201, time.Millisecond)
	in.Gateway().RecordEntries(ctx, table, []domain.EntryResult{{}, {Code: "timeout", Applied: domain.AppliedUnknown}})
	f := in.FlussHooks("default")
	f.OnFlussConnect("127.0.0.1:9123", time.Millisecond, nil)
	f.OnFlussConnect("127.0.0.1:9124", time.Millisecond, &fakeRPCError{notSent: true, code: 1})
	f.OnFlussDisconnect("127.0.0.1:9123", nil)
	f.OnFlussRequest(ctx, "127.0.0.1:9123", "PUT_KV", 0, 10, 10, time.Millisecond, nil)
	w := in.WriterHooks("default")
	w.BatchesSent(table, 1, 1, 100)
	w.Retried(table, 1, "not_leader_or_follower")
	w.EntriesDone(table, 1, nil)
	w.BufferUsage(100, 1000)
	w.KvPressure(table, 0, 0.5, time.Second)

	rec := httptest.NewRecorder()
	p.MetricsHandler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, 200, rec.Code)
	body := rec.Body.String()

	got := map[string]string{}
	for _, m := range typeLine.FindAllStringSubmatch(body, -1) {
		got[m[1]] = m[2]
	}
	for name, typ := range PrometheusFamilies {
		assert.Equalf(t, typ, got[name], "family %s", name)
	}
	for name := range got {
		if strings.HasPrefix(name, "fluss_") {
			assert.Containsf(t, PrometheusFamilies, name, "undocumented family %s", name)
		}
	}
	assert.Contains(t, got, "go_goroutine_count", "runtime metrics")
	assert.Regexp(t, `(?m)^fluss_gateway_rest_requests_total\{[^}]*method="POST"[^}]*route="/v1/clusters/\{cluster\}/databases"[^}]*status_class="2xx",status_code="201"[^}]*\} 1$`, body)
	assert.Regexp(t, `(?m)^fluss_gateway_connections_active\{cluster="default"[^}]*\} 0$`, body)
	assert.NotContains(t, body, `table="`, "no table label unless configured")
}
