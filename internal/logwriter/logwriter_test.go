package logwriter

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// blockedSink blocks every write until release is closed, then records it;
// entered is closed when the first write arrives.
type blockedSink struct {
	release chan struct{}
	entered chan struct{}
	once    sync.Once
	mu      sync.Mutex
	buf     bytes.Buffer
}

func newBlockedSink() *blockedSink {
	return &blockedSink{release: make(chan struct{}), entered: make(chan struct{})}
}

func (s *blockedSink) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *blockedSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// A write does not wait for a sink that blocks (the stall a log call used
// to add to every answer); the lines reach it, in order, once it moves, and
// Close waits for them.
func TestWriteDoesNotWaitForTheSink(t *testing.T) {
	defer goleak.VerifyNone(t)
	sink := newBlockedSink()
	w := New(sink, 64)
	start := time.Now()
	var want bytes.Buffer
	for i := range 50 {
		line := []byte(fmt.Sprintf("line %d\n", i))
		n, err := w.Write(line)
		require.NoError(t, err)
		require.Equal(t, len(line), n)
		copy(line, "XXXX") // the caller reuses its buffer
		fmt.Fprintf(&want, "line %d\n", i)
	}
	assert.Less(t, time.Since(start), 100*time.Millisecond, "50 writes while the sink is blocked")
	close(sink.release)
	require.NoError(t, w.Close())
	assert.Equal(t, want.String(), sink.String())
	_, err := w.Write([]byte("after close\n"))
	require.NoError(t, err)
	assert.Equal(t, want.String()+"after close\n", sink.String())
	require.NoError(t, w.Close(), "idempotent")
}

// No line is dropped: with the queue full, a write waits for room.
func TestFullQueueBlocksInsteadOfDropping(t *testing.T) {
	defer goleak.VerifyNone(t)
	sink := newBlockedSink()
	w := New(sink, 2)
	_, _ = w.Write([]byte("x\n"))
	<-sink.entered // the goroutine holds the first line in the sink
	for range 2 {  // the queue's room
		_, _ = w.Write([]byte("x\n"))
	}
	wrote := make(chan struct{})
	go func() {
		_, _ = w.Write([]byte("y\n"))
		close(wrote)
	}()
	select {
	case <-wrote:
		t.Fatal("a write into a full queue returned at once")
	case <-time.After(50 * time.Millisecond):
	}
	close(sink.release)
	<-wrote
	require.NoError(t, w.Close())
	assert.Equal(t, "x\nx\nx\ny\n", sink.String())
}

// Concurrent writers: every line arrives whole.
func TestConcurrentWritersKeepLinesWhole(t *testing.T) {
	defer goleak.VerifyNone(t)
	var sink bytes.Buffer
	w := New(&sink, 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				_, _ = fmt.Fprintf(w, "g%d-%d\n", g, i)
			}
		}()
	}
	wg.Wait()
	require.NoError(t, w.Close())
	lines := bytes.Split(bytes.TrimSuffix(sink.Bytes(), []byte("\n")), []byte("\n"))
	assert.Len(t, lines, 8*500)
	seen := map[string]bool{}
	for _, l := range lines {
		seen[string(l)] = true
	}
	assert.Len(t, seen, 8*500)
}
