package http

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNegotiateEncoding(t *testing.T) {
	t.Parallel()
	for accept, want := range map[string]string{
		"":                         "",
		"identity":                 "",
		"gzip":                     "gzip",
		"GZIP, deflate":            "gzip",
		"zstd":                     "zstd",
		"gzip, zstd":               "zstd",
		"gzip;q=1, zstd;q=0.5":     "gzip",
		"zstd;q=0, gzip;q=0.1":     "gzip",
		"*":                        "gzip",
		"gzip;q=0, *":              "",
		"br, deflate":              "",
		"gzip;q=0":                 "",
		"zstd ; q=0.8 , gzip;q=.7": "zstd",
	} {
		assert.Equal(t, want, negotiateEncoding(accept), "%q", accept)
	}
}

// TestResponseCompression: a large answer (the OpenAPI document) is encoded
// as the client asks, decodes to the plain answer, and says Vary; a small
// one and one to a client that asked nothing stay plain.
func TestResponseCompression(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	plain := g.call("GET", "/v1/openapi.json", "")
	require.Equal(t, 200, plain.status)
	require.Greater(t, len(plain.body), CompressMinBytes)
	assert.Empty(t, plain.header.Get("Content-Encoding"))
	assert.Contains(t, plain.header.Values("Vary"), "Accept-Encoding")

	gz := g.call("GET", "/v1/openapi.json", "", "Accept-Encoding", "gzip")
	require.Equal(t, "gzip", gz.header.Get("Content-Encoding"))
	assert.Less(t, len(gz.body), len(plain.body))
	zr, err := gzip.NewReader(bytes.NewReader(gz.body))
	require.NoError(t, err)
	got, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, plain.body, got)

	zs := g.call("GET", "/v1/openapi.json", "", "Accept-Encoding", "gzip, zstd")
	require.Equal(t, "zstd", zs.header.Get("Content-Encoding"))
	dec, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer dec.Close()
	got, err = dec.DecodeAll(zs.body, nil)
	require.NoError(t, err)
	assert.Equal(t, plain.body, got)

	small := g.call("GET", "/v1/clusters", "", "Accept-Encoding", "gzip")
	require.Equal(t, 200, small.status)
	assert.Less(t, len(small.body), CompressMinBytes)
	assert.Empty(t, small.header.Get("Content-Encoding"))
}

// Issue 21: the response zstd encoder keeps a bounded history: the
// documentation pages compressed at start no longer pin 8 MiB per encoder.
// Answers over the window still round-trip.
func TestZstdResponseEncoderMemoryIsBounded(t *testing.T) {
	dec, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer dec.Close()
	for _, size := range []int{4 << 10, zstdWindow / 2, 3 * zstdWindow} {
		body := bytes.Repeat([]byte(`{"k":1,"v":"abcdefgh"},`), size/23+1)[:size]
		out := encodeBody(encodingZstd, body)
		require.NotNil(t, out)
		got, err := dec.DecodeAll(out, nil)
		require.NoError(t, err)
		assert.Equal(t, body, got)
	}
	// One fresh encoder, kept alive, after compressing a 4 MiB answer.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	enc := newZstdEncoder(1)
	enc.EncodeAll(bytes.Repeat([]byte("0123456789abcdef"), 256<<10), nil)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(enc)
	assert.Less(t, int64(after.HeapInuse)-int64(before.HeapInuse), int64(4<<20),
		"an encoder keeps about its window of history, not 8 MiB")
}
