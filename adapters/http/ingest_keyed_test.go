package http

import (
	"net/http"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestKeyedStreamedBodies: a streamed body with Idempotency-Key is one keyed
// write (fingerprint: content type and body), answered in the body's own
// shape, replays carry the header; bodies a keyed write cannot hold are
// refused whole before the ledger is asked.
func TestKeyedStreamedBodies(t *testing.T) {
	t.Parallel()
	fail := domain.EntryResult{Code: "timeout", Message: "late", Retryable: true, Applied: domain.AppliedUnknown}
	arrowBody := arrowStream(t, eventsArrow,
		[]func(array.Builder){int64s(1, 2), strs("a", "b")},
		[]func(array.Builder){int64s(3, 4, 5), strs("c", "d", "e")})
	ndjson := appendLine("a", 1, "x") + "\n\n" + appendLine("b", 2, "y") + "\n"
	tests := []struct {
		name     string
		body     []byte
		ctype    string
		headers  []string
		maxRows  int
		res      application.IdempotentResult
		status   int
		want     string // JSON answer, NDJSON lines, or an error message fragment
		called   bool
		replayed string
	}{
		{
			name: "NDJSON, replayed", body: []byte(ndjson), ctype: MIMEApplicationNDJSON,
			res: application.IdempotentResult{Replayed: true, WriteResult: application.WriteResult{
				IDs: []string{"a", "b"}, Results: []domain.EntryResult{{}, fail}}},
			status: 200, called: true, replayed: "true",
			want: `{"row_count":2,"success_count":1,"error_count":1,"successes":[{"id":"a"}],"failures":[{"id":"b","error_code":"timeout","message":"late","retryable":true,"applied":"unknown"}]}`,
		},
		{
			name: "NDJSON, verdict lines keep the line numbers", body: []byte(ndjson), ctype: MIMEApplicationNDJSON,
			headers: []string{"Accept", MIMEApplicationNDJSON},
			res: application.IdempotentResult{WriteResult: application.WriteResult{
				IDs: []string{"a", "b"}, Results: []domain.EntryResult{{}, {}}}},
			status: 200, called: true,
			want: `{"line":1,"id":"a","ok":true}` + "\n" + `{"line":3,"id":"b","ok":true}` + "\n",
		},
		{
			name: "NDJSON, a line that is not JSON: nothing written", body: []byte(ndjson + "{bad\n"), ctype: MIMEApplicationNDJSON,
			status: 400, want: "line 4: not valid JSON",
		},
		{
			// JSON whitespace is space, tab, LF and CR (RFC 8259): a
			// vertical tab before an entry is not JSON, as in unkeyed bodies.
			name: "NDJSON, a vertical tab is not JSON whitespace", body: []byte(ndjson + "\v" + appendLine("c", 3, "z") + "\n"), ctype: MIMEApplicationNDJSON,
			status: 400, want: "line 4: not valid JSON",
		},
		{
			name: "NDJSON, write positions", body: []byte(ndjson), ctype: MIMEApplicationNDJSON,
			headers: []string{HeaderWritePositions, "true"},
			res: application.IdempotentResult{WriteResult: application.WriteResult{
				IDs: []string{"a", "b"}, Results: []domain.EntryResult{
					{At: domain.WrittenAt{Known: true, Bucket: 1, Offset: 7, Exact: true}}, fail}}},
			status: 200, called: true,
			want: `{"row_count":2,"success_count":1,"error_count":1,"successes":[{"id":"a","bucket":1,"offset":7}],"failures":[{"id":"b","error_code":"timeout","message":"late","retryable":true,"applied":"unknown"}]}`,
		},
		{
			name: "NDJSON, more entries than one keyed write", body: []byte(ndjson + appendLine("c", 3, "z")), ctype: MIMEApplicationNDJSON,
			maxRows: 2, status: 413, want: "at most 2 entries (gateway.rest.write.max-rows)",
		},
		{
			name: "Arrow, record batches joined, verdicts split back", body: arrowBody, ctype: MIMEArrowStream,
			res: application.IdempotentResult{WriteResult: application.WriteResult{
				IDs: make([]string, 5), Results: []domain.EntryResult{{}, {}, {}, fail, fail}}},
			status: 200, called: true,
			want: `{"row_count":5,"success_count":3,"error_count":2,"batches":[
				{"batch":0,"row_count":2,"success_count":2,"error_count":0,"failures":[]},
				{"batch":1,"row_count":3,"success_count":1,"error_count":2,"failures":[
					{"first_row":1,"last_row":2,"error_code":"timeout","message":"late","retryable":true,"applied":"unknown"}]}]}`,
		},
		{
			name: "Arrow, write positions", body: arrowBody, ctype: MIMEArrowStream,
			headers: []string{HeaderWritePositions, "true"},
			res: application.IdempotentResult{WriteResult: application.WriteResult{
				IDs: make([]string, 5), Results: []domain.EntryResult{
					{At: domain.WrittenAt{Known: true, Bucket: 0, Offset: 10, Exact: true}},
					{At: domain.WrittenAt{Known: true, Bucket: 0, Offset: 11, Exact: true}},
					{At: domain.WrittenAt{Known: true, Bucket: 2, Offset: 4, Exact: true}}, fail, fail}}},
			status: 200, called: true,
			want: `{"row_count":5,"success_count":3,"error_count":2,"batches":[
				{"batch":0,"row_count":2,"success_count":2,"error_count":0,"failures":[],"positions":[
					{"first_row":0,"last_row":1,"bucket":0,"offset":10}]},
				{"batch":1,"row_count":3,"success_count":1,"error_count":2,"failures":[
					{"first_row":1,"last_row":2,"error_code":"timeout","message":"late","retryable":true,"applied":"unknown"}],"positions":[
					{"first_row":0,"last_row":0,"bucket":2,"offset":4}]}]}`,
		},
		{
			name: "Arrow, more rows than one keyed write", body: arrowBody, ctype: MIMEArrowStream,
			maxRows: 4, status: 413, want: "at most 4 entries",
		},
		{
			name: "Arrow, truncated: nothing written", body: arrowBody[:len(arrowBody)-100], ctype: MIMEArrowStream,
			status: 400, want: "cannot be read",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []application.IdempotencyKey
			opts := []gatewayOption{withIdempotency(idemFunc(func(k application.IdempotencyKey) (application.IdempotentResult, error) {
				got = append(got, k)
				return tc.res, nil
			}))}
			if tc.maxRows > 0 {
				opts = append(opts, func(o *Options, d *Deps) {
					d.Records = limitedRecords{d.Records, tc.maxRows}
				})
			}
			g := newGateway(t, opts...).withTables()
			h := append([]string{"Content-Type", tc.ctype, HeaderIdempotencyKey, "k1"}, tc.headers...)
			r := g.postRaw(eventsWrite, tc.body, h...)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			assert.Equal(t, tc.replayed, r.header.Get(HeaderIdempotentReplayed))
			if !tc.called {
				assert.Empty(t, got, "the ledger was not asked")
				assert.Contains(t, r.message(t), tc.want)
				assert.Contains(t, r.message(t), "nothing was written")
				return
			}
			require.Len(t, got, 1)
			assert.Equal(t, "k1", got[0].Key)
			assert.Equal(t, fingerprint(append([]byte(tc.ctype+"\n"), tc.body...), false), got[0].Fingerprint)
			assert.NotEqual(t, fingerprint(tc.body, false), got[0].Fingerprint, "the content type is part of the fingerprint")
			if strings.HasPrefix(tc.want, "{\"line") {
				assert.Equal(t, tc.want, string(r.body))
				return
			}
			assert.JSONEq(t, tc.want, string(r.body))
		})
	}
	t.Run("no ledger", func(t *testing.T) {
		t.Parallel()
		g := newGateway(t).withTables()
		r := g.postRaw(eventsWrite, []byte(ndjson), "Content-Type", MIMEApplicationNDJSON, HeaderIdempotencyKey, "k1")
		assert.Equal(t, http.StatusNotImplemented, r.status, "%s", r.body)
		assert.Contains(t, r.message(t), "Idempotency-Key")
	})
}

// limitedRecords is Records with a write row cap (the use case's Limits).
type limitedRecords struct {
	Records
	maxRows int
}

func (l limitedRecords) Limits() application.RecordLimits {
	return application.RecordLimits{WriteMaxRows: l.maxRows}
}
