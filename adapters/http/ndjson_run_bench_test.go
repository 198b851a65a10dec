package http

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// BenchmarkNDJSONRun measures the NDJSON pipeline alone (reading the body,
// cutting its lines into chunks, decoding them, folding the verdicts) over
// a records fake that decodes and answers every row ok: 100,000 lines of
// benchEntry, read as fasthttp hands a streamed body over (64 KiB reads).
//
//	go test ./adapters/http/ -run '^$' -bench BenchmarkNDJSONRun -count 6
func BenchmarkNDJSONRun(b *testing.B) {
	const rows = 100_000
	var body strings.Builder
	for i := range rows {
		body.WriteString(benchEntry(i))
		body.WriteByte('\n')
	}
	var req createTableRequest
	if err := decodeStrict([]byte(benchTable), &req); err != nil {
		b.Fatal(err)
	}
	cmd, err := req.toCommand("d")
	if err != nil {
		b.Fatal(err)
	}
	recs := &linesRecords{tbl: application.NewTable(domain.TableInfo{Descriptor: cmd.Descriptor}), maxRows: 10_000}
	data := body.String()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p := &ndjsonPipeline{a: &api{records: recs, opts: Options{MaxRequestBytes: 64 << 20}}, ctx: context.Background(),
			charge: func(context.Context, int) error { return nil }, sink: &verdictSink{}}
		if err := p.run(&chunkedReader{s: data, n: 64 << 10}); err != nil {
			b.Fatal(err)
		}
		p.drain()
		p.releaseBuffers()
		if p.sink.rows != rows {
			b.Fatalf("%d rows answered, want %d", p.sink.rows, rows)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
}

// chunkedReader reads s at most n bytes at a time.
type chunkedReader struct {
	s string
	n int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.s)
	r.s = r.s[k:]
	return k, nil
}
