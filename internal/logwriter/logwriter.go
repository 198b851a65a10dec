// Package logwriter takes the writing of log lines off the goroutines that
// log: a Writer queues each line and one goroutine writes them, in order,
// coalescing what is queued into one write. A log call then costs a copy
// and a channel send instead of a write to standard error under the log
// handler's lock, which every request's access line (and a write's audit
// line) takes before the answer is sent: in the fault runs of issue 28 a
// thread descheduled in that write, or a slow sink, held up every answer
// behind it (up to 1.6 s between a request's audit and access lines on a
// loaded machine). Lines are never dropped: when Depth lines wait, Write
// blocks as a direct write would.
package logwriter

import (
	"io"
	"sync"
)

// DefaultDepth is the number of lines that may wait for the writer.
const DefaultDepth = 4096

// maxBatch bounds the bytes coalesced into one write.
const maxBatch = 256 << 10

// Writer is an io.Writer whose writes reach out from a goroutine of its
// own, in the order they were made. It is safe for concurrent use.
type Writer struct {
	out   io.Writer
	lines chan []byte
	done  chan struct{}

	mu     sync.RWMutex // Close takes it whole; writers share it around the send
	closed bool
}

// New starts a Writer to out with room for depth waiting lines
// (DefaultDepth when depth <= 0). Close flushes and stops it.
func New(out io.Writer, depth int) *Writer {
	if depth <= 0 {
		depth = DefaultDepth
	}
	w := &Writer{out: out, lines: make(chan []byte, depth), done: make(chan struct{})}
	go w.run()
	return w
}

// Write queues a copy of p (the caller may reuse p, as log/slog does) and
// returns len(p); it blocks only while the queue is full. After Close it
// writes to out directly. Errors of the underlying writer are not reported
// (a log sink that fails cannot be told about it).
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return w.out.Write(p)
	}
	w.lines <- append([]byte(nil), p...)
	w.mu.RUnlock()
	return len(p), nil
}

// Close writes every queued line, stops the goroutine and returns once it
// has ended. Later writes go to out directly. It is idempotent.
func (w *Writer) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.lines)
	}
	w.mu.Unlock()
	<-w.done
	return nil
}

func (w *Writer) run() {
	defer close(w.done)
	var batch []byte
	for line := range w.lines {
		batch = append(batch[:0], line...)
	more:
		for len(batch) < maxBatch {
			select {
			case next, ok := <-w.lines:
				if !ok {
					break more
				}
				batch = append(batch, next...)
			default:
				break more
			}
		}
		_, _ = w.out.Write(batch)
		if cap(batch) > 4*maxBatch {
			batch = nil // one huge line does not stay allocated
		}
	}
}
