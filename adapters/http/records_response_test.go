package http

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestAppendWriteResponseMatchesEncodingJSON: the hand-written write answer
// is byte for byte encoding/json's rendering of writeResponse, for ids and
// messages that need escaping, invalid UTF-8, every applied value and
// empty lists.
func TestAppendWriteResponseMatchesEncodingJSON(t *testing.T) {
	ids := []string{"a", "", `q"uote`, `back\slash`, "<html>&", "tab\tnew\nline\x01", "héllo wörld", "\u2028\u2029",
		"bad \xff utf8", "emoji 😀", "7"}
	fail := func(code, msg string, retry bool, applied domain.Applied) domain.EntryResult {
		return domain.EntryResult{Code: code, Message: msg, Retryable: retry, Applied: applied}
	}
	cases := map[string][]domain.EntryResult{
		"empty":      {},
		"all ok":     make([]domain.EntryResult, len(ids)),
		"all failed": {fail("timeout", "no answer <in> time", true, domain.AppliedUnknown), fail("invalid_argument", `field "x"`, false, domain.AppliedNo)},
		"mixed": {
			{}, fail("storage_backpressure", "slow down\n", true, domain.AppliedNo), {},
			fail("internal", "bad \xfe byte", false, ""), fail("x", "y", false, domain.Applied("maybe")), {},
			fail("unauthorized", "denied & logged", false, domain.AppliedNo), {}, {}, fail("a", "\u2028", true, domain.AppliedUnknown), {},
		},
	}
	for name, results := range cases {
		t.Run(name, func(t *testing.T) {
			res := application.WriteResult{Results: results, IDs: ids[:len(results)]}
			want, err := json.Marshal(newWriteResponse(res))
			require.NoError(t, err)
			got := appendWriteResponse(nil, res)
			assert.Equal(t, string(want), string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

// TestAppendWriteResponseOfficialCodes: the route's writer renders the
// official kind the Fluss adapter gave each verdict, the finer code leading
// the message (a regression: the fast writer once wrote
// `invalid_target_column` as is).
func TestAppendWriteResponseOfficialCodes(t *testing.T) {
	res := application.WriteResult{
		IDs: []string{"p0", "p1"},
		Results: []domain.EntryResult{
			{Code: "invalid_target_column", Kind: "invalid_argument", Message: "target columns", Applied: domain.AppliedNo},
			{Code: "not_enough_replicas", Kind: "unavailable", Message: "2 < 3", Retryable: true, Applied: domain.AppliedUnknown},
		},
	}
	var got struct {
		Failures []struct {
			ErrorCode string `json:"error_code"`
			Message   string `json:"message"`
		} `json:"failures"`
	}
	require.NoError(t, json.Unmarshal(appendWriteResponse(nil, res), &got))
	require.Len(t, got.Failures, 2)
	assert.Equal(t, "invalid_argument", got.Failures[0].ErrorCode)
	assert.Equal(t, "invalid_target_column: target columns", got.Failures[0].Message)
	assert.Equal(t, "unavailable", got.Failures[1].ErrorCode)
	assert.Equal(t, "not_enough_replicas: 2 < 3", got.Failures[1].Message)
}

func BenchmarkWriteResponse(b *testing.B) {
	res := application.WriteResult{Results: make([]domain.EntryResult, 500), IDs: make([]string, 500)}
	for i := range res.IDs {
		res.IDs[i] = "e" + strconv.Itoa(i)
	}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_, _ = json.Marshal(newWriteResponse(res))
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 8<<10)
		for range b.N {
			buf = appendWriteResponse(buf[:0], res)
		}
	})
}

// writeResponseSize gives the common answer (successes without positions)
// exactly the room it takes, and every answer at least enough not to
// grow while it is written.
func TestWriteResponseSize(t *testing.T) {
	t.Parallel()
	ok := domain.EntryResult{}
	failed := domain.EntryResult{Code: "timeout", Message: "no answer in time", Retryable: true, Applied: domain.AppliedUnknown}
	at := domain.EntryResult{At: domain.WrittenAt{Known: true, Partition: "2024-05-01", Bucket: 3, Offset: 1 << 40}}
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = strconv.Itoa(1_000_000 + i)
		}
		return out
	}
	tests := []struct {
		name      string
		results   []domain.EntryResult
		positions bool
	}{
		{"empty", nil, false},
		{"500 successes", make([]domain.EntryResult, 500), false},
		{"500 successes with positions", func() []domain.EntryResult {
			rs := make([]domain.EntryResult, 500)
			for i := range rs {
				rs[i] = at
			}
			return rs
		}(), true},
		{"mixed", []domain.EntryResult{ok, failed, ok, failed, failed}, false},
		{"all failed", []domain.EntryResult{failed, failed}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := application.WriteResult{Results: tc.results, IDs: ids(len(tc.results))}
			size := writeResponseSize(res, tc.positions)
			got := appendWriteResponsePositions(make([]byte, 0, size), res, tc.positions)
			assert.LessOrEqual(t, len(got), size, "the answer outgrew its buffer")
			assert.True(t, json.Valid(got))
			if tc.name == "500 successes" {
				// Exact but for the fixed part.
				assert.InDelta(t, len(got), size, 96)
			}
		})
	}
}

// The answer takes its counts from the use case's summary when the summary
// is of its verdicts, and counts them itself otherwise: the same bytes
// either way, and a summary of other verdicts is not trusted.
func TestAppendWriteResponseCountsFromSummary(t *testing.T) {
	t.Parallel()
	failed := domain.EntryResult{Code: "timeout", Message: "late", Retryable: true, Applied: domain.AppliedUnknown}
	tests := []struct {
		name    string
		results []domain.EntryResult
		summary application.WriteSummary
	}{
		{"all ok", make([]domain.EntryResult, 3), application.WriteSummary{Rows: 3, Succeeded: 3}},
		{"mixed", []domain.EntryResult{{}, failed, {}}, application.WriteSummary{Rows: 3, Succeeded: 2, Failed: 1}},
		{"summary of fewer rows", []domain.EntryResult{{}, failed, {}}, application.WriteSummary{Rows: 2, Succeeded: 2}},
		{"summary that does not add up", []domain.EntryResult{{}, failed}, application.WriteSummary{Rows: 2, Succeeded: 2, Failed: 1}},
		{"no summary", []domain.EntryResult{failed, {}}, application.WriteSummary{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids := make([]string, len(tc.results))
			for i := range ids {
				ids[i] = "e" + strconv.Itoa(i)
			}
			bare := application.WriteResult{Results: tc.results, IDs: ids}
			want, err := json.Marshal(newWriteResponse(bare))
			require.NoError(t, err)
			withSummary := bare
			withSummary.Summary = tc.summary
			assert.Equal(t, string(want), string(appendWriteResponse(nil, withSummary)))
			assert.Equal(t, string(want), string(appendWriteResponse(nil, bare)))
		})
	}
}
