package testlog

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBufferRecords: records logged by concurrent goroutines through slog's
// JSON handler are all read back, filtered by msg.
func TestBufferRecords(t *testing.T) {
	var b Buffer
	log := slog.New(slog.NewJSONHandler(&b, nil))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			log.Info("request", "n", i)
			log.Info("other")
		}()
	}
	wg.Wait()
	recs := b.Records(t, "request")
	assert.Len(t, recs, 8)
	seen := map[string]bool{}
	for _, r := range recs {
		seen[fmt.Sprint(r["n"])] = true
	}
	assert.Len(t, seen, 8)
	assert.Len(t, Records(t, b.String()+"\n\n", "other"), 8, "empty lines are skipped")
	assert.Empty(t, Records(t, "", "request"))
}
