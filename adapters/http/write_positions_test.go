package http

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestWritePositionsHeader: with X-Fluss-Write-Positions each success
// carries its partition, bucket and offset (log_end_offset for a
// primary-key table's row); without it the answer is the official one.
func TestWritePositionsHeader(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		out := make([]domain.EntryResult, len(b.Entries))
		out[0].At = domain.WrittenAt{Known: true, Partition: "eu", Bucket: 2, Offset: 17, Exact: true}
		out[1].At = domain.WrittenAt{Known: true, Bucket: 0, Offset: 40}
		// out[2]: a success without a known position
		out[3] = domain.EntryResult{Code: "timeout", Message: "late", Retryable: true, Applied: domain.AppliedUnknown}
		return out, nil
	})
	body := entries(upsert("e1", "eu", 1), upsert("e2", "eu", 2), upsert("e3", "us", 3), upsert("e4", "us", 4))

	for _, tc := range []struct {
		header string
		want   string
	}{
		{"", `{"row_count":4,"success_count":3,"error_count":1,"successes":[{"id":"e1"},{"id":"e2"},{"id":"e3"}],
			"failures":[{"id":"e4","error_code":"timeout","message":"late","retryable":true,"applied":"unknown"}]}`},
		{"no", `{"row_count":4,"success_count":3,"error_count":1,"successes":[{"id":"e1"},{"id":"e2"},{"id":"e3"}],
			"failures":[{"id":"e4","error_code":"timeout","message":"late","retryable":true,"applied":"unknown"}]}`},
		{"true", `{"row_count":4,"success_count":3,"error_count":1,"successes":[
			{"id":"e1","partition":"eu","bucket":2,"offset":17},{"id":"e2","bucket":0,"log_end_offset":40},{"id":"e3"}],
			"failures":[{"id":"e4","error_code":"timeout","message":"late","retryable":true,"applied":"unknown"}]}`},
	} {
		t.Run(tc.header, func(t *testing.T) {
			var hdr []string
			if tc.header != "" {
				hdr = []string{HeaderWritePositions, tc.header}
			}
			r := g.call("POST", usersWrite, body, hdr...)
			require.Equal(t, 200, r.status, string(r.body))
			assert.JSONEq(t, tc.want, string(r.body))
		})
	}
}
