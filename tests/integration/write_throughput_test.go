//go:build integration

package integration

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

var wrBenchCols = [][2]string{
	{"id", "bigint NOT NULL"}, {"name", "string"}, {"city", "string"}, {"age", "int"}, {"score", "double"},
	{"amount", "decimal(12,2)"}, {"ts", "timestamp_ltz(3)"}, {"flag", "boolean"}, {"payload", "bytes"}, {"n", "bigint"},
}

func wrBenchRow(i int64) []domain.Datum {
	return []domain.Datum{
		{I64: i}, {Bytes: []byte(fmt.Sprintf("user-%08d", i))}, {Bytes: []byte("Zürich")}, {I64: i % 100}, {F64: float64(i) / 3},
		{I64: 1234567 + i}, {I64: 1767225600000 + i}, {I64: i % 2}, {Bytes: []byte("aGVsbG8gd29ybGQ=")}, {I64: i * 7},
	}
}

// TestWriteThroughput writes 100,000 rows of 10 columns in 10,000-row
// requests into a 4-bucket primary-key table and a 4-bucket ARROW log
// table, sequentially and with 4 concurrent requests, and logs rows/s.
func TestWriteThroughput(t *testing.T) {
	db := wrDatabase(t)
	pk := wrCreateTable(t, db, "tp_pk", wrBenchCols, "--primary-key", "id", "--buckets", "4")
	logT := wrCreateTable(t, db, "tp_log", wrBenchCols, "--buckets", "4", "--bucket-key", "id")
	e := wrNewWriter(t, writer.Options{})
	const total, per = 100_000, 10_000
	batches := make([]*domain.WriteBatch, 0, total/per)
	for r := 0; r < total/per; r++ {
		entries := make([]domain.WriteEntry, per)
		for i := range entries {
			entries[i] = domain.WriteEntry{Op: domain.OpUpsert, Row: wrBenchRow(int64(r*per + i))}
		}
		batches = append(batches, &domain.WriteBatch{Entries: entries})
	}
	run := func(path domain.TablePath, op domain.WriteOp, concurrency int, idOffset int64) float64 {
		ctx := wrCtx(t, 5*time.Minute)
		start := time.Now()
		var wg sync.WaitGroup
		sem := make(chan struct{}, concurrency)
		for _, b := range batches {
			wb := &domain.WriteBatch{Table: path, Entries: make([]domain.WriteEntry, len(b.Entries))}
			for i := range b.Entries {
				row := append([]domain.Datum(nil), b.Entries[i].Row...)
				row[0].I64 += idOffset // fresh keys: every run inserts
				wb.Entries[i] = domain.WriteEntry{Op: op, Row: row}
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				wrRequireOK(t, e.write(t, ctx, wb))
			}()
		}
		wg.Wait()
		return total / time.Since(start).Seconds()
	}
	for _, c := range []struct {
		name string
		path domain.TablePath
		op   domain.WriteOp
		conc int
	}{
		{"pk sequential", pk, domain.OpUpsert, 1},
		{"pk 4 concurrent", pk, domain.OpUpsert, 4},
		{"log sequential", logT, domain.OpAppend, 1},
		{"log 4 concurrent", logT, domain.OpAppend, 4},
	} {
		rate := run(c.path, c.op, c.conc, int64(c.conc)*1_000_000)
		t.Logf("%-17s %8.0f rows/s (100,000 rows in 10,000-row requests)", c.name, rate)
		assert.Positive(t, rate)
	}
}
