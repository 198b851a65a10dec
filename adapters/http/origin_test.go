package http

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestRedactBackend(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"fluss GET_METADATA 127.0.0.1:19999: connect failed: dial tcp 127.0.0.1:19999: connect: connection refused": "the Fluss cluster: connect failed: dial tcp <server>: connect: connection refused",
		"fluss PRODUCE_LOG tablet-1.fluss.svc:9124: no response within the request timeout":                         "the Fluss cluster: no response within the request timeout",
		"fluss [::1]:9123: request cancelled":                               "the Fluss cluster: request cancelled",
		"the Fluss cluster is unavailable: no tablet server leads bucket 3": "the Fluss cluster is unavailable: no tablet server leads bucket 3",
		"table `d.t`: 5 entries failed; retry after 2s":                     "table `d.t`: 5 entries failed; retry after 2s",
	}
	for in, want := range cases {
		assert.Equal(t, want, redactBackend(in), in)
	}
}

// Issue 27, finding 6: a backend failure's answer names neither the Fluss
// RPC nor the server address (the access log keeps them); data answers are
// not cacheable.
func TestBackendDetailsStayInTheLog(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.clusters.Cluster("default").Catalog().SetHook(func(context.Context, string) error {
		return &domain.Error{Kind: domain.KindUnavailable, Message: "fluss GET_METADATA 10.1.2.3:9123: connect failed: dial tcp 10.1.2.3:9123: connect: connection refused"}
	})
	r := g.call("GET", db, "")
	require.Equal(t, 503, r.status, string(r.body))
	msg := r.message(t)
	assert.NotContains(t, msg, "10.1.2.3")
	assert.NotContains(t, msg, "GET_METADATA")
	assert.Contains(t, msg, "connect failed")
	assert.Contains(t, g.logs.String(), "GET_METADATA 10.1.2.3:9123", "the operator still sees it")
}

func TestDataAnswersAreNotStored(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	for _, path := range []string{db, db + "/missing", "/v1/clusters"} {
		r := g.call("GET", path, "")
		assert.Equal(t, "no-store", r.header.Get("Cache-Control"), path)
	}
	r := g.call("GET", pathOpenAPI, "")
	assert.NotEqual(t, "no-store", r.header.Get("Cache-Control"), "the document is not data")
}

// Issue 27, finding 6: a client that goes silent mid-request is answered
// 408 and logged at INFO, not counted as a 504 gateway failure at WARN.
func TestSilentClientIsA408(t *testing.T) {
	t.Parallel()
	g := newGateway(t, func(o *Options, _ *Deps) { o.ReadTimeout = 300 * time.Millisecond })
	base := serveOnListener(t, g)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("GET /v1/clusters HTTP/1.1\r\nHost: localhost\r\n"))
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	line, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, line, " 408 ")
	require.Eventually(t, func() bool { return strings.Contains(g.logs.String(), `"status":408`) }, 5*time.Second, 20*time.Millisecond)
	assert.NotContains(t, g.logs.String(), `"level":"WARN"`)
}

// Issue 27, finding 6: the docs bundle is served from its encodings made
// at start: the same bytes every time, in the coding the client prefers,
// and the identity body to a client that takes none.
func TestDocsBundleEncodedOnce(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withDocs())
	path := pathDocsPrefix + "swagger-ui-bundle.js"
	plain := g.call("GET", path, "")
	require.Equal(t, 200, plain.status)
	require.Empty(t, plain.header.Get("Content-Encoding"))
	for _, enc := range []string{"gzip", "zstd"} {
		first := g.call("GET", path, "", "Accept-Encoding", enc)
		second := g.call("GET", path, "", "Accept-Encoding", enc)
		require.Equal(t, enc, first.header.Get("Content-Encoding"))
		assert.Contains(t, first.header.Get("Vary"), "Accept-Encoding")
		assert.Less(t, len(first.body), len(plain.body)/2)
		assert.Equal(t, first.body, second.body, "the same encoded bytes")
		var decoded []byte
		if enc == "gzip" {
			r, err := gzip.NewReader(bytes.NewReader(first.body))
			require.NoError(t, err)
			decoded, err = io.ReadAll(r)
			require.NoError(t, err)
		} else {
			d, err := zstd.NewReader(nil)
			require.NoError(t, err)
			decoded, err = d.DecodeAll(first.body, nil)
			d.Close()
			require.NoError(t, err)
		}
		assert.Equal(t, plain.body, decoded)
	}
}
