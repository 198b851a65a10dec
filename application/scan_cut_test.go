package application

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestScanCursorAfter: an answer cut after any number of its records (the
// HTTP adapter's answer-size cap) resumes with CursorAfter: every record
// exactly once, in offset order per bucket.
func TestScanCursorAfter(t *testing.T) {
	for _, cut := range []int{0, 1, 2, 3, 5} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			c, log := newScanFixture(3)
			for b := range 3 {
				log.append(b, 4)
			}
			s := newScanService(t, c, "k")
			ctx := context.Background()
			seen := newRecordChain(3)
			req := ScanRequest{Start: &ScanStart{Position: domain.OffsetEarliest}, MaxRows: 7}
			var firstAnswer []ScanRecord
			for i := 0; ; i++ {
				require.Less(t, i, 100)
				res, err := s.Scan(ctx, alice, scanPath, req)
				require.NoError(t, err)
				given := res.Records
				cursor := res.Cursor
				if cut < len(res.Records) {
					given, cursor = res.Records[:cut], res.CursorAfter(cut)
				}
				seen.add(t, given)
				if len(res.Records) == 0 && res.CaughtUp {
					break
				}
				if cut == 0 {
					// Cutting every answer to nothing never ends: the
					// second answer must repeat the first.
					if i == 1 {
						assert.Equal(t, firstAnswer, res.Records)
						break
					}
					firstAnswer = res.Records
				}
				req = ScanRequest{Cursor: cursor, MaxRows: 7}
			}
			if cut > 0 {
				assert.Len(t, seen.seen, 12)
			} else {
				assert.Empty(t, seen.seen)
			}
		})
	}
}
