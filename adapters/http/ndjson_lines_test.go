package http

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// linesRecords is a Records whose Write decodes the command's entries and
// answers each valid one ok and each rejected one with its message, in
// input order, as the write use case does.
type linesRecords struct {
	Records
	tbl     *application.Table
	maxRows int
	calls   atomic.Int32
}

func (r *linesRecords) Limits() application.RecordLimits {
	return application.RecordLimits{WriteMaxRows: r.maxRows}
}

func (r *linesRecords) Write(_ context.Context, _ application.Scope, cmd application.WriteCommand) (application.WriteResult, error) {
	r.calls.Add(1)
	dw, err := cmd.Decoder.DecodeWrite(r.tbl, r.maxRows)
	if err != nil {
		return application.WriteResult{}, err
	}
	var res application.WriteResult
	ok := 0
	n := len(dw.IDs) + len(dw.Rejected)
	for i := range n {
		if len(dw.Rejected) > 0 && dw.Rejected[0].Index == i {
			res.IDs = append(res.IDs, dw.Rejected[0].ID)
			res.Results = append(res.Results, domain.EntryResult{Code: "invalid_argument", Message: dw.Rejected[0].Message})
			dw.Rejected = dw.Rejected[1:]
			continue
		}
		res.IDs = append(res.IDs, dw.IDs[ok])
		res.Results = append(res.Results, domain.EntryResult{})
		ok++
	}
	return res, nil
}

// TestNDJSONLinesReadInPlace: however the body's reads fall (a byte at a
// time, half reads, a chunk cut in the middle of a line), the lines read in
// place give every non-blank line its verdict under its own number, with
// blank lines, CRLF and JSON whitespace around a line, an invalid entry
// answered on its own, and a last line without a newline.
func TestNDJSONLinesReadInPlace(t *testing.T) {
	t.Parallel()
	tbl := application.NewTable(domain.TableInfo{Descriptor: domain.TableDescriptor{Schema: domain.Schema{Columns: []domain.Column{
		{Name: "ts", Type: domain.DataType{Root: domain.TypeBigInt, Nullable: true}},
		{Name: "msg", Type: domain.DataType{Root: domain.TypeString, Nullable: true}},
	}}}})
	rng := rand.New(rand.NewPCG(1, 2))
	var body strings.Builder
	var want strings.Builder
	lineNo := 0
	for i := range 3000 {
		lineNo++
		switch rng.IntN(8) {
		case 0:
			body.WriteString(" \t\r\n") // blank
			continue
		case 1:
			fmt.Fprintf(&body, "  %s \r\n", appendLine(fmt.Sprint("e", i), i, strings.Repeat("m", rng.IntN(300))))
		case 2:
			fmt.Fprintf(&body, `{"id":"e%d","append":{"nope":1}}`+"\n", i)
			fmt.Fprintf(&want, `{"line":%d,"id":"e%d","ok":false}`+"\n", lineNo, i)
			continue
		default:
			body.WriteString(appendLine(fmt.Sprint("e", i), i, "m") + "\n")
		}
		fmt.Fprintf(&want, `{"line":%d,"id":"e%d","ok":true}`+"\n", lineNo, i)
	}
	lineNo++
	body.WriteString(appendLine("last", 1, "x")) // no newline
	fmt.Fprintf(&want, `{"line":%d,"id":"last","ok":true}`+"\n", lineNo)

	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+EOF": iotest.DataErrReader,
	}
	for name, wrap := range readers {
		for _, maxRows := range []int{7, 10_000} {
			t.Run(fmt.Sprintf("%s/%d", name, maxRows), func(t *testing.T) {
				t.Parallel()
				recs := &linesRecords{tbl: tbl, maxRows: maxRows}
				sink := &verdictSink{ndjson: true}
				p := &ndjsonPipeline{a: &api{records: recs, opts: Options{MaxRequestBytes: 1 << 20}}, ctx: context.Background(),
					charge: func(context.Context, int) error { return nil }, sink: sink}
				require.NoError(t, p.run(wrap(strings.NewReader(body.String()))))
				p.drain()
				require.NoError(t, p.stopErr)
				var got strings.Builder
				for _, l := range bytes.SplitAfter(sink.out, []byte("\n")) {
					if i := bytes.Index(l, []byte(`,"error_code"`)); i >= 0 {
						l = append(l[:i:i], "}\n"...) // the verdict without the failure's fields
					}
					got.Write(l)
				}
				if want.String() != got.String() {
					w, g := strings.Split(want.String(), "\n"), strings.Split(got.String(), "\n")
					for i := range min(len(w), len(g)) {
						if w[i] != g[i] {
							t.Fatalf("verdict %d: want %s, got %s (%d verdicts, want %d)", i, w[i], g[i], len(g), len(w))
						}
					}
					t.Fatalf("%d verdicts, want %d; last %s", len(g), len(w), g[len(g)-2])
				}
				if maxRows == 7 {
					assert.Greater(t, int(recs.calls.Load()), 300, "chunks of at most 7 lines")
				}
			})
		}
	}
}

// TestNDJSONReadErrorWritesTheLinesBefore: a body that fails mid-line
// writes the complete lines read before and names the last of them; the
// partial line is not written.
func TestNDJSONReadErrorWritesTheLinesBefore(t *testing.T) {
	t.Parallel()
	tbl := application.NewTable(domain.TableInfo{Descriptor: domain.TableDescriptor{Schema: domain.Schema{Columns: []domain.Column{
		{Name: "ts", Type: domain.DataType{Root: domain.TypeBigInt, Nullable: true}},
		{Name: "msg", Type: domain.DataType{Root: domain.TypeString, Nullable: true}},
	}}}})
	var body strings.Builder
	for i := range 5 {
		body.WriteString(appendLine(fmt.Sprint("e", i), i, "m") + "\n")
	}
	body.WriteString(`{"id":"cut","append":{"ts":`)
	recs := &linesRecords{tbl: tbl, maxRows: 10_000}
	sink := &verdictSink{ndjson: true}
	p := &ndjsonPipeline{a: &api{records: recs, opts: Options{MaxRequestBytes: 1 << 20}}, ctx: context.Background(),
		charge: func(context.Context, int) error { return nil }, sink: sink}
	err := p.run(io.MultiReader(iotest.HalfReader(strings.NewReader(body.String())), iotest.ErrReader(errors.New("connection reset"))))
	p.drain()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "reading the body failed after line 5: connection reset")
	assert.Equal(t, 5, sink.rows, "the complete lines were written")
	assert.NotContains(t, string(sink.out), `"cut"`)
}
