//go:build integration

package integration

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayKeyedStreamedBodies: NDJSON and Arrow IPC bodies with
// Idempotency-Key land once however often they are sent (the retry replays
// the recorded answer), a reused key with another body is refused, and a
// body larger than one keyed write is refused whole (413) before anything
// is written; the peer reads the rows back.
func TestGatewayKeyedStreamedBodies(t *testing.T) {
	g := startIdemGateway(t, idemOptions{}, "FLUSS_GATEWAY__REST__WRITE__MAX_ROWS=1000")
	db := wrDatabase(t)
	path := wrCreateTable(t, db, "keyed_stream", ingestLogCols, "--buckets", "2")
	records := "/databases/" + db + "/tables/keyed_stream/records"
	run := strconv.FormatInt(time.Now().UnixNano(), 36)

	var nd bytes.Buffer
	for i := range 500 {
		nd.WriteString(ingestLine(i) + "\n")
	}
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	var recs []arrow.RecordBatch
	for _, r := range [][2]int{{500, 800}, {800, 1000}} {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, s)
		for i := r[0]; i < r[1]; i++ {
			rb.Field(0).(*array.Int64Builder).Append(int64(i))
			rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d", i))
			rb.Field(2).(*array.Float64Builder).Append(float64(i) + 0.5)
		}
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	arrowBody := ingestStream(t, s, recs...)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, s)
	rb.Field(0).(*array.Int64Builder).Append(7)
	rb.Field(1).AppendNull()
	rb.Field(2).AppendNull()
	otherArrow := ingestStream(t, s, rb.NewRecordBatch())
	rb.Release()

	for _, c := range []struct {
		ctype       string
		body, other []byte
		key         string
	}{
		{"application/x-ndjson", nd.Bytes(), []byte(ingestLine(7)), "nd-" + run},
		{"application/vnd.apache.arrow.stream", arrowBody, otherArrow, "ar-" + run},
	} {
		first := g.mustPost(records, c.body, "Content-Type", c.ctype, "Idempotency-Key", c.key)
		require.Equal(t, 200, first.status, "%s: %.500s", c.ctype, first.body)
		assert.Empty(t, first.replayed)
		assert.EqualValues(t, 0, first.json(t)["error_count"], "%.500s", first.body)
		again := g.mustPost(records, c.body, "Content-Type", c.ctype, "Idempotency-Key", c.key)
		require.Equal(t, 200, again.status, "%.500s", again.body)
		assert.Equal(t, "true", again.replayed, c.ctype)
		assert.JSONEq(t, string(first.body), string(again.body), c.ctype)
		other := g.mustPost(records, c.other, "Content-Type", c.ctype, "Idempotency-Key", c.key)
		assert.Equal(t, 422, other.status, "%s: another body with the same key: %.300s", c.ctype, other.body)
	}
	assert.Equal(t, int64(1000), ingestLogRows(t, path))

	// Too large for one keyed write: refused whole.
	var big bytes.Buffer
	for i := 1000; i < 2001; i++ {
		big.WriteString(ingestLine(i) + "\n")
	}
	tooMany := g.mustPost(records, big.Bytes(), "Content-Type", "application/x-ndjson", "Idempotency-Key", "big-"+run)
	require.Equal(t, 413, tooMany.status, "%s", tooMany.body)
	assert.Contains(t, string(tooMany.body), "at most 1000 entries")

	rows := wrScan(t, path)
	require.Len(t, rows, 1000)
	seen := map[int]bool{}
	for _, r := range rows {
		id := int(r.Row["id"].(float64))
		require.False(t, seen[id], "id %d twice", id)
		seen[id] = true
		assert.Equal(t, "row "+strconv.Itoa(id), r.Row["s"])
		assert.Equal(t, float64(id)+0.5, r.Row["v"])
	}
}
