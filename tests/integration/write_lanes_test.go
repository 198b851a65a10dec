//go:build integration

package integration

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestWriteLanesAndTimeline: 16 concurrent 200-row requests into a 4-bucket
// primary-key table and a 4-bucket log table, through a writer whose
// buckets use 4 connections to the tablet server (Lanes) and send at once
// when nothing is in flight: every row succeeds, the independent peer client
// reads every key exactly once (pk: one +I each, log: one row each), and
// every request's timeline names its batches and a Fluss round trip.
func TestWriteLanesAndTimeline(t *testing.T) {
	db := wrDatabase(t)
	cols := [][2]string{{"id", "bigint NOT NULL"}, {"name", "string"}}
	pk := wrCreateTable(t, db, "lanes_pk", cols, "--primary-key", "id", "--buckets", "4")
	logT := wrCreateTable(t, db, "lanes_log", cols, "--buckets", "4", "--bucket-key", "id")
	e := wrNewWriter(t, writer.Options{Lanes: 4})
	const requests, per = 16, 200
	for _, c := range []struct {
		path domain.TablePath
		op   domain.WriteOp
	}{{pk, domain.OpUpsert}, {logT, domain.OpAppend}} {
		ctx := wrCtx(t, 2*time.Minute)
		timelines := make([]domain.WriteTimeline, requests)
		var wg sync.WaitGroup
		for r := range requests {
			wb := &domain.WriteBatch{Table: c.path}
			for i := range per {
				id := int64(r*per + i)
				wb.Entries = append(wb.Entries, domain.WriteEntry{Op: c.op,
					Row: []domain.Datum{{I64: id}, {Bytes: []byte(fmt.Sprint("n-", id))}}})
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := e.w.Write(domain.WithWriteTimeline(ctx, &timelines[r]), wb)
				if assert.NoError(t, err) {
					for i, x := range res {
						assert.True(t, x.OK(), "request %d entry %d: %+v", r, i, x)
					}
				}
			}()
		}
		wg.Wait()
		for r, tl := range timelines {
			assert.GreaterOrEqual(t, tl.Batches, 1, "request %d: %+v", r, tl)
			assert.LessOrEqual(t, tl.Batches, 4, "request %d: %+v", r, tl)
			assert.Positive(t, tl.Backend, "request %d: %+v", r, tl)
			assert.Positive(t, tl.BatchRows, "request %d: %+v", r, tl)
		}
		seen := map[string]int{}
		for _, row := range wrScan(t, c.path) {
			if c.op == domain.OpUpsert {
				require.Equal(t, "+I", row.ChangeType, "%+v", row)
			}
			seen[fmt.Sprint(row.Row["id"])]++
		}
		require.Len(t, seen, requests*per, "%s: every key read back", c.path)
		for id, n := range seen {
			require.Equal(t, 1, n, "%s: key %s read %d times", c.path, id, n)
		}
	}
}
