package arrowlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestRoundTripAllTypes(t *testing.T) {
	types := allTypes()
	rows := allTypesRows()
	want := canon(normalizeRows(types, rows))
	for _, codec := range codecs {
		t.Run(codec.String(), func(t *testing.T) {
			b, err := NewBuilder(cols(types...), codec, DefaultZstdLevel)
			require.NoError(t, err)
			r, err := NewReader(cols(types...))
			require.NoError(t, err)
			// Several batches through the same builder: reuse must not leak
			// state from one batch into the next.
			for round := 0; round < 3; round++ {
				for _, rw := range rows {
					require.NoError(t, b.Append(rw))
				}
				require.Equal(t, len(rows), b.RecordCount())
				batch, n, err := b.BuildLogBatch([]byte("prefix"), 7, 42, int32(round))
				require.NoError(t, err)
				require.Equal(t, len(rows), n)
				require.Equal(t, "prefix", string(batch[:6]))
				require.Equal(t, 0, b.RecordCount())

				lb, rest, err := r.ReadLogBatch(batch[6:])
				require.NoError(t, err)
				require.Empty(t, rest)
				require.Equal(t, int16(7), lb.Header.SchemaID)
				require.Equal(t, int64(42), lb.Header.WriterID)
				require.Equal(t, int32(round), lb.Header.BatchSequence)
				require.Equal(t, int32(len(rows)), lb.Header.RecordCount)
				require.Equal(t, int32(len(rows)-1), lb.Header.LastOffsetDelta)
				require.True(t, lb.Header.AppendOnly())
				require.Nil(t, lb.ChangeTypes)
				require.Equal(t, codec, lb.Message.Codec)
				require.Equal(t, want, canon(lb.Rows))
			}
		})
	}
}

// TestArrowGoReaderAgrees decodes the builder's message with arrow-go's own
// IPC reader (after prepending a Schema message, as Fluss readers rebuild the
// schema) and compares with the arrays the builder serialised: the message
// is standard Arrow IPC for the schema ArrowUtils derives.
func TestArrowGoReaderAgrees(t *testing.T) {
	types := allTypes()
	for _, codec := range codecs {
		t.Run(codec.String(), func(t *testing.T) {
			b, err := NewBuilder(cols(types...), codec, DefaultZstdLevel)
			require.NoError(t, err)
			for _, rw := range allTypesRows() {
				require.NoError(t, b.Append(rw))
			}
			require.NoError(t, b.flushRows())
			expected := b.pending
			expected.Retain()
			defer expected.Release()
			msg, err := b.AppendTo(nil)
			require.NoError(t, err)

			rd, err := ipc.NewReader(bytes.NewReader(withSchema(t, b.schema, msg)))
			require.NoError(t, err)
			defer rd.Release()
			require.True(t, rd.Next(), "%v", rd.Err())
			got := rd.RecordBatch()
			require.True(t, array.RecordEqual(expected, got), "arrow-go reads back other arrays:\n%v\n%v", expected, got)
			require.False(t, rd.Next())
			require.NoError(t, rd.Err())
		})
	}
}

func TestEmptyBatch(t *testing.T) {
	b, err := NewBuilderFromTypes([]domain.DataType{typ(domain.TypeInteger)}, CompressionZstd, 3)
	require.NoError(t, err)
	out, n, err := b.Build(nil)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Empty(t, out)

	batch, n, err := b.BuildLogBatch(nil, 1, record.NoWriterID, record.NoBatchSequence)
	require.NoError(t, err)
	require.Zero(t, n)
	// Java writes a header-only batch: 48 bytes, recordCount 0, lastOffsetDelta 0.
	require.Len(t, batch, record.LogBatchHeaderSizeV0)
	r, err := NewReaderFromTypes([]domain.DataType{typ(domain.TypeInteger)})
	require.NoError(t, err)
	lb, _, err := r.ReadLogBatch(batch)
	require.NoError(t, err)
	require.Zero(t, lb.Header.RecordCount)
	require.Zero(t, lb.Header.LastOffsetDelta)
	require.Nil(t, lb.Message)
	require.Empty(t, lb.Rows)

	again, err := BuildLogBatch(nil, nil, 0, 1, record.NoWriterID, record.NoBatchSequence)
	require.NoError(t, err)
	require.Equal(t, batch, again)
	_, err = BuildLogBatch(nil, nil, 3, 1, -1, -1)
	require.Error(t, err)
}

func TestNullsAndEmptyValues(t *testing.T) {
	types := []domain.DataType{
		typ(domain.TypeString), typ(domain.TypeBytes), arrayT(typ(domain.TypeString)),
		mapT(typ(domain.TypeString), typ(domain.TypeString)), rowT(typ(domain.TypeString)),
		typ(domain.TypeBoolean), decimalT(20, 0),
	}
	for _, codec := range codecs {
		for _, rows := range [][][]domain.Datum{
			{row(null(), null(), null(), null(), null(), null(), null())},              // one row, all null
			{row(str(""), raw(), elems(), elems(), elems(str("")), i64(0), bigDec(0))}, // empty values
			{row(null(), null(), null(), null(), null(), null(), null()), row(null(), null(), null(), null(), null(), null(), null())},
		} {
			b, err := NewBuilderFromTypes(types, codec, 3)
			require.NoError(t, err)
			for _, rw := range rows {
				require.NoError(t, b.Append(rw))
			}
			msg, n, err := b.Build(nil)
			require.NoError(t, err)
			require.Equal(t, len(rows), n)
			r, err := NewReaderFromTypes(types)
			require.NoError(t, err)
			_, got, err := r.ReadRecords(msg)
			require.NoError(t, err, codec)
			require.Equal(t, canon(normalizeRows(types, rows)), canon(got), codec)
		}
	}
}

func TestLargeBatch(t *testing.T) {
	// More than 64 KiB per buffer: several LZ4 blocks, and long builders.
	types := []domain.DataType{typ(domain.TypeBigInt), typ(domain.TypeString), arrayT(typ(domain.TypeInteger))}
	var rows [][]domain.Datum
	for i := 0; i < 20000; i++ {
		var e []domain.Datum
		for j := 0; j < i%5; j++ {
			e = append(e, i64(int64(i*j)))
		}
		rows = append(rows, row(i64(int64(i)*1_000_003), str(strings.Repeat(string(rune('a'+i%26)), i%40)), elems(e...)))
	}
	sizes := map[Compression]int{}
	for _, codec := range codecs {
		b, err := NewBuilderFromTypes(types, codec, 3)
		require.NoError(t, err)
		for _, rw := range rows {
			require.NoError(t, b.Append(rw))
		}
		msg, n, err := b.Build(nil)
		require.NoError(t, err)
		require.Equal(t, len(rows), n)
		r, err := NewReaderFromTypes(types)
		require.NoError(t, err)
		_, got, err := r.ReadRecords(msg)
		require.NoError(t, err, codec)
		require.Equal(t, canon(normalizeRows(types, rows)), canon(got), codec)
		sizes[codec] = len(msg)
	}
	require.Less(t, sizes[CompressionZstd], sizes[CompressionNone]/2, "%v", sizes)
	require.Less(t, sizes[CompressionLZ4Frame], sizes[CompressionNone]/2, "%v", sizes)
}

func TestAppendToKeepsRows(t *testing.T) {
	types := []domain.DataType{typ(domain.TypeInteger), typ(domain.TypeString), mapT(typ(domain.TypeInteger), typ(domain.TypeString))}
	rows := [][]domain.Datum{
		row(i64(1), str("a"), elems(i64(1), str("x"))),
		row(null(), str("bb"), null()),
		row(i64(3), null(), elems()),
	}
	b, err := NewBuilderFromTypes(types, CompressionLZ4Frame, 0)
	require.NoError(t, err)
	require.NoError(t, b.Append(rows[0]))
	first, err := b.AppendTo(nil)
	require.NoError(t, err)
	again, err := b.AppendTo(nil)
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.NoError(t, b.Append(rows[1]))
	require.NoError(t, b.Append(rows[2]))
	require.Equal(t, 3, b.RecordCount())
	all, err := b.AppendTo(nil)
	require.NoError(t, err)
	r, err := NewReaderFromTypes(types)
	require.NoError(t, err)
	_, got, err := r.ReadRecords(all)
	require.NoError(t, err)
	require.Equal(t, canon(normalizeRows(types, rows)), canon(got))
	b.Reset()
	require.Zero(t, b.RecordCount())
	out, err := b.AppendTo(nil)
	require.NoError(t, err)
	require.Empty(t, out)
}

func TestAppendRejectsAndStaysAtomic(t *testing.T) {
	types := []domain.DataType{
		typ(domain.TypeInteger), notNull(typ(domain.TypeString)), binaryT(2), decimalT(4, 1),
		decimalT(20, 0), precT(domain.TypeTimestampNTZ, 9), arrayT(notNull(typ(domain.TypeInteger))),
		mapT(typ(domain.TypeString), typ(domain.TypeInteger)), rowT(typ(domain.TypeBoolean)), typ(domain.TypeTinyInt),
	}
	good := row(i64(1), str("s"), raw(1, 2), i64(9999), bigDec(5), ts(0, 0), elems(i64(1)), elems(str("k"), i64(1)), elems(i64(1)), i64(1))
	b, err := NewBuilderFromTypes(types, CompressionZstd, 3)
	require.NoError(t, err)
	require.NoError(t, b.Append(good))
	bad := func(col int, d domain.Datum) []domain.Datum {
		r := append([]domain.Datum(nil), good...)
		r[col] = d
		return r
	}
	for name, rw := range map[string][]domain.Datum{
		"arity":              good[:3],
		"int range":          bad(0, i64(math.MaxInt32+1)),
		"null in NOT NULL":   bad(1, null()),
		"binary length":      bad(2, raw(1, 2, 3)),
		"decimal precision":  bad(3, i64(10000)),
		"decimal128 digits":  bad(4, domain.Datum{Bytes: bytes.Repeat([]byte{0x7F}, 16)}),
		"decimal too wide":   bad(4, domain.Datum{Bytes: bytes.Repeat([]byte{0x01}, 17)}),
		"nanos range":        bad(5, ts(0, 1_000_000)),
		"ns overflow":        bad(5, ts(math.MaxInt64/1000, 0)),
		"null NOT NULL elem": bad(6, elems(i64(1), null())),
		"odd map":            bad(7, elems(str("k"))),
		"null map key":       bad(7, elems(null(), i64(1))),
		"row arity":          bad(8, elems()),
		"bool value":         bad(8, elems(i64(2))),
		"tinyint range":      bad(9, i64(128)),
	} {
		err := b.Append(rw)
		require.Error(t, err, name)
		require.True(t, errors.Is(err, record.ErrInvalidValue), "%s: %v", name, err)
		var de *domain.Error
		require.True(t, errors.As(err, &de))
		require.Equal(t, domain.KindInvalidArgument, de.Kind)
		require.Equal(t, 1, b.RecordCount(), name)
	}
	require.NoError(t, b.Append(good))
	msg, n, err := b.Build(nil)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	r, err := NewReaderFromTypes(types)
	require.NoError(t, err)
	_, got, err := r.ReadRecords(msg)
	require.NoError(t, err)
	require.Equal(t, canon(normalizeRows(types, [][]domain.Datum{good, good})), canon(got))
}

func TestSchemaErrors(t *testing.T) {
	for name, ty := range map[string]domain.DataType{
		"decimal precision": decimalT(39, 0),
		"decimal scale":     decimalT(5, 6),
		"binary length":     binaryT(0),
		"time precision":    precT(domain.TypeTime, 10),
		"array":             {Root: domain.TypeArray, Nullable: true},
		"map":               {Root: domain.TypeMap, Nullable: true},
		"unknown":           {Root: "VARIANT"},
	} {
		_, err := NewBuilderFromTypes([]domain.DataType{ty}, CompressionNone, 0)
		require.Error(t, err, name)
	}
	_, err := NewBuilderFromTypes(nil, CompressionNone, 0)
	require.Error(t, err)
	_, err = NewBuilderFromTypes([]domain.DataType{typ(domain.TypeInteger)}, CompressionZstd, 23)
	require.Error(t, err)
	_, err = NewBuilderFromTypes([]domain.DataType{typ(domain.TypeInteger)}, CompressionZstd, 0)
	require.Error(t, err)
	_, err = NewTableBuilder([]domain.DataType{typ(domain.TypeInteger)}, "snappy", 3)
	require.True(t, errors.Is(err, record.ErrUnsupported))
	b, err := NewTableBuilder([]domain.DataType{typ(domain.TypeInteger)}, "lz4_frame", 0)
	require.NoError(t, err)
	require.Equal(t, CompressionLZ4Frame, b.Compression())
}

func TestCompressionFromProperties(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		codec Compression
		level int
		err   bool
	}{
		{nil, CompressionZstd, 3, false},
		{map[string]string{PropCompressionType: "zstd", PropZstdLevel: "9"}, CompressionZstd, 9, false},
		{map[string]string{PropCompressionType: "NONE", PropZstdLevel: "99"}, CompressionNone, 0, false},
		{map[string]string{PropCompressionType: "LZ4_FRAME"}, CompressionLZ4Frame, 0, false},
		{map[string]string{PropZstdLevel: "0"}, 0, 0, true},
		{map[string]string{PropZstdLevel: "x"}, 0, 0, true},
		{map[string]string{PropCompressionType: "GZIP"}, 0, 0, true},
	} {
		c, l, err := CompressionFromProperties(tc.props)
		if tc.err {
			require.Error(t, err, "%v", tc.props)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.codec, c)
		require.Equal(t, tc.level, l)
	}
}

func TestSetWriterState(t *testing.T) {
	b, err := NewBuilderFromTypes([]domain.DataType{typ(domain.TypeInteger)}, CompressionZstd, 3)
	require.NoError(t, err)
	require.NoError(t, b.Append(row(i64(5))))
	batch, _, err := b.BuildLogBatch(nil, 3, record.NoWriterID, record.NoBatchSequence)
	require.NoError(t, err)
	require.NoError(t, SetWriterState(batch, 99, 12))
	r, err := NewReaderFromTypes([]domain.DataType{typ(domain.TypeInteger)})
	require.NoError(t, err)
	lb, _, err := r.ReadLogBatch(batch) // CRC checked
	require.NoError(t, err)
	require.Equal(t, int64(99), lb.Header.WriterID)
	require.Equal(t, int32(12), lb.Header.BatchSequence)
	require.Equal(t, int16(3), lb.Header.SchemaID)
	require.Equal(t, [][]domain.Datum{{i64(5)}}, lb.Rows)

	// The standalone wrapper gives the same bytes.
	require.NoError(t, b.Append(row(i64(5))))
	rec, n, err := b.Build(nil)
	require.NoError(t, err)
	again, err := BuildLogBatch(nil, rec, n, 3, 99, 12)
	require.NoError(t, err)
	require.Equal(t, batch, again)
}

func TestReadNonAppendOnlyBatch(t *testing.T) {
	// The reader also takes batches with a change-type vector (attributes
	// bit 0 clear), which the server writes for changelogs.
	b, err := NewBuilderFromTypes([]domain.DataType{typ(domain.TypeInteger)}, CompressionNone, 0)
	require.NoError(t, err)
	require.NoError(t, b.Append(row(i64(1))))
	require.NoError(t, b.Append(row(i64(2))))
	msg, n, err := b.Build(nil)
	require.NoError(t, err)
	records := append([]byte{byte(record.ChangeInsert), byte(record.ChangeDelete)}, msg...)
	batch, err := record.AppendLogBatch(nil, record.LogBatchParams{SchemaID: 1, RecordCount: int32(n), WriterID: -1, BatchSequence: -1}, records)
	require.NoError(t, err)
	r, err := NewReaderFromTypes([]domain.DataType{typ(domain.TypeInteger)})
	require.NoError(t, err)
	lb, _, err := r.ReadLogBatch(batch)
	require.NoError(t, err)
	require.Equal(t, []record.ChangeType{record.ChangeInsert, record.ChangeDelete}, lb.ChangeTypes)
	require.Equal(t, [][]domain.Datum{{i64(1)}, {i64(2)}}, lb.Rows)
}

func TestEstimatedSize(t *testing.T) {
	b, err := NewBuilderFromTypes([]domain.DataType{typ(domain.TypeBigInt), typ(domain.TypeString)}, CompressionNone, 0)
	require.NoError(t, err)
	require.Zero(t, b.EstimatedSizeInBytes())
	for i := 0; i < 100; i++ {
		require.NoError(t, b.Append(row(i64(int64(i)), str("0123456789"))))
	}
	est := b.EstimatedSizeInBytes()
	msg, _, err := b.Build(nil)
	require.NoError(t, err)
	require.InDelta(t, len(msg), est, float64(len(msg))/4, "estimate %d, actual %d", est, len(msg))
	for i := 0; i < 100; i++ {
		require.NoError(t, b.Append(row(i64(int64(i)), str("0123456789"))))
	}
	require.InDelta(t, len(msg), b.EstimatedSizeInBytes(), float64(len(msg))/10)
}

// TestAppendToInStepsMatchesOneBuild: rows joined across AppendTo calls (the
// arrays are concatenated) serialise exactly like the same rows built at once.
func TestAppendToInStepsMatchesOneBuild(t *testing.T) {
	types := allTypes()
	rows := allTypesRows()
	for _, codec := range codecs {
		one, err := NewBuilderFromTypes(types, codec, DefaultZstdLevel)
		require.NoError(t, err)
		steps, err := NewBuilderFromTypes(types, codec, DefaultZstdLevel)
		require.NoError(t, err)
		for i, rw := range rows {
			require.NoError(t, one.Append(rw))
			require.NoError(t, steps.Append(rw))
			if i%2 == 0 {
				_, err := steps.AppendTo(nil)
				require.NoError(t, err)
			}
		}
		want, _, err := one.Build(nil)
		require.NoError(t, err)
		got, n, err := steps.Build(nil)
		require.NoError(t, err)
		require.Equal(t, len(rows), n)
		require.Equal(t, want, got, codec)
	}
}

// TestPreEpochSubMillisecondTimestamps: before 1970, a timestamp with
// sub-millisecond digits has a negative Arrow value that is not a multiple
// of 1000 (us) or 10^6 (ns). The writer produces exactly Java's value; our
// reader inverts it with floor division. (Fluss 0.9.1's Java reader uses
// truncating division and throws IllegalArgumentException from
// TimestampNtz/TimestampLtz for such values, e.g. -0.5 ms at precision 6.)
func TestPreEpochSubMillisecondTimestamps(t *testing.T) {
	types := []domain.DataType{
		precT(domain.TypeTimestampNTZ, 6), precT(domain.TypeTimestampNTZ, 9),
		precT(domain.TypeTimestampLTZ, 6), precT(domain.TypeTimestampLTZ, 9),
	}
	rows := [][]domain.Datum{
		row(ts(-1, 500_000), ts(-1, 1), ts(-62135596800000, 999_000), ts(-1_000_001, 999_999)),
		row(ts(-2, 999_000), ts(-1, 999_999), ts(-1, 1_000), ts(-9_000_000_000_000, 1)),
	}
	b, err := NewBuilderFromTypes(types, CompressionNone, 0)
	require.NoError(t, err)
	for _, rw := range rows {
		require.NoError(t, b.Append(rw))
	}
	msg, _, err := b.Build(nil)
	require.NoError(t, err)
	m, err := ParseRecordBatchMessage(msg)
	require.NoError(t, err)
	// Column 0, row 0: -1 ms + 500 us = -500 us (Java: ms*1000 + nanos/1000).
	v := m.Body[m.Buffers[1].Offset:]
	require.Equal(t, int64(-500), int64(binary.LittleEndian.Uint64(v)))
	r, err := NewReaderFromTypes(types)
	require.NoError(t, err)
	_, got, err := r.ReadRecords(msg)
	require.NoError(t, err)
	require.Equal(t, canon(normalizeRows(types, rows)), canon(got))
}
