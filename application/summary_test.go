package application

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The summary a write returns is that of the verdicts it returns, whether
// it was taken with the writer's verdicts (the common case: one pass) or
// after rejected entries were merged among them.
func TestWriteSummaryIsOfTheAnsweredVerdicts(t *testing.T) {
	t.Parallel()
	ok := domain.EntryResult{}
	timeout := domain.EntryResult{Code: "timeout", Applied: domain.AppliedUnknown, Retryable: true}
	invalid := domain.EntryResult{Code: "invalid_record", Applied: domain.AppliedNo}
	tests := []struct {
		name     string
		verdicts func(n int) []domain.EntryResult
		decoder  WriteDecoder
		want     WriteSummary
	}{
		{"all written", func(n int) []domain.EntryResult { return make([]domain.EntryResult, n) }, rowsDecoder(4),
			WriteSummary{Rows: 4, Succeeded: 4}},
		{"failures", func(int) []domain.EntryResult { return []domain.EntryResult{ok, timeout, invalid, timeout} }, rowsDecoder(4),
			WriteSummary{Rows: 4, Succeeded: 1, Failed: 3, AppliedUnknown: 2, FailedByCode: map[string]int{"timeout": 2, "invalid_record": 1}}},
		{"a rejected entry merged in", func(n int) []domain.EntryResult { return make([]domain.EntryResult, n) }, &rejectingDecoder{validFrom: 99},
			WriteSummary{Rows: 2, Succeeded: 1, Failed: 1, FailedByCode: map[string]int{"invalid_argument": 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			vc := &versionedCatalog{tableID: 1, schemaID: 1}
			dc := &dataClusters{catalog: vc.catalog(), writer: writerFunc(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
				return tc.verdicts(len(b.Entries)), nil
			})}
			res, err := NewRecordService(dc, RecordOptions{}).Write(context.Background(), Scope{Cluster: "c1"},
				WriteCommand{Path: usersPath, Decoder: tc.decoder})
			require.NoError(t, err)
			got := res.Summary
			got.Delivery = 0
			assert.Equal(t, tc.want, got)
			want := summarize(res.Results)
			assert.Equal(t, want, got, "the summary of the verdicts answered")
		})
	}
}

func TestSameResults(t *testing.T) {
	t.Parallel()
	a := make([]domain.EntryResult, 3)
	b := make([]domain.EntryResult, 3)
	tests := []struct {
		name string
		x, y []domain.EntryResult
		want bool
	}{
		{"one slice", a, a, true},
		{"equal contents, two slices", a, b, false},
		{"a prefix", a[:2], a, false},
		{"both empty", nil, []domain.EntryResult{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, sameResults(tc.x, tc.y))
		})
	}
}
