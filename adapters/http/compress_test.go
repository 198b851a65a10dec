package http

import (
	"bytes"
	"io"
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
