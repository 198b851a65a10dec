package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

func TestLogHandler(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(NewLogHandler(slog.NewJSONHandler(&buf, nil)))
	assert.Same(t, log.Handler(), NewLogHandler(log.Handler()), "wrapping twice is a no-op")

	sc := spanContext(t, "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
	ctx := trace.ContextWithSpanContext(context.Background(), sc)

	log.InfoContext(ctx, "with span")
	log.InfoContext(ContextWithRequestID(ctx, "req-1"), "with span and request id")
	log.With("component", "rest").InfoContext(ContextWithRequestID(context.Background(), "req-2"), "request id only")
	log.InfoContext(ContextWithRequestID(ctx, "req-3"), "explicit request id wins", "request_id", "req-explicit")
	log.Info("no context")

	lines := logLines(t, &buf)
	require.Len(t, lines, 5)
	assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", lines[0]["trace_id"])
	assert.Equal(t, "b7ad6b7169203331", lines[0]["span_id"])
	assert.NotContains(t, lines[0], "request_id")

	assert.Equal(t, "req-1", lines[1]["request_id"])
	assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", lines[1]["trace_id"])

	assert.Equal(t, "req-2", lines[2]["request_id"])
	assert.Equal(t, "rest", lines[2]["component"])
	assert.NotContains(t, lines[2], "trace_id")

	assert.Equal(t, "req-explicit", lines[3]["request_id"])
	assert.Equal(t, 1, strings.Count(strings.Split(buf.String(), "\n")[3], `"request_id"`), "no duplicate key")

	assert.NotContains(t, lines[4], "trace_id")
	assert.NotContains(t, lines[4], "request_id")
}

// The rpc hook interfaces and the writer's Metrics interface, copied with
// their exact method sets (adapters/fluss/rpc/hooks.go,
// adapters/fluss/writer/options.go): telemetry must satisfy them without
// importing those packages. tests/otel/conformance asserts the same against
// the real interfaces.
type (
	rpcConnectHook interface {
		OnFlussConnect(addr string, elapsed time.Duration, err error)
	}
	rpcDisconnectHook interface {
		OnFlussDisconnect(addr string, err error)
	}
	rpcRequestHook interface {
		OnFlussRequest(ctx context.Context, addr, api string, version int16, requestBytes, responseBytes int, elapsed time.Duration, err error)
	}
	writerMetrics interface {
		BatchesSent(table domain.TablePath, batches, rows, bytes int)
		Retried(table domain.TablePath, batches int, code string)
		EntriesDone(table domain.TablePath, ok int, failed map[string]int)
		BufferUsage(used, capacity int64)
	}
)

var (
	_ rpcConnectHook    = (*FlussHooks)(nil)
	_ rpcDisconnectHook = (*FlussHooks)(nil)
	_ rpcRequestHook    = (*FlussHooks)(nil)
	_ writerMetrics     = (*WriterHooks)(nil)
)
