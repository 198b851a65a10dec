package http

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// CompressMinBytes is the smallest response body the gateway compresses;
// below it the encoding costs more than it saves.
const CompressMinBytes = 1 << 10

// zstdWindow is the window of the response zstd encoder (RFC 8878
// section 3.1.1.1.2); decoders must support windows up to 8 MiB.
const zstdWindow = 1 << 20

// Response encodings, in the gateway's order of preference at equal quality.
const (
	encodingZstd = "zstd"
	encodingGzip = "gzip"
)

var (
	gzipWriters = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
		return w
	}}
	// One encoder per processor: with a single one, EncodeAll made every
	// answer wait for the one being encoded, so a small answer queued behind
	// a large one (issue 27: 0.6 -> 115 ms).
	//
	// A 1 MiB window with the encoder's low-memory mode: each encoder keeps
	// a history buffer for its whole life, 8 MiB with the default window,
	// so the encoders that compressed the documentation pages at start held
	// 16 MiB for good (issue 21); now about 1 MiB each. Answers over 1 MiB
	// compress in 1 MiB windows.
	zstdEncoder = newZstdEncoder(runtime.GOMAXPROCS(0))
)

// newZstdEncoder returns the response encoder: concurrency encoders at
// zstd's fastest level, each with a zstdWindow window in low-memory mode.
func newZstdEncoder(concurrency int) *zstd.Encoder {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(concurrency),
		zstd.WithWindowSize(zstdWindow), zstd.WithLowerEncoderMem(true))
	return enc
}

// compressResponse encodes a response body of at least CompressMinBytes
// with zstd or gzip (RFC 9110 §8.4, RFC 8878) when the request's
// Accept-Encoding allows it (zstd only when named, since not every client
// decodes it), and adds `Vary: Accept-Encoding` to every answer that could
// have been encoded. Bodies already encoded, HEAD answers and 204/304 are
// left alone.
func compressResponse(c *fiber.Ctx) error {
	err := c.Next()
	if streamOf(c) != nil {
		return err // a streamed answer is sent as it is written, never encoded whole
	}
	resp := c.Response()
	status := resp.StatusCode()
	if c.Method() == fiber.MethodHead || status == fiber.StatusNoContent || status == fiber.StatusNotModified ||
		len(resp.Header.Peek(fiber.HeaderContentEncoding)) > 0 {
		return err
	}
	resp.Header.Add(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	body := resp.Body()
	if len(body) < CompressMinBytes {
		return err
	}
	enc := negotiateEncoding(c.Get(fiber.HeaderAcceptEncoding))
	if enc == "" {
		return err
	}
	out := encodeBody(enc, body)
	if out == nil || len(out) >= len(body) {
		return err
	}
	resp.SetBodyRaw(out)
	resp.Header.Set(fiber.HeaderContentEncoding, enc)
	resp.Header.SetContentLength(len(out))
	return err
}

// encodeBody encodes body with enc (zstd or gzip); nil on failure.
func encodeBody(enc string, body []byte) []byte {
	switch enc {
	case encodingZstd:
		return zstdEncoder.EncodeAll(body, make([]byte, 0, len(body)/4))
	case encodingGzip:
		var b bytes.Buffer
		b.Grow(len(body) / 4)
		w := gzipWriters.Get().(*gzip.Writer)
		defer gzipWriters.Put(w)
		w.Reset(&b)
		if _, err := w.Write(body); err != nil {
			return nil
		}
		if err := w.Close(); err != nil {
			return nil
		}
		return b.Bytes()
	}
	return nil
}

// negotiateEncoding picks zstd or gzip from an Accept-Encoding value: the
// highest q-value among them (ties: zstd), `*` standing for gzip when gzip
// is not listed itself; "" when
// neither is acceptable.
func negotiateEncoding(accept string) string {
	if accept == "" {
		return "" // nothing asked for (identity), without splitting
	}
	best, bestQ := "", 0.0
	explicit := map[string]bool{}
	for _, part := range strings.Split(accept, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		explicit[strings.ToLower(strings.TrimSpace(name))] = true
	}
	for _, part := range strings.Split(accept, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		if name == "*" {
			if explicit[encodingGzip] {
				continue // gzip has its own q-value
			}
			name = encodingGzip
		}
		if (name != encodingGzip && name != encodingZstd) || q <= 0 {
			continue
		}
		if q > bestQ || (q == bestQ && name == encodingZstd) {
			best, bestQ = name, q
		}
	}
	return best
}
