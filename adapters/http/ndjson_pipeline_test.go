package http

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// overlapWriter holds the verdicts of its first Write until a second Write
// has started (or a second passed), and records which happened: the second
// call can only start while the first waits if the chunk after it was read
// and decoded meanwhile.
type overlapWriter struct {
	mu         sync.Mutex
	calls      int
	second     chan struct{}
	overlapped bool
	rows       int
}

func (w *overlapWriter) Write(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
	w.mu.Lock()
	w.calls++
	n := w.calls
	w.rows += b.Len()
	w.mu.Unlock()
	switch n {
	case 1:
		select {
		case <-w.second:
			w.mu.Lock()
			w.overlapped = true
			w.mu.Unlock()
		case <-time.After(time.Second):
		}
	case 2:
		close(w.second)
	}
	return make([]domain.EntryResult, b.Len()), nil
}

// TestNDJSONChunksOverlapTheWriter: while the writer holds the verdicts of
// one chunk, the next chunk is read, decoded and handed to the writer; the
// verdicts still come back in line order.
func TestNDJSONChunksOverlapTheWriter(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"))
	var body bytes.Buffer
	n := 3 * ndjsonChunkRows
	for i := range n {
		body.WriteString(appendLine(fmt.Sprintf("e%d", i), i, "m") + "\n")
	}
	for _, accept := range []string{"application/json", MIMEApplicationNDJSON} {
		t.Run(accept, func(t *testing.T) {
			g := newGateway(t).withTables()
			w := &overlapWriter{second: make(chan struct{})}
			g.data.writer = w
			r := g.postRaw(eventsWrite, body.Bytes(), "Content-Type", MIMEApplicationNDJSON, "Accept", accept)
			require.Equal(t, 200, r.status, "%.300s", r.body)
			assert.True(t, w.overlapped, "the second chunk reached the writer while the first waited for its verdicts")
			assert.Equal(t, n, w.rows)
			if accept == MIMEApplicationNDJSON {
				lines := bytes.Split(bytes.TrimSuffix(r.body, []byte("\n")), []byte("\n"))
				require.Len(t, lines, n)
				for i, l := range lines {
					require.Equal(t, fmt.Sprintf(`{"line":%d,"id":"e%d","ok":true}`, i+1, i), string(l))
				}
			} else {
				assert.Contains(t, string(r.body), `"row_count":`+fmt.Sprint(n))
			}
			require.NoError(t, g.app.Shutdown())
		})
	}
}
