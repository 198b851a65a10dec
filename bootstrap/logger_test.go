package bootstrap

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stalledStderr is a standard error whose writes block until release is
// closed: a full pipe to a stalled log collector, or a writing thread the
// machine does not run.
type stalledStderr struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (s *stalledStderr) Write(p []byte) (int, error) {
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// Issue 28 (lateness): every answer waits for its access line (and a write
// for its audit line) to be logged; the process logger hands lines to a
// writer goroutine, so a log call returns while standard error is stalled
// (with slog writing to stderr directly, the first call below blocks until
// release), and the lines arrive in order once it moves.
func TestProcessLoggerDoesNotWaitForStderr(t *testing.T) {
	stderr := &stalledStderr{release: make(chan struct{})}
	log, out := processLogger(stderr, slog.LevelInfo)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20 {
			log.Info("request", "i", i)
		}
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		close(stderr.release)
		t.Fatal("log calls waited for a stalled standard error")
	}
	close(stderr.release)
	require.NoError(t, out.Close())
	lines := strings.Split(strings.TrimSpace(stderr.buf.String()), "\n")
	require.Len(t, lines, 20)
	assert.Contains(t, lines[0], `"i":0`)
	assert.Contains(t, lines[19], `"i":19`)
}
