package http

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression tests of issue 14 (security review) that need only the HTTP
// adapter; they run over a real socket (serveOnListener).

// envelopeOf decodes an error envelope.
func envelopeOf(t *testing.T, body []byte) envelopeBody {
	t.Helper()
	var e envelope
	require.NoError(t, json.Unmarshal(body, &e), "body: %s", body)
	return e.Error
}

// Finding 1: a long key in front of a long array cost time quadratic in
// both (a field path was built for every element) and echoed the key in a
// 65 KB message. The document is now refused at the key, with a short
// message, and the work is linear.
func TestHostileKeyBodyIsRefusedCheaply(t *testing.T) {
	g := newGateway(t, withMaxBody(32<<20))
	base := serveOnListener(t, g)
	for _, kib := range []int{64, 128, 256} {
		body := hostileKeyBody(kib<<10, 20000)
		status, resp, _, _, allocated := measureRequest(t, base, body)
		assert.Equal(t, 400, status, "%d KiB key", kib)
		e := envelopeOf(t, resp)
		assert.Equal(t, "invalid_argument", e.Code)
		assert.Less(t, len(resp), 1024, "the message must not echo the key: %d bytes", len(resp))
		assert.True(t, strings.Contains(e.Message, "longer than the limit of 1024 bytes"), "message: %.200s", e.Message)
		// Before the fix: 4.4, 8.4 and 16.6 GB allocated.
		assert.Less(t, allocated, uint64(64<<20), "%d KiB key: %d bytes allocated", kib, allocated)

		// The same body gzip-compressed (a few hundred bytes on the wire).
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_, _ = zw.Write(body)
		require.NoError(t, zw.Close())
		status, resp, _, _, _ = measureRequest(t, base, gz.Bytes(), "Content-Encoding", "gzip", "X-Fluss-Request-Timeout", "2s")
		assert.Equal(t, 400, status, "%d KiB key, gzip", kib)
		assert.Less(t, len(resp), 1024)
	}
}

// Finding 1: a key under the cap still gets a short message, and elements
// after it are checked without a path being built for each.
func TestLongKeysAreShortenedInMessages(t *testing.T) {
	g := newGateway(t)
	base := serveOnListener(t, g)
	key := strings.Repeat("k", 1000)
	status, resp, _, _, _ := measureRequest(t, base, []byte(`{"`+key+`":[0,0,0]}`))
	require.Equal(t, 400, status)
	e := envelopeOf(t, resp)
	assert.Equal(t, strings.Repeat("k", maxPathKeyInMessage)+"…: unknown field", e.Message)

	status, resp, _, _, _ = measureRequest(t, base, []byte(`{"database":"d","custom_properties":{"a":"1","a":"2"}}`))
	require.Equal(t, 400, status)
	assert.Equal(t, `custom_properties."a": duplicate key`, envelopeOf(t, resp).Message)
}

// Finding 1: the catalog routes have their own body limit, far below the
// write limit, applied to the decompressed body as well.
func TestCatalogBodyLimit(t *testing.T) {
	g := newGateway(t, withMaxBody(32<<20), func(o *Options, _ *Deps) { o.MaxMetadataRequestBytes = 64 << 10 })
	base := serveOnListener(t, g)
	big := []byte(`{"database":"d","comment":"` + strings.Repeat("x", 64<<10) + `"}`)
	status, resp, _, _, _ := measureRequest(t, base, big)
	assert.Equal(t, 413, status)
	e := envelopeOf(t, resp)
	assert.Equal(t, "limit_exceeded", e.Code)
	assert.Contains(t, e.Message, "limit of 65536 bytes for catalog requests")

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(big)
	require.NoError(t, zw.Close())
	require.Less(t, gz.Len(), 1024)
	status, resp, _, _, _ = measureRequest(t, base, gz.Bytes(), "Content-Encoding", "gzip")
	assert.Equal(t, 413, status)
	assert.Contains(t, envelopeOf(t, resp).Message, "decompressed request body exceeds the limit of 65536 bytes")

	status, resp, _, _, _ = measureRequest(t, base, []byte(`{"database":"small"}`))
	assert.Equal(t, 201, status, "%s", resp)
}

// Finding 1: the deadline is checked while the document is parsed, so a
// large body that fails at its end answers 504 at the deadline, not 400
// long after it.
func TestDeadlineIsCheckedWhileParsing(t *testing.T) {
	g := newGateway(t, withMaxBody(32<<20), func(o *Options, _ *Deps) { o.MaxMetadataRequestBytes = 32 << 20 })
	base := serveOnListener(t, g)
	g.mustCreateDatabase("d")
	var b strings.Builder
	b.WriteString(`{"table_name":"t","columns":[`)
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&b, `{"name":"c%d","data_type":{"type":"INTEGER"}},`, i)
	}
	b.WriteString(`{"name":"last","data_type":{"type":"INTEGER"},"bogus":1}]}`)
	req := []byte(b.String())
	started := time.Now()
	status, resp := postJSON(t, base+db+"/d/tables", req, "X-Fluss-Request-Timeout", "1ms")
	elapsed := time.Since(started)
	assert.Equal(t, 504, status, "%s", resp)
	assert.Equal(t, "timeout", envelopeOf(t, resp).Code)
	t.Logf("answered after %v", elapsed)
}
