package bootstrap

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
)

// Issue 27, finding 6: the metrics listener closes an idle keep-alive
// connection after gateway.rest.idle-timeout instead of keeping it forever.
func TestMetricsListenerClosesIdleConnections(t *testing.T) {
	cfg := testConfig(t, map[string]string{
		"FLUSS_GATEWAY__METRICS__ENABLED":                      "true",
		"FLUSS_GATEWAY__METRICS__EXPORTER__PROMETHEUS__LISTEN": "127.0.0.1:0",
		"FLUSS_GATEWAY__REST__IDLE_TIMEOUT":                    "300ms",
	})
	var metrics *MetricsServer
	app := fxtest.New(t, Options(cfg, discard()), fx.Populate(&metrics))
	app.RequireStart()
	defer app.RequireStop()
	require.NotNil(t, metrics.Addr())

	conn, err := net.Dial("tcp", metrics.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n"))
	require.NoError(t, err)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)

	// Idle: the server closes the connection well before this deadline.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	started := time.Now()
	_, err = r.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the server closed the idle connection")
	assert.Less(t, time.Since(started), 4*time.Second)
}
