package record

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// kvVectorTypes is the row type of the derived KV batch (docs/fluss-records.md,
// Test vectors tier 3):
// (id INT NOT NULL, name STRING).
func kvVectorTypes() []domain.DataType {
	return types(notNull(typ(domain.TypeInteger)), typ(domain.TypeString))
}

// docs/fluss-records.md, Test vectors tier 3: schema id 1, an upsert of key INT 1
// with value (1, "a"), a delete of key INT 2.
const kvVectorHex = `
28 00 00 00 | 00 | 75 4D 6E 47 | 01 00 | 00 | FF FF FF FF FF FF FF FF | FF FF FF FF | 02 00 00 00 |
06 00 00 00 01 01 00 01 01 61 | 02 00 00 00 01 02`

func buildKvVector(t *testing.T, writerID int64, seq int32) []byte {
	t.Helper()
	tys := kvVectorTypes()
	keyEnc, err := NewCompactedKeyEncoder(tys, []int{0})
	require.NoError(t, err)
	valEnc, err := NewCompactedRowEncoder(tys)
	require.NoError(t, err)
	b, err := NewKvBatchBuilder(1, nil)
	require.NoError(t, err)

	r1 := row(i64(1), str("a"))
	key, err := keyEnc.AppendKey(nil, r1)
	require.NoError(t, err)
	require.NoError(t, b.Upsert(key, valEnc, r1))
	key, err = keyEnc.AppendKey(key[:0], row(i64(2), null()))
	require.NoError(t, err)
	require.NoError(t, b.Delete(key))
	return b.Build(writerID, seq)
}

func TestKvBatchVector(t *testing.T) {
	t.Parallel()
	got := buildKvVector(t, NoWriterID, NoBatchSequence)
	assert.Equal(t, unhex(t, kvVectorHex), got)
	assert.Equal(t, uint32(0x476E4D75), CRC32C(got[9:]))

	// With writer id 7 and sequence 0, bytes 12-23 change and so does the CRC.
	idem := buildKvVector(t, 7, 0)
	assert.Equal(t, unhex(t, "07 00 00 00 00 00 00 00 00 00 00 00"), idem[12:24])
	assert.Equal(t, unhex(t, "D6 9D 42 F1"), idem[5:9])
	assert.Equal(t, got[24:], idem[24:])
}

func TestKvBatchReadBack(t *testing.T) {
	t.Parallel()
	raw := buildKvVector(t, 7, 3)
	kb, rest, err := ReadKvBatch(append(append([]byte(nil), raw...), 0xAA))
	require.NoError(t, err)
	assert.Equal(t, []byte{0xAA}, rest)
	assert.Equal(t, KvBatch{
		Magic: 0, CRC: CRC32C(raw[9:]), SchemaID: 1, WriterID: 7, BatchSequence: 3, RecordCount: 2,
		Records: raw[KvBatchHeaderSize:],
	}, kb)
	recs, err := kb.ReadRecords()
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, KvRecord{Key: []byte{1}, Value: unhex(t, "00 01 01 61")}, recs[0])
	assert.Equal(t, KvRecord{Key: []byte{2}}, recs[1], "a delete has no value")

	// The value row decodes with the table schema.
	vals, err := DecodeCompactedRow(kvVectorTypes(), recs[0].Value)
	require.NoError(t, err)
	assert.Equal(t, []domain.Datum{{I64: 1}, {Bytes: []byte("a")}}, vals)
}

func TestKvBatchBuilderBehaviour(t *testing.T) {
	t.Parallel()
	tys := kvVectorTypes()
	enc, err := NewCompactedRowEncoder(tys)
	require.NoError(t, err)
	b, err := NewKvBatchBuilder(5, make([]byte, 0, 256))
	require.NoError(t, err)
	empty := b.Build(NoWriterID, NoBatchSequence)
	assert.Len(t, empty, KvBatchHeaderSize)
	_, _, err = ReadKvBatch(empty)
	require.NoError(t, err, "an empty batch is valid")

	require.NoError(t, b.Upsert([]byte{1}, enc, row(i64(1), str("x"))))
	size := b.SizeInBytes()
	// A bad row leaves the batch untouched.
	err = b.Upsert([]byte{2}, enc, row(null(), str("y")))
	require.ErrorIs(t, err, ErrInvalidValue)
	assert.Equal(t, size, b.SizeInBytes())
	assert.Equal(t, 1, b.RecordCount())
	require.NoError(t, b.UpsertEncoded([]byte{3}, unhex(t, "00 03 00")))
	assert.Equal(t, size+KvRecordSize(1, 3), b.SizeInBytes())

	// Build twice with different writer state: the header is re-stamped.
	first := append([]byte(nil), b.Build(1, 1)...)
	second := b.Build(2, 9)
	kb1, _, err := ReadKvBatch(first)
	require.NoError(t, err)
	kb2, _, err := ReadKvBatch(second)
	require.NoError(t, err)
	assert.Equal(t, int64(1), kb1.WriterID)
	assert.Equal(t, int32(9), kb2.BatchSequence)
	assert.Equal(t, int16(5), kb2.SchemaID)
	assert.Equal(t, int32(2), kb2.RecordCount)

	require.NoError(t, b.Reset(6))
	assert.Equal(t, 0, b.RecordCount())
	assert.Equal(t, KvBatchHeaderSize, b.SizeInBytes())

	_, err = NewKvBatchBuilder(1<<15, nil)
	assert.ErrorIs(t, err, ErrInvalidValue, "schema id above int16")
	_, err = NewKvBatchBuilder(-1, nil)
	assert.ErrorIs(t, err, ErrInvalidValue)
}

func TestReadKvBatchRejectsCorruption(t *testing.T) {
	t.Parallel()
	good := buildKvVector(t, NoWriterID, NoBatchSequence)
	mutate := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	tests := map[string][]byte{
		"short":             good[:10],
		"truncated":         good[:len(good)-1],
		"bad crc":           mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }),
		"bad magic":         mutate(func(b []byte) []byte { b[4] = 1; return b }),
		"length too small":  mutate(func(b []byte) []byte { b[0] = 3; return b }),
		"negative length":   mutate(func(b []byte) []byte { b[3] = 0x80; return b }),
		"header fields bad": mutate(func(b []byte) []byte { b[11] = 1; return b }),
	}
	for name, b := range tests {
		_, _, err := ReadKvBatch(b)
		assert.ErrorIs(t, err, ErrCorrupt, name)
	}
	// Record framing errors surface from ReadRecords.
	kb, _, err := ReadKvBatch(good)
	require.NoError(t, err)
	kb.RecordCount = 3
	_, err = kb.ReadRecords()
	assert.ErrorIs(t, err, ErrCorrupt)
	kb.RecordCount = 1
	_, err = kb.ReadRecords()
	assert.ErrorIs(t, err, ErrCorrupt, "trailing records")
}

// docs/fluss-records.md, Test vectors tier 3: an INDEXED log batch V0, schema id
// 1, append-only, no idempotence, one row (INT 1, STRING "a").
const indexedLogVectorHex = `
00 00 00 00 00 00 00 00 | 33 00 00 00 | 00 | 00 00 00 00 00 00 00 00 | 90 77 88 A7 | 01 00 | 01 |
00 00 00 00 | FF FF FF FF FF FF FF FF | FF FF FF FF | 01 00 00 00 |
0B 00 00 00 00 00 01 00 00 00 01 00 00 00 61`

func TestIndexedLogBatchVector(t *testing.T) {
	t.Parallel()
	enc, err := NewIndexedRowEncoder(types(typ(domain.TypeInteger), typ(domain.TypeString)))
	require.NoError(t, err)
	b, err := NewRowLogBatchBuilder(enc, 1, true, nil)
	require.NoError(t, err)
	require.NoError(t, b.Append(ChangeAppendOnly, row(i64(1), str("a"))))
	got := b.Build(NoWriterID, NoBatchSequence)
	assert.Equal(t, unhex(t, indexedLogVectorHex), got)
	assert.Equal(t, uint32(0xA7887790), CRC32C(got[25:]))

	lb, rest, err := ReadLogBatch(got)
	require.NoError(t, err)
	assert.Empty(t, rest)
	assert.True(t, lb.AppendOnly())
	assert.Equal(t, int32(NoLeaderEpoch), lb.LeaderEpoch)
	assert.Equal(t, int32(0), lb.LastOffsetDelta)
	recs, err := lb.RowRecords()
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, ChangeAppendOnly, recs[0].ChangeType)
	dec, err := NewIndexedRowDecoder(types(typ(domain.TypeInteger), typ(domain.TypeString)))
	require.NoError(t, err)
	vals, err := dec.DecodeRow(nil, recs[0].Row)
	require.NoError(t, err)
	assert.Equal(t, []domain.Datum{{I64: 1}, {Bytes: []byte("a")}}, vals)
}

func TestRowLogBatchBuilder(t *testing.T) {
	t.Parallel()
	enc, err := NewCompactedRowEncoder(types(notNull(typ(domain.TypeBigInt))))
	require.NoError(t, err)
	b, err := NewRowLogBatchBuilder(enc, 2, true, nil)
	require.NoError(t, err)
	assert.ErrorIs(t, b.Append(ChangeInsert, row(i64(1))), ErrInvalidValue, "append-only batches take only +A")
	for i := int64(0); i < 3; i++ {
		require.NoError(t, b.Append(ChangeAppendOnly, row(i64(i))))
	}
	assert.ErrorIs(t, b.Append(ChangeAppendOnly, row(null())), ErrInvalidValue)
	assert.Equal(t, 3, b.RecordCount())
	lb, _, err := ReadLogBatch(b.Build(11, 4))
	require.NoError(t, err)
	assert.Equal(t, int32(2), lb.LastOffsetDelta)
	assert.Equal(t, int32(3), lb.RecordCount)
	assert.Equal(t, int64(11), lb.WriterID)
	assert.Equal(t, int32(4), lb.BatchSequence)
	assert.Equal(t, int16(2), lb.SchemaID)
	recs, err := lb.RowRecords()
	require.NoError(t, err)
	assert.Len(t, recs, 3)
	assert.Equal(t, []byte{0x00, 0x02}, recs[2].Row)

	// A changelog batch (not append-only) carries per-record change types.
	cl, err := NewRowLogBatchBuilder(enc, 2, false, nil)
	require.NoError(t, err)
	for _, ct := range []ChangeType{ChangeInsert, ChangeUpdateBefore, ChangeUpdateAfter, ChangeDelete} {
		require.NoError(t, cl.Append(ct, row(i64(1))))
	}
	assert.ErrorIs(t, cl.Append(ChangeType(9), row(i64(1))), ErrInvalidValue)
	lb, _, err = ReadLogBatch(cl.Build(NoWriterID, NoBatchSequence))
	require.NoError(t, err)
	assert.False(t, lb.AppendOnly())
	recs, err = lb.RowRecords()
	require.NoError(t, err)
	got := make([]string, len(recs))
	for i, r := range recs {
		got[i] = r.ChangeType.String()
	}
	assert.Equal(t, []string{"+I", "-U", "+U", "-D"}, got)
}

// The Arrow writer plugs its records area in through BeginLogBatch /
// FinishLogBatch or AppendLogBatch.
func TestLogBatchPlugIn(t *testing.T) {
	t.Parallel()
	payload := []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x10, 0, 0, 0, 1, 2, 3}
	p := LogBatchParams{SchemaID: 3, Attributes: AttrAppendOnly, WriterID: 99, BatchSequence: 0, RecordCount: 5}
	viaAppend, err := AppendLogBatch([]byte("xy"), p, payload)
	require.NoError(t, err)
	assert.Equal(t, []byte("xy"), viaAppend[:2])

	inPlace, start := BeginLogBatch([]byte("xy"))
	assert.Equal(t, 2, start)
	inPlace = append(inPlace, payload...)
	require.NoError(t, FinishLogBatch(inPlace, start, p))
	assert.Equal(t, viaAppend, inPlace)

	lb, rest, err := ReadLogBatch(inPlace[2:])
	require.NoError(t, err)
	assert.Empty(t, rest)
	assert.Equal(t, LogBatch{
		BaseOffset: 0, Magic: LogMagicV0, CommitTimestamp: 0, LeaderEpoch: NoLeaderEpoch, CRC: lb.CRC,
		SchemaID: 3, Attributes: 1, LastOffsetDelta: 4, WriterID: 99, BatchSequence: 0, RecordCount: 5,
		Records: payload,
	}, lb)
	assert.Equal(t, CRC32C(inPlace[2+25:]), lb.CRC)
	assert.Equal(t, int32(len(inPlace)-2-12), Int32LE(inPlace[2+8:]))

	// An empty Arrow batch is header-only with lastOffsetDelta 0.
	empty, err := AppendLogBatch(nil, LogBatchParams{SchemaID: 1, Attributes: AttrAppendOnly, WriterID: -1, BatchSequence: -1}, nil)
	require.NoError(t, err)
	assert.Len(t, empty, LogBatchHeaderSizeV0)
	assert.Equal(t, int32(0), Int32LE(empty[28:]))

	_, err = AppendLogBatch(nil, LogBatchParams{SchemaID: 40000}, nil)
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorIs(t, FinishLogBatch(make([]byte, 10), 0, p), ErrInvalidValue)
}

// A V1 batch as written by a Fluss 0.9.1 server (LogRecordBatchFormatTest
// offsets: leaderEpoch 21, crc 25, schemaId 29, attributes 31,
// lastOffsetDelta 32, writerId 36, batchSequence 44, recordCount 48, header 52).
func TestReadLogBatchV1(t *testing.T) {
	t.Parallel()
	b := make([]byte, 52, 60)
	PutInt64LE(b[0:], 1000)
	b[12] = LogMagicV1
	PutInt64LE(b[13:], 1234567)
	PutInt32LE(b[21:], 8)
	PutInt16LE(b[29:], 4)
	b[31] = 1
	PutInt32LE(b[32:], 1)
	PutInt64LE(b[36:], 77)
	PutInt32LE(b[44:], 6)
	PutInt32LE(b[48:], 2)
	b = append(b, 1, 2, 3)
	PutInt32LE(b[8:], int32(len(b)-12))
	PutInt32LE(b[25:], int32(CRC32C(b[29:])))

	lb, _, err := ReadLogBatch(b)
	require.NoError(t, err)
	assert.Equal(t, LogBatch{
		BaseOffset: 1000, Magic: 1, CommitTimestamp: 1234567, LeaderEpoch: 8, CRC: CRC32C(b[29:]),
		SchemaID: 4, Attributes: 1, LastOffsetDelta: 1, WriterID: 77, BatchSequence: 6, RecordCount: 2,
		Records: []byte{1, 2, 3},
	}, lb)

	b[12] = 2
	_, _, err = ReadLogBatch(b)
	assert.ErrorIs(t, err, ErrCorrupt, "magic 2 is unknown to 0.9.1")
}

func TestReadLogBatchRejectsCorruption(t *testing.T) {
	t.Parallel()
	good, err := AppendLogBatch(nil, LogBatchParams{SchemaID: 1, Attributes: 1, WriterID: -1, BatchSequence: -1, RecordCount: 1},
		unhex(t, "0B 00 00 00 00 00 01 00 00 00 01 00 00 00 61"))
	require.NoError(t, err)
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := map[string][]byte{
		"short":        good[:12],
		"truncated":    good[:len(good)-1],
		"bad crc":      mutate(func(b []byte) []byte { b[40] ^= 1; return b }),
		"length small": mutate(func(b []byte) []byte { PutInt32LE(b[8:], 10); return b }),
	}
	for name, b := range tests {
		_, _, err := ReadLogBatch(b)
		assert.ErrorIs(t, err, ErrCorrupt, name)
	}
	// Base offset and commit timestamp are outside the CRC: the server patches them.
	patched := mutate(func(b []byte) []byte { PutInt64LE(b, 500); PutInt64LE(b[13:], 42); return b })
	lb, _, err := ReadLogBatch(patched)
	require.NoError(t, err)
	assert.Equal(t, int64(500), lb.BaseOffset)

	lb.RecordCount = 2
	_, err = lb.RowRecords()
	assert.ErrorIs(t, err, ErrCorrupt)
}

func TestValueDecoder(t *testing.T) {
	t.Parallel()
	v1 := kvVectorTypes()
	v2 := append(kvVectorTypes(), typ(domain.TypeBigInt))
	calls := 0
	dec := NewValueDecoder(FormatCompacted, func(id int32) ([]domain.DataType, error) {
		calls++
		switch id {
		case 1:
			return v1, nil
		case 2:
			return v2, nil
		}
		return nil, domain.NotFound(domain.ResourceNone, "schema %d", id)
	})
	row1, err := EncodeCompactedRow(nil, v1, row(i64(1), str("a")))
	require.NoError(t, err)
	row2, err := EncodeCompactedRow(nil, v2, row(i64(2), null(), i64(9)))
	require.NoError(t, err)

	id, vals, err := dec.Decode(nil, AppendValue(nil, 1, row1))
	require.NoError(t, err)
	assert.Equal(t, int16(1), id)
	assert.Equal(t, []domain.Datum{{I64: 1}, {Bytes: []byte("a")}}, vals)
	id, vals, err = dec.Decode(vals, AppendValue(nil, 2, row2))
	require.NoError(t, err)
	assert.Equal(t, int16(2), id)
	assert.Equal(t, []domain.Datum{{I64: 2}, {Null: true}, {I64: 9}}, vals)
	_, _, err = dec.Decode(nil, AppendValue(nil, 1, row1))
	require.NoError(t, err)
	assert.Equal(t, 2, calls, "decoders are cached per schema id")

	_, _, err = dec.Decode(nil, AppendValue(nil, 3, row1))
	assert.Equal(t, domain.KindNotFound, domain.KindOf(err))
	_, _, err = dec.Decode(nil, []byte{1})
	assert.ErrorIs(t, err, ErrCorrupt)
	_, _, err = dec.Decode(nil, AppendValue(nil, 1, row2))
	assert.True(t, errors.Is(err, ErrCorrupt), "a row of another schema does not decode")

	sid, rowBytes, err := SplitValue(AppendValue(nil, -2, []byte{7}))
	require.NoError(t, err)
	assert.Equal(t, int16(-2), sid)
	assert.Equal(t, []byte{7}, rowBytes)
}
