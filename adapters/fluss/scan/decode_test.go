package scan

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record/arrowlog"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

var testColumns = []domain.Column{
	{Name: "id", Type: domain.DataType{Root: domain.TypeBigInt, Nullable: true}, ID: 0},
	{Name: "msg", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: 1},
	{Name: "n", Type: domain.DataType{Root: domain.TypeInteger, Nullable: true}, ID: 2},
}

func testTable() *meta.Table {
	return &meta.Table{Info: domain.TableInfo{Path: domain.TablePath{Database: "db", Table: "t"}, TableID: 7, SchemaID: 1,
		Descriptor: domain.TableDescriptor{Schema: domain.Schema{Columns: testColumns}}}, NumBuckets: 1}
}

func row(id int64, msg string, n int64) []domain.Datum {
	return []domain.Datum{{I64: id}, {Bytes: []byte(msg)}, {I64: n}}
}

// arrowBatch builds an ARROW log batch of rows at baseOffset; with change
// types it is a changelog batch (not append-only, change-type vector first),
// as the tablet server writes a primary-key table's changelog.
func arrowBatch(t testing.TB, cols []domain.Column, baseOffset int64, commitTS int64, cts []record.ChangeType, rows ...[]domain.Datum) []byte {
	t.Helper()
	b, err := arrowlog.NewBuilder(cols, arrowlog.CompressionZstd, 3)
	require.NoError(t, err)
	for _, r := range rows {
		require.NoError(t, b.Append(r))
	}
	msg, n, err := b.Build(nil)
	require.NoError(t, err)
	var area []byte
	attrs := record.AttrAppendOnly
	if cts != nil {
		attrs = 0
		for _, ct := range cts {
			area = append(area, byte(ct))
		}
	}
	area = append(area, msg...)
	out, err := record.AppendLogBatch(nil, record.LogBatchParams{SchemaID: 1, Attributes: attrs, WriterID: -1, BatchSequence: -1, RecordCount: int32(n)}, area)
	require.NoError(t, err)
	binary.LittleEndian.PutUint64(out, uint64(baseOffset))    // outside the CRC, set by the server
	binary.LittleEndian.PutUint64(out[13:], uint64(commitTS)) // idem
	return out
}

func newTestPlan(t testing.TB, columns []int) (*Scanner, *meta.Table, *plan) {
	s := New(nil, nil, Options{})
	tb := testTable()
	p := &plan{format: logArrow, current: tb.Info.Descriptor.Schema, decoders: map[int32]*batchDecoder{}}
	if columns == nil {
		p.want = testColumns
	} else {
		for _, c := range columns {
			p.want = append(p.want, testColumns[c])
			p.pushdown = append(p.pushdown, int32(c))
		}
	}
	return s, tb, p
}

func TestDecodeBucket(t *testing.T) {
	b1 := arrowBatch(t, testColumns, 10, 1_700_000_000_123, nil, row(1, "a", 10), row(2, "b", 20), row(3, "c", 30))
	b2 := arrowBatch(t, testColumns, 13, 1_700_000_000_456,
		[]record.ChangeType{record.ChangeInsert, record.ChangeUpdateBefore, record.ChangeUpdateAfter, record.ChangeDelete},
		row(4, "d", 40), row(4, "d", 40), row(4, "e", 41), row(4, "e", 41))
	both := append(append([]byte{}, b1...), b2...)

	tests := []struct {
		name     string
		data     []byte
		from     int64
		limit    int
		wantOffs []int64
		wantCTs  []string
		wantNext int64
	}{
		{"all", both, 10, -1, []int64{10, 11, 12, 13, 14, 15, 16}, []string{"+A", "+A", "+A", "+I", "-U", "+U", "-D"}, 17},
		{"skips records below the fetch offset", both, 12, -1, []int64{12, 13, 14, 15, 16}, []string{"+A", "+I", "-U", "+U", "-D"}, 17},
		{"limit inside a batch", both, 10, 4, []int64{10, 11, 12, 13}, []string{"+A", "+A", "+A", "+I"}, 14},
		{"limit at a batch end", both, 10, 3, []int64{10, 11, 12}, []string{"+A", "+A", "+A"}, 13},
		{"truncated last batch is left", append(append([]byte{}, b1...), b2[:len(b2)-5]...), 10, -1, []int64{10, 11, 12}, []string{"+A", "+A", "+A"}, 13},
		{"a lone header fragment", b1[:8], 10, -1, nil, nil, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, tb, p := newTestPlan(t, nil)
			fb := &domain.FetchedBucket{FetchOffset: tc.from, NextOffset: tc.from}
			require.NoError(t, s.decodeBucket(context.Background(), tb, p, fb, tc.data, tc.limit, nil))
			var offs []int64
			var cts []string
			for _, r := range fb.Records {
				offs = append(offs, r.Offset)
				cts = append(cts, r.ChangeType)
			}
			assert.Equal(t, tc.wantOffs, offs)
			assert.Equal(t, tc.wantCTs, cts)
			assert.Equal(t, tc.wantNext, fb.NextOffset)
		})
	}

	s, tb, p := newTestPlan(t, nil)
	fb := &domain.FetchedBucket{FetchOffset: 10, NextOffset: 10}
	require.NoError(t, s.decodeBucket(context.Background(), tb, p, fb, both, -1, nil))
	assert.Equal(t, int64(1_700_000_000_123), fb.Records[0].Timestamp)
	assert.Equal(t, int64(1_700_000_000_456), fb.Records[6].Timestamp)
	assert.Equal(t, "e", string(fb.Records[5].Row[1].Bytes))
	assert.Equal(t, int64(41), fb.Records[5].Row[2].I64)
}

// TestDecodeProjected: a projected batch holds the projected columns in
// ascending position order; rows come back in the requested order, and the
// CRC is not checked (the server keeps the unprojected batch's CRC).
func TestDecodeProjected(t *testing.T) {
	proj := []domain.Column{testColumns[0], testColumns[2]}
	batch := arrowBatch(t, proj, 0, 1, nil, []domain.Datum{{I64: 1}, {I64: 10}}, []domain.Datum{{I64: 2}, {Null: true}})
	binary.LittleEndian.PutUint32(batch[21:], 12345) // a stale CRC
	s, tb, p := newTestPlan(t, []int{2, 0})
	p.pushdown = []int32{0, 2}
	fb := &domain.FetchedBucket{}
	require.NoError(t, s.decodeBucket(context.Background(), tb, p, fb, batch, -1, nil))
	require.Len(t, fb.Records, 2)
	assert.Equal(t, []domain.Datum{{I64: 10}, {I64: 1}}, fb.Records[0].Row)
	assert.True(t, fb.Records[1].Row[0].Null)

	// Without projection the CRC is checked.
	s, tb, p = newTestPlan(t, nil)
	full := arrowBatch(t, testColumns, 0, 1, nil, row(1, "a", 1))
	binary.LittleEndian.PutUint32(full[21:], 12345)
	err := s.decodeBucket(context.Background(), tb, p, &domain.FetchedBucket{}, full, -1, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "crc")
}

func TestColumnMapping(t *testing.T) {
	added := append(append([]domain.Column{}, testColumns...), domain.Column{Name: "extra", ID: 3})
	assert.Equal(t, []int{0, 1, 2, -1}, columnMapping(testColumns, added), "a column added later is null in old batches")
	assert.Equal(t, []int{2, 0}, columnMapping(testColumns, []domain.Column{testColumns[2], testColumns[0]}))
	noIDs := []domain.Column{{Name: "a", ID: domain.UnassignedFieldID}, {Name: "b", ID: domain.UnassignedFieldID}}
	assert.Equal(t, []int{1}, columnMapping(noIDs, []domain.Column{{Name: "b", ID: domain.UnassignedFieldID}}))
}

// FuzzDecodeBucket: arbitrary bytes as a bucket's records never panic, and
// the records returned are in offset order at or after the fetch offset.
func FuzzDecodeBucket(f *testing.F) {
	f.Add(arrowBatch(f, testColumns, 0, 1, nil, row(1, "a", 1), row(2, "b", 2)), int64(0))
	f.Add(arrowBatch(f, testColumns, 5, 1, []record.ChangeType{record.ChangeInsert, record.ChangeDelete}, row(1, "a", 1), row(1, "a", 1)), int64(6))
	f.Add([]byte{}, int64(0))
	f.Fuzz(func(t *testing.T, data []byte, from int64) {
		s, tb, p := newTestPlan(t, nil)
		s.opts.MaxBufferSize = 1 << 20
		fb := &domain.FetchedBucket{FetchOffset: from, NextOffset: from}
		if err := s.decodeBucket(context.Background(), tb, p, fb, data, -1, nil); err != nil {
			return
		}
		prev := from - 1
		for _, r := range fb.Records {
			require.Greater(t, r.Offset, prev)
			require.Len(t, r.Row, len(testColumns))
			prev = r.Offset
		}
		require.GreaterOrEqual(t, fb.NextOffset, from)
	})
}
