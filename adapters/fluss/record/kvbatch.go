package record

import (
	"encoding/binary"
	"math"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// KV record batch, magic V0 (record/DefaultKvRecordBatch.java,
// KvRecordBatchBuilder.java, DefaultKvRecord.java). All integers little-endian:
//
//	offset  size  field
//	     0     4  length: batch size - 4
//	     4     1  magic: 0
//	     5     4  crc: CRC-32C of bytes [9, end)
//	     9     2  schemaId
//	    11     1  attributes: 0
//	    12     8  writerId (NoWriterID when idempotence is off)
//	    20     4  batchSequence (NoBatchSequence when idempotence is off)
//	    24     4  recordCount
//	    28     …  records
//
// Each record: int32 size of what follows, unsigned varint key length, key,
// then the value row (CompactedRow or IndexedRow, no schema id); a delete has
// no value bytes.

// Field offsets and sizes of a KV batch header.
const (
	KvMagicV0             = 0
	kvLengthOffset        = 0
	kvMagicOffset         = 4
	kvCRCOffset           = 5
	kvSchemaIDOffset      = 9
	kvAttributesOffset    = 11
	kvWriterIDOffset      = 12
	kvBatchSequenceOffset = 20
	kvRecordCountOffset   = 24
	// KvBatchHeaderSize is the size of a V0 KV batch header.
	KvBatchHeaderSize = 28
)

// Writer state values meaning "idempotence off" (LogRecordBatchFormat.NO_WRITER_ID,
// NO_BATCH_SEQUENCE); shared by KV and log batches.
const (
	NoWriterID      int64 = -1
	NoBatchSequence int32 = -1
)

func checkSchemaID(schemaID int32) error {
	if schemaID < 0 || schemaID > math.MaxInt16 {
		return invalidValue("schema id %d outside 0..%d", schemaID, math.MaxInt16)
	}
	return nil
}

// KvBatchBuilder builds one KV record batch in a reusable buffer. Records are
// appended in place, so encoding a row allocates nothing once the buffer has
// grown to its working size. A KvBatchBuilder is not safe for concurrent use.
type KvBatchBuilder struct {
	buf      []byte
	schemaID int16
	count    int32
}

// NewKvBatchBuilder starts a batch for rows of schema schemaID (0..32767),
// reusing buf's capacity when given.
func NewKvBatchBuilder(schemaID int32, buf []byte) (*KvBatchBuilder, error) {
	b := &KvBatchBuilder{buf: buf}
	if err := b.Reset(schemaID); err != nil {
		return nil, err
	}
	return b, nil
}

// Reset empties the builder for a new batch, keeping its buffer.
func (b *KvBatchBuilder) Reset(schemaID int32) error {
	if err := checkSchemaID(schemaID); err != nil {
		return err
	}
	b.schemaID = int16(schemaID)
	b.count = 0
	b.buf = appendZeros(b.buf[:0], KvBatchHeaderSize)
	return nil
}

// RecordCount returns the number of records appended so far.
func (b *KvBatchBuilder) RecordCount() int { return int(b.count) }

// SizeInBytes returns the size the batch has so far, header included.
func (b *KvBatchBuilder) SizeInBytes() int { return len(b.buf) }

// KvRecordSize returns the bytes a record with the given key and value sizes
// adds to a KV batch (DefaultKvRecord.sizeOf); valueLen is 0 for a delete.
func KvRecordSize(keyLen, valueLen int) int {
	return 4 + SizeUvarint32(uint32(keyLen)) + keyLen + valueLen
}

// beginRecord writes the size placeholder, key length and key.
func (b *KvBatchBuilder) beginRecord(key []byte) (int, error) {
	if b.count == math.MaxInt32-1 {
		return 0, invalidValue("maximum number of records per batch exceeded")
	}
	start := len(b.buf)
	b.buf = append(b.buf, 0, 0, 0, 0)
	b.buf = AppendUvarint32(b.buf, uint32(len(key)))
	b.buf = append(b.buf, key...)
	return start, nil
}

func (b *KvBatchBuilder) endRecord(start int) {
	binary.LittleEndian.PutUint32(b.buf[start:], uint32(len(b.buf)-start-4))
	b.count++
}

// Upsert appends an upsert of row under key, encoding the value with enc
// (CompactedRowEncoder for the default `table.kv.format`). If the row cannot
// be encoded the batch is left unchanged and the error (ErrInvalidValue) is
// returned, so one bad row does not spoil the batch.
func (b *KvBatchBuilder) Upsert(key []byte, enc RowEncoder, row []domain.Datum) error {
	start, err := b.beginRecord(key)
	if err != nil {
		return err
	}
	if b.buf, err = enc.AppendRow(b.buf, row); err != nil {
		b.buf = b.buf[:start]
		return err
	}
	b.endRecord(start)
	return nil
}

// UpsertEncoded appends an upsert whose value row is already encoded.
func (b *KvBatchBuilder) UpsertEncoded(key, value []byte) error {
	start, err := b.beginRecord(key)
	if err != nil {
		return err
	}
	b.buf = append(b.buf, value...)
	b.endRecord(start)
	return nil
}

// Delete appends a delete of key: a record with no value bytes.
func (b *KvBatchBuilder) Delete(key []byte) error {
	start, err := b.beginRecord(key)
	if err != nil {
		return err
	}
	b.endRecord(start)
	return nil
}

// Build writes the header (length, magic 0, schema id, attributes 0, writer
// id, batch sequence, record count) and the CRC-32C over bytes [9, end), and
// returns the batch. The result aliases the builder's buffer and stays valid
// until the next Reset or append. Build may be called again with another
// writer state (after a writer id reset); it re-stamps the header in place.
func (b *KvBatchBuilder) Build(writerID int64, batchSequence int32) []byte {
	h := b.buf[:KvBatchHeaderSize]
	le := binary.LittleEndian
	le.PutUint32(h[kvLengthOffset:], uint32(len(b.buf)-4))
	h[kvMagicOffset] = KvMagicV0
	le.PutUint16(h[kvSchemaIDOffset:], uint16(b.schemaID))
	h[kvAttributesOffset] = 0
	le.PutUint64(h[kvWriterIDOffset:], uint64(writerID))
	le.PutUint32(h[kvBatchSequenceOffset:], uint32(batchSequence))
	le.PutUint32(h[kvRecordCountOffset:], uint32(b.count))
	le.PutUint32(h[kvCRCOffset:], CRC32C(b.buf[kvSchemaIDOffset:]))
	return b.buf
}

// KvBatch is a decoded KV batch header with its records area.
type KvBatch struct {
	Magic         int8
	CRC           uint32
	SchemaID      int16
	Attributes    uint8
	WriterID      int64
	BatchSequence int32
	RecordCount   int32
	// Records are the record bytes after the header (aliasing the input).
	Records []byte
}

// KvRecord is one record of a KV batch. Value is nil for a delete. Both alias
// the batch bytes.
type KvRecord struct {
	Key   []byte
	Value []byte
}

// ReadKvBatch decodes the KV batch at the start of b, checking its length,
// magic and CRC (DefaultKvRecordBatch.ensureValid), and returns it with the
// bytes that follow it.
func ReadKvBatch(b []byte) (KvBatch, []byte, error) {
	if len(b) < KvBatchHeaderSize {
		return KvBatch{}, nil, corrupt("kv batch of %d bytes is shorter than its %d-byte header", len(b), KvBatchHeaderSize)
	}
	le := binary.LittleEndian
	length := int32(le.Uint32(b[kvLengthOffset:]))
	if length < KvBatchHeaderSize-4 || int64(length) > int64(len(b)-4) {
		return KvBatch{}, nil, corrupt("kv batch length %d outside %d..%d", length, KvBatchHeaderSize-4, len(b)-4)
	}
	size := int(length) + 4
	batch := b[:size:size]
	kb := KvBatch{
		Magic:         int8(batch[kvMagicOffset]),
		CRC:           le.Uint32(batch[kvCRCOffset:]),
		SchemaID:      int16(le.Uint16(batch[kvSchemaIDOffset:])),
		Attributes:    batch[kvAttributesOffset],
		WriterID:      int64(le.Uint64(batch[kvWriterIDOffset:])),
		BatchSequence: int32(le.Uint32(batch[kvBatchSequenceOffset:])),
		RecordCount:   int32(le.Uint32(batch[kvRecordCountOffset:])),
		Records:       batch[KvBatchHeaderSize:],
	}
	if kb.Magic != KvMagicV0 {
		return KvBatch{}, nil, corrupt("unsupported kv batch magic %d", kb.Magic)
	}
	if got := CRC32C(batch[kvSchemaIDOffset:]); got != kb.CRC {
		return KvBatch{}, nil, corrupt("kv batch crc %d, computed %d", kb.CRC, got)
	}
	return kb, b[size:], nil
}

// ReadRecords splits the records area into RecordCount records and checks
// that nothing is left over.
func (kb *KvBatch) ReadRecords() ([]KvRecord, error) {
	if kb.RecordCount < 0 || int64(kb.RecordCount)*5 > int64(len(kb.Records)) {
		return nil, corrupt("kv batch claims %d records in %d bytes", kb.RecordCount, len(kb.Records))
	}
	out := make([]KvRecord, 0, kb.RecordCount)
	rest := kb.Records
	le := binary.LittleEndian
	for i := int32(0); i < kb.RecordCount; i++ {
		if len(rest) < 4 {
			return nil, corrupt("record %d: truncated size", i)
		}
		size := int32(le.Uint32(rest))
		if size < 1 || int64(size) > int64(len(rest)-4) {
			return nil, corrupt("record %d: size %d outside 1..%d", i, size, len(rest)-4)
		}
		rec := rest[4 : 4+int(size)]
		rest = rest[4+int(size):]
		keyLen, n := Uvarint32(rec)
		if n <= 0 || int32(keyLen) < 0 || int(keyLen) > len(rec)-n {
			return nil, corrupt("record %d: bad key length", i)
		}
		end := n + int(keyLen)
		r := KvRecord{Key: rec[n:end:end]}
		if end < len(rec) {
			r.Value = rec[end:len(rec):len(rec)]
		}
		out = append(out, r)
	}
	if len(rest) != 0 {
		return nil, corrupt("%d trailing bytes after %d records", len(rest), kb.RecordCount)
	}
	return out, nil
}
