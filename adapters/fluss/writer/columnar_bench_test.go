package writer

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"syscall"
	"testing"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// benchLogTable is benchTable as a log table (no primary key, no bucket
// key: columnar appends take it), ARROW with the table's default ZSTD level
// 3 unless props say otherwise.
func benchLogTable(props map[string]string) *metatest.Table {
	t := benchTable()
	t.Path = domain.TablePath{Database: "db", Table: "benchlog"}
	t.ID = 43
	t.Desc.Schema.PrimaryKey = nil
	t.Desc.Properties = props
	return t
}

// benchColumns is rows [base, base+n) of tests/benchrows (the rows of the
// ingest throughput measurements) as the columnar rows an Arrow IPC record
// batch of them becomes (adapters/http decodeColumns: the stream's buffers).
func benchColumns(base, n int) *domain.ColumnarRows {
	le := binary.LittleEndian
	cols := make([]domain.ColumnValues, 10)
	strCol := func(c *domain.ColumnValues, v func(i int) string) {
		c.Offsets = le.AppendUint32(nil, 0)
		for i := range n {
			c.Data = append(c.Data, v(base+i)...)
			c.Offsets = le.AppendUint32(c.Offsets, uint32(len(c.Data)))
		}
	}
	flags := make([]byte, (n+7)/8)
	for i := range n {
		r := base + i
		cols[0].Values = le.AppendUint64(cols[0].Values, uint64(r))
		cols[3].Values = le.AppendUint32(cols[3].Values, uint32(r%100))
		cols[4].Values = le.AppendUint64(cols[4].Values, math.Float64bits(float64(r)/3))
		cols[5].Values = le.AppendUint64(le.AppendUint64(cols[5].Values, uint64(1234567+r)), 0)
		cols[6].Values = le.AppendUint64(cols[6].Values, uint64(1767225600000+int64(r)))
		if r%2 == 1 {
			flags[i/8] |= 1 << (i % 8)
		}
		cols[9].Values = le.AppendUint64(cols[9].Values, uint64(r*7))
	}
	cols[7].Values = flags
	strCol(&cols[1], func(i int) string { return fmt.Sprintf("user-%08d", i) })
	strCol(&cols[2], func(int) string { return "Zürich" })
	strCol(&cols[8], func(int) string { return "aGVsbG8gd29ybGQ=" })
	return &domain.ColumnarRows{Rows: n, Columns: cols}
}

// BenchmarkWriteColumnsFake runs whole columnar Write calls (the Arrow IPC
// append path after the HTTP adapter: chunks queued, the columns copied
// into Arrow log batches, ZSTD at the table's level, ProduceLog to the
// in-memory fake, verdicts) of 10,000 rows, one request at a time.
// cpu-ns/row is the process's CPU time (getrusage) per row, the fake's
// share included (it reads each batch's header).
//
//	go test ./adapters/fluss/writer/ -run '^$' -bench BenchmarkWriteColumnsFake -benchtime 50x
func BenchmarkWriteColumnsFake(b *testing.B) {
	for _, tc := range []struct {
		name  string
		props map[string]string
	}{
		{"zstd3", map[string]string{}},
		{"none", map[string]string{"table.log.arrow.compression.type": "NONE"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			fake := metatest.New(1)
			tb := benchLogTable(tc.props)
			fake.AddTable(tb)
			cache := meta.New(fake, meta.Options{})
			w := New(fake, cache, Options{Linger: time.Millisecond})
			defer w.Close(context.Background())
			const rows = 10_000
			wb := &domain.WriteBatch{Table: tb.Path, Columns: benchColumns(0, rows)}
			ctx := context.Background()
			write := func() {
				res, err := w.Write(ctx, wb)
				if err != nil || !res[rows-1].OK() {
					b.Fatal(err, fmt.Sprint(res[rows-1]))
				}
			}
			write() // the codec, the writer id, the pools
			b.ReportAllocs()
			cpu0 := benchCPU()
			b.ResetTimer()
			for range b.N {
				write()
			}
			b.StopTimer()
			b.ReportMetric(float64((benchCPU()-cpu0).Nanoseconds())/float64(b.N*rows), "cpu-ns/row")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
			size := 0
			for _, bt := range fake.Batches() {
				size += len(bt.Bytes)
			}
			// What the table's codec made of the rows (the same for every
			// build of the encoder that honours the level).
			b.ReportMetric(float64(size)/float64((b.N+1)*rows), "batch-bytes/row")
		})
	}
}

// benchCPU is the process's user and system CPU time so far.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
