package http

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 28 (lateness): a request whose body stops arriving is answered by
// its deadline, within deadline + 250 ms, not when the header read timeout
// (here 5 s) cuts the connection. The client sends the headers and the
// first bytes of the body it announces, then waits. A body past fasthttp's
// 8 KiB pre-read is read by admitBody: 504 timeout, nothing was written, as
// every deadline is answered. A smaller one fasthttp waits for before the
// handler chain runs, and resets the request when that read fails: the
// answer is the 408 timeout of a client that went silent (nothing was done),
// now by the deadline.
func TestStalledBodyIsAnsweredByTheDeadline(t *testing.T) {
	t.Parallel()
	g := newGateway(t, func(o *Options, _ *Deps) { o.ReadTimeout = 5 * time.Second })
	base := serveOnListener(t, g)
	for _, tc := range []struct {
		name, path, contentType string
		announced, sent         int
		status                  int
		message                 string
	}{
		{"json write", usersWrite, "application/json", 1000, 20, http.StatusRequestTimeout, "nothing was done"},
		{"lookup", usersLookup, "application/json", 1000, 20, http.StatusRequestTimeout, "nothing was done"},
		{"large json write", usersWrite, "application/json", 15_000, 9000, http.StatusGatewayTimeout,
			"the request deadline (300ms) passed before the request body arrived; nothing was written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
			require.NoError(t, err)
			defer conn.Close()
			deadline := 300 * time.Millisecond
			start := time.Now()
			_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: %s\r\nContent-Length: %d\r\n"+
				"X-Fluss-Request-Timeout: %d\r\n\r\n%s", tc.path, tc.contentType, tc.announced, deadline.Milliseconds(),
				`{"entries":[`+strings.Repeat(" ", tc.sent-12))
			require.NoError(t, err)
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			took := time.Since(start)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, tc.status, resp.StatusCode, "%s", body)
			assert.Contains(t, string(body), `"code":"timeout"`)
			assert.Contains(t, string(body), tc.message)
			assert.LessOrEqual(t, took, deadline+250*time.Millisecond, "answered %s after a %s deadline", took, deadline)
		})
	}
}
