package http

import (
	"bytes"
	"context"
	"fmt"
	"io"
	nethttp "net/http"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostileKeyBody is {"<keyBytes-long key>":[0,0,…]} with elements zeros:
// the body of issue 14 finding 1.
func hostileKeyBody(keyBytes, elements int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"`)
	b.WriteString(strings.Repeat("k", keyBytes))
	b.WriteString(`":[`)
	for i := 0; i < elements; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('0')
	}
	b.WriteString("]}")
	return b.Bytes()
}

// measureRequest sends body to create-database over a real socket and
// reports the status, the elapsed time, the peak live heap sampled every
// millisecond while the request runs, and the bytes allocated.
func measureRequest(t *testing.T, base string, body []byte, headers ...string) (status int, respBody []byte, elapsed time.Duration, peakHeap, allocated uint64) {
	t.Helper()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	req, err := nethttp.NewRequest("POST", base+db, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	started := time.Now()
	resp, err := nethttp.DefaultClient.Do(req)
	require.NoError(t, err)
	respBody, err = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	elapsed = time.Since(started)
	close(stop)
	<-sampled
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if p := peak.Load(); p > before.HeapAlloc {
		peakHeap = p - before.HeapAlloc
	}
	return resp.StatusCode, respBody, elapsed, peakHeap, after.TotalAlloc - before.TotalAlloc
}

// TestMeasureHostileKeyBodies prints time and peak heap of the finding-1
// bodies (64, 128, 256 KiB keys; FLUSS_MEASURE_ELEMENTS zeros, default
// 20000). It is a measurement, not a check: it runs only with
// FLUSS_MEASURE=1.
//
//	FLUSS_MEASURE=1 go test -count=1 -run TestMeasureHostileKeyBodies -v ./adapters/http/
func TestMeasureHostileKeyBodies(t *testing.T) {
	if os.Getenv("FLUSS_MEASURE") != "1" {
		t.Skip("measurement; set FLUSS_MEASURE=1")
	}
	elements := 20000
	if v := os.Getenv("FLUSS_MEASURE_ELEMENTS"); v != "" {
		_, err := fmt.Sscan(v, &elements)
		require.NoError(t, err)
	}
	g := newGateway(t, withMaxBody(32<<20), withTimeout(60*time.Second))
	base := serveOnListener(t, g)
	for _, kib := range []int{64, 128, 256} {
		body := hostileKeyBody(kib<<10, elements)
		status, resp, elapsed, peak, alloc := measureRequest(t, base, body)
		t.Logf("key %3d KiB, %d elements, body %d bytes: status %d, %v, peak heap +%.1f MiB, allocated %.1f MiB, response %d bytes",
			kib, elements, len(body), status, elapsed.Round(time.Millisecond), float64(peak)/(1<<20), float64(alloc)/(1<<20), len(resp))
	}
	// A flat 4 MiB array of zeros.
	flat := append(append([]byte("["), bytes.Repeat([]byte("0,"), 2<<20-1)...), '0', ']')
	status, resp, elapsed, peak, alloc := measureRequest(t, base, flat)
	t.Logf("flat array, body %d bytes: status %d, %v, peak heap +%.1f MiB, allocated %.1f MiB, response %d bytes",
		len(flat), status, elapsed.Round(time.Millisecond), float64(peak)/(1<<20), float64(alloc)/(1<<20), len(resp))
}

// withMaxBody sets the body limit (gateway.rest.write.max-request-bytes).
func withMaxBody(n int64) gatewayOption {
	return func(o *Options, _ *Deps) { o.MaxRequestBytes = n }
}

// BenchmarkDecodeStrictFlatArray decodes a 4 MiB array of integers that the
// target type declares, so the whole document is checked (no early stop).
//
//	go test -run '^$' -bench BenchmarkDecodeStrictFlatArray -benchmem ./adapters/http/
func BenchmarkDecodeStrictFlatArray(b *testing.B) {
	body := append(append([]byte(`{"a":[`), bytes.Repeat([]byte("0,"), 2<<20-1)...), []byte("0]}")...)
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		var dst struct {
			A []int `json:"a"`
		}
		if err := decodeStrict(body, &dst); err != nil {
			b.Fatal(err)
		}
	}
}

// postJSON posts body as application/json over a real socket.
func postJSON(t *testing.T, url string, body []byte, headers ...string) (int, []byte) {
	t.Helper()
	req, err := nethttp.NewRequest("POST", url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := nethttp.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// BenchmarkCheckDocumentFlatArray is the shape check alone of the body of
// BenchmarkDecodeStrictFlatArray.
func BenchmarkCheckDocumentFlatArray(b *testing.B) {
	body := append(append([]byte(`{"a":[`), bytes.Repeat([]byte("0,"), 2<<20-1)...), []byte("0]}")...)
	b.SetBytes(int64(len(body)))
	t := reflect.TypeOf(struct {
		A []int `json:"a"`
	}{})
	for i := 0; i < b.N; i++ {
		if err := checkDocument(context.Background(), body, t); err != nil {
			b.Fatal(err)
		}
	}
}
