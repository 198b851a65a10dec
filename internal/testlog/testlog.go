// Package testlog is what tests read back of a component's output: a buffer
// that server goroutines (a slog handler, a child process) write to while
// the test reads it, the decoding of JSON log lines as slog's JSON handler
// writes them (one record a line), and the lines of a streamed answer. For
// tests only.
package testlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer is an io.Writer safe for concurrent use; its zero value is empty
// and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Records returns the JSON log records written so far whose msg is msg
// (Records of String).
func (b *Buffer) Records(t testing.TB, msg string) []map[string]any {
	t.Helper()
	return Records(t, b.String(), msg)
}

// Records decodes raw, JSON log records one a line (empty lines skipped),
// and returns those whose msg is msg, in order; a line that is not a JSON
// object fails the test.
func Records(t testing.TB, raw, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(raw, "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %s: %v", line, err)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// ReadLine returns the next line of r, its newline included, failing the
// test when none comes within d (a streamed answer that stalls). A line
// that does not come leaves its reading goroutine blocked until r ends.
func ReadLine(t testing.TB, r *bufio.Reader, d time.Duration) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		line, _ := r.ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		return line
	case <-time.After(d):
		t.Fatalf("no line within %s", d)
		return ""
	}
}
