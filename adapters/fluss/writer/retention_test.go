package writer

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Issue 28 (one-hour soak, RSS growth): once a batch is answered, no
// bucket state keeps it (and so its rows' requests: arena, results,
// context) in the array behind its in-flight slice.
func TestAnsweredBatchesAreNotKeptByTheBucket(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond}, pkTable(10, 4))
	for round := range 3 {
		var entries []domain.WriteEntry
		for i := range 40 {
			entries = append(entries, upsert(int64(round*100+i), "n", 1))
		}
		for _, r := range e.write(t, ctxTimeout(t, 5*time.Second), pkPath, entries...) {
			require.True(t, r.OK(), "%+v", r)
		}
	}
	e.w.mu.Lock()
	defer e.w.mu.Unlock()
	require.NotEmpty(t, e.w.buckets)
	for k, b := range e.w.buckets {
		assert.Empty(t, b.inflight, "bucket %v", k)
		for i, bt := range b.inflight[:cap(b.inflight)] {
			assert.Nil(t, bt, "bucket %v: slot %d behind the in-flight slice still holds a batch", k, i)
		}
	}
}

// Issue 28: the writer keeps a codec per table and schema only while the
// metadata cache holds the table: the codecs of dropped tables (the soak
// drops one every 10 s) go at the next prune.
func TestCodecsOfDroppedTablesAreDropped(t *testing.T) {
	t.Parallel()
	const tables = 40
	var paths []domain.TablePath
	e := newEnv(t, Options{Linger: time.Millisecond})
	for i := range tables {
		tb := pkTable(int64(100+i), 1)
		tb.Path = domain.TablePath{Database: "db", Table: fmt.Sprintf("t%d", i)}
		e.fake.AddTable(tb)
		paths = append(paths, tb.Path)
	}
	for _, p := range paths {
		res := e.write(t, ctxTimeout(t, 5*time.Second), p, upsert(1, "n", 1))
		require.True(t, res[0].OK(), "%+v", res[0])
		e.cache.Invalidate(p) // dropped through this gateway
	}
	// Every pruneEvery-th codec stored drops those of tables the cache no
	// longer holds: at most pruneEvery-1 are left of 40.
	assert.Less(t, e.w.codecs.Len(), 32, "codecs of dropped tables kept")
}
