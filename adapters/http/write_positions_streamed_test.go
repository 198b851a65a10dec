package http

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// positionsByTS answers each events row by its ts, whatever the call or
// chunk it comes in: ts 1-3 land at offsets 10-12 of bucket 0, ts 4 fails,
// ts 5 lands at offset 5 of bucket 1 of partition p1, ts 6 succeeds without
// a position, ts 7 and 8 land at offsets 20 and 22 of bucket 0.
func positionsByTS(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
	out := make([]domain.EntryResult, b.Len())
	for i := range out {
		var ts int64
		if b.Columns != nil {
			ts = int64(binary.LittleEndian.Uint64(b.Columns.Columns[0].Values[8*i:]))
		} else {
			ts = b.Entries[i].Row[0].I64
		}
		switch {
		case ts >= 1 && ts <= 3:
			out[i].At = domain.WrittenAt{Known: true, Bucket: 0, Offset: 9 + ts, Exact: true}
		case ts == 4:
			out[i] = domain.EntryResult{Code: "timeout", Message: "late", Retryable: true, Applied: domain.AppliedUnknown}
		case ts == 5:
			out[i].At = domain.WrittenAt{Known: true, Partition: "p1", Bucket: 1, Offset: 5, Exact: true}
		case ts == 7:
			out[i].At = domain.WrittenAt{Known: true, Bucket: 0, Offset: 20, Exact: true}
		case ts == 8:
			out[i].At = domain.WrittenAt{Known: true, Bucket: 0, Offset: 22, Exact: true}
		}
	}
	return out, nil
}

// TestWritePositionsNDJSON: with X-Fluss-Write-Positions an NDJSON body's
// successes carry their partition, bucket and offset, in the document
// answer and in the verdict lines; without it the answers are unchanged.
func TestWritePositionsNDJSON(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	g.writer.set(positionsByTS)
	var lines []string
	for ts := 1; ts <= 6; ts++ {
		lines = append(lines, appendLine("e"+string(rune('0'+ts)), ts, "m"))
	}
	body := []byte(strings.Join(lines, "\n"))
	const failure = `{"id":"e4","error_code":"timeout","message":"late","retryable":true,"applied":"unknown"}`
	for _, tc := range []struct {
		name    string
		headers []string
		want    string
	}{
		{"document", []string{HeaderWritePositions, "true"}, `{"row_count":6,"success_count":5,"error_count":1,"successes":[
			{"id":"e1","bucket":0,"offset":10},{"id":"e2","bucket":0,"offset":11},{"id":"e3","bucket":0,"offset":12},
			{"id":"e5","partition":"p1","bucket":1,"offset":5},{"id":"e6"}],"failures":[` + failure + `]}`},
		{"document without the header", nil, `{"row_count":6,"success_count":5,"error_count":1,"successes":[
			{"id":"e1"},{"id":"e2"},{"id":"e3"},{"id":"e5"},{"id":"e6"}],"failures":[` + failure + `]}`},
		{"verdict lines", []string{HeaderWritePositions, "true", "Accept", MIMEApplicationNDJSON}, `{"line":1,"id":"e1","ok":true,"bucket":0,"offset":10}
{"line":2,"id":"e2","ok":true,"bucket":0,"offset":11}
{"line":3,"id":"e3","ok":true,"bucket":0,"offset":12}
{"line":4,"id":"e4","ok":false,"error_code":"timeout","message":"late","retryable":true,"applied":"unknown"}
{"line":5,"id":"e5","ok":true,"partition":"p1","bucket":1,"offset":5}
{"line":6,"id":"e6","ok":true}
`},
		{"verdict lines without the header", []string{"Accept", MIMEApplicationNDJSON}, `{"line":1,"id":"e1","ok":true}
{"line":2,"id":"e2","ok":true}
{"line":3,"id":"e3","ok":true}
{"line":4,"id":"e4","ok":false,"error_code":"timeout","message":"late","retryable":true,"applied":"unknown"}
{"line":5,"id":"e5","ok":true}
{"line":6,"id":"e6","ok":true}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := g.postRaw(eventsWrite, body, append([]string{"Content-Type", MIMEApplicationNDJSON}, tc.headers...)...)
			require.Equal(t, 200, r.status, string(r.body))
			if strings.HasPrefix(tc.name, "verdict lines") {
				assert.Equal(t, tc.want, string(r.body))
				return
			}
			assert.JSONEq(t, tc.want, string(r.body))
		})
	}
}

// TestWritePositionsArrow: with X-Fluss-Write-Positions each record batch's
// answer lists its written rows as ranges that landed next to each other
// (offsets of a log, or one log end offset of a primary-key table); failed
// rows and rows without a position are in none. Without it the answer has
// no positions.
func TestWritePositionsArrow(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	g.writer.set(positionsByTS)
	body := arrowStream(t, eventsArrow,
		[]func(array.Builder){int64s(1, 2, 3, 4, 5, 6), strs("a", "b", "c", "d", "e", "f")},
		[]func(array.Builder){int64s(7, 8), strs("g", "h")})
	const failures = `"failures":[{"first_row":3,"last_row":3,"error_code":"timeout","message":"late","retryable":true,"applied":"unknown"}]`
	r := g.postRaw(eventsWrite, body, "Content-Type", MIMEArrowStream, HeaderWritePositions, "true")
	require.Equal(t, 200, r.status, string(r.body))
	assert.JSONEq(t, `{"row_count":8,"success_count":7,"error_count":1,"batches":[
		{"batch":0,"row_count":6,"success_count":5,"error_count":1,`+failures+`,"positions":[
			{"first_row":0,"last_row":2,"bucket":0,"offset":10},
			{"first_row":4,"last_row":4,"partition":"p1","bucket":1,"offset":5}]},
		{"batch":1,"row_count":2,"success_count":2,"error_count":0,"failures":[],"positions":[
			{"first_row":0,"last_row":0,"bucket":0,"offset":20},
			{"first_row":1,"last_row":1,"bucket":0,"offset":22}]}]}`, string(r.body))

	r = g.postRaw(eventsWrite, body, "Content-Type", MIMEArrowStream)
	require.Equal(t, 200, r.status, string(r.body))
	assert.NotContains(t, string(r.body), "positions")

	// A primary-key table: rows of one bucket's batch share its log end
	// offset.
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		out := make([]domain.EntryResult, b.Len())
		for i, end := range []int64{40, 40, 41} {
			out[i].At = domain.WrittenAt{Known: true, Bucket: 2, Offset: end}
		}
		return out, nil
	})
	s := arrow.NewSchema([]arrow.Field{
		{Name: "region", Type: arrow.BinaryTypes.String},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	r = g.postRaw(usersWrite, arrowStream(t, s, []func(array.Builder){strs("eu", "eu", "eu"), int64s(1, 2, 3)}),
		"Content-Type", MIMEArrowStream, HeaderWritePositions, "1")
	require.Equal(t, 200, r.status, string(r.body))
	assert.JSONEq(t, `{"row_count":3,"success_count":3,"error_count":0,"batches":[
		{"batch":0,"row_count":3,"success_count":3,"error_count":0,"failures":[],"positions":[
			{"first_row":0,"last_row":1,"bucket":2,"log_end_offset":40},
			{"first_row":2,"last_row":2,"bucket":2,"log_end_offset":41}]}]}`, string(r.body))
}
