//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// streamedPos is where a write answered that a row landed.
type streamedPos struct {
	bucket int
	offset int64
}

// checkPeerPositions reads path's log with the peer and checks that the row
// of every id (the `id` column) is where the write said, and that the log
// holds nothing else.
func checkPeerPositions(t *testing.T, path domain.TablePath, at map[int64]streamedPos) {
	t.Helper()
	rows := wrScan(t, path)
	require.Len(t, rows, len(at), "%s: the peer reads as many rows as were answered", path.Table)
	found := map[streamedPos]int64{}
	for _, r := range rows {
		found[streamedPos{r.Bucket, r.Offset}] = int64(r.Row["id"].(float64))
	}
	bad := 0
	for id, p := range at {
		if got, ok := found[p]; !ok || got != id {
			bad++
			if bad <= 5 {
				t.Errorf("%s: row %d answered at bucket %d offset %d, the peer has row %d there (found: %v)", path.Table, id, p.bucket, p.offset, got, ok)
			}
		}
	}
	assert.Zero(t, bad, "%s: rows not where the write said", path.Table)
}

// TestGatewayStreamedWritePositions: with X-Fluss-Write-Positions the
// answers of streamed bodies say where every row landed, and the peer client
// reads each row there: an NDJSON body (document answer, then verdict
// lines) and Arrow IPC streams on the columnar fast path (a log table) and
// on the row path (a bucket-keyed log table).
func TestGatewayStreamedWritePositions(t *testing.T) {
	g := startGateway(t)
	db := wrDatabase(t)
	url := func(table string) string { return g.base + "/databases/" + db + "/tables/" + table + "/records" }

	// NDJSON: 3,000 lines answered as a document, 1,000 as verdict lines.
	nd := wrCreateTable(t, db, "pos_ndjson", ingestLogCols, "--buckets", "3")
	at := map[int64]streamedPos{}
	var body strings.Builder
	for i := range 3000 {
		body.WriteString(ingestLine(i) + "\n")
	}
	status, raw := ingestPost(t, url(nd.Table), "application/x-ndjson", strings.NewReader(body.String()), "X-Fluss-Write-Positions", "true")
	require.Equal(t, 200, status, "%.500s", raw)
	var doc struct {
		SuccessCount int `json:"success_count"`
		Successes    []struct {
			ID     string `json:"id"`
			Bucket *int   `json:"bucket"`
			Offset *int64 `json:"offset"`
		} `json:"successes"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Equal(t, 3000, doc.SuccessCount, "%.500s", raw)
	for _, s := range doc.Successes {
		require.NotNil(t, s.Offset, "success %s has no offset", s.ID)
		var id int64
		_, err := fmt.Sscanf(s.ID, "e%d", &id)
		require.NoError(t, err)
		at[id] = streamedPos{*s.Bucket, *s.Offset}
	}
	body.Reset()
	for i := 3000; i < 4000; i++ {
		body.WriteString(ingestLine(i) + "\n")
	}
	status, raw = ingestPost(t, url(nd.Table), "application/x-ndjson", strings.NewReader(body.String()),
		"X-Fluss-Write-Positions", "true", "Accept", "application/x-ndjson")
	require.Equal(t, 200, status, "%.500s", raw)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	lines := 0
	for sc.Scan() {
		var v struct {
			Line   int    `json:"line"`
			OK     bool   `json:"ok"`
			Bucket *int   `json:"bucket"`
			Offset *int64 `json:"offset"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v), "%s", sc.Bytes())
		require.True(t, v.OK, "%s", sc.Bytes())
		require.NotNil(t, v.Offset, "%s", sc.Bytes())
		at[int64(3000+v.Line-1)] = streamedPos{*v.Bucket, *v.Offset}
		lines++
	}
	require.Equal(t, 1000, lines)
	checkPeerPositions(t, nd, at)

	// Arrow IPC: three record batches of 2,000 rows.
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	const per, batches = 2000, 3
	stream := func() []byte {
		var recs []arrow.RecordBatch
		for b := range batches {
			rb := array.NewRecordBuilder(memory.DefaultAllocator, s)
			for i := b * per; i < (b+1)*per; i++ {
				rb.Field(0).(*array.Int64Builder).Append(int64(i))
				rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d", i))
				rb.Field(2).(*array.Float64Builder).Append(float64(i) + 0.5)
			}
			recs = append(recs, rb.NewRecordBatch())
			rb.Release()
		}
		return ingestStream(t, s, recs...)
	}()
	for _, tc := range []struct {
		table string
		extra []string
	}{
		{"pos_arrow", []string{"--buckets", "3"}},                             // columnar fast path
		{"pos_arrow_keyed", []string{"--buckets", "3", "--bucket-key", "id"}}, // row path
	} {
		t.Run(tc.table, func(t *testing.T) {
			path := wrCreateTable(t, db, tc.table, ingestLogCols, tc.extra...)
			status, raw := ingestPost(t, url(tc.table), "application/vnd.apache.arrow.stream", bytes.NewReader(stream), "X-Fluss-Write-Positions", "true")
			require.Equal(t, 200, status, "%.500s", raw)
			var ans struct {
				SuccessCount int `json:"success_count"`
				Batches      []struct {
					Batch     int `json:"batch"`
					Positions []struct {
						FirstRow int   `json:"first_row"`
						LastRow  int   `json:"last_row"`
						Bucket   int   `json:"bucket"`
						Offset   int64 `json:"offset"`
					} `json:"positions"`
				} `json:"batches"`
			}
			require.NoError(t, json.Unmarshal(raw, &ans))
			require.Equal(t, per*batches, ans.SuccessCount, "%.500s", raw)
			at := map[int64]streamedPos{}
			ranges := 0
			for _, b := range ans.Batches {
				for _, r := range b.Positions {
					ranges++
					for row := r.FirstRow; row <= r.LastRow; row++ {
						at[int64(b.Batch*per+row)] = streamedPos{r.Bucket, r.Offset + int64(row-r.FirstRow)}
					}
				}
			}
			require.Len(t, at, per*batches, "every row is in one range")
			t.Logf("%s: %d rows in %d ranges", tc.table, len(at), ranges)
			checkPeerPositions(t, path, at)
		})
	}
}
