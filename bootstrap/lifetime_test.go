package bootstrap

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/goleak"
)

// Stopping the gateway ends every goroutine its REST server started,
// including the lingering close of a connection whose client still has a
// body to send (which would otherwise read on for the linger timeout). Not
// parallel, so that the leak check sees only this test's goroutines.
func TestRESTServerStopEndsItsGoroutines(t *testing.T) {
	before := goleak.IgnoreCurrent()
	env := map[string]string{
		"FLUSS_GATEWAY__METRICS__ENABLED":     "false",
		"FLUSS_GATEWAY__REST__LINGER_TIMEOUT": "1h",
	}
	var rest *RESTServer
	app := fxtest.New(t, Options(testConfig(t, env), slog.New(slog.DiscardHandler)), fx.Populate(&rest))
	app.RequireStart()

	// A body over the limit is refused before it is read: the server closes
	// the connection and lingers, reading what the client still sends.
	c, err := net.Dial("tcp", rest.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "POST /v1/clusters/default/databases HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", 1<<30)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

	start := time.Now()
	app.RequireStop()
	assert.Less(t, time.Since(start), 30*time.Second)
	goleak.VerifyNone(t, before,
		// fasthttp's process-wide clock for the Date header, started once.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		// fasthttp's idle-worker cleaner sleeps 10 s between rounds and only
		// then sees that its pool stopped (fasthttp workerpool.go); it holds
		// nothing of ours.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"))
}
