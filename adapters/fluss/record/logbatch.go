package record

import (
	"encoding/binary"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Log record batch (record/LogRecordBatchFormat.java at v0.9.1-incubating,
// MemoryLogRecordsRowBuilder.java, MemoryLogRecordsArrowBuilder.java). All
// integers little-endian. Magic V0, the only one clients write:
//
//	offset  size  field
//	     0     8  baseOffset (0 from clients; the server assigns it)
//	     8     4  length: batch size - 12
//	    12     1  magic: 0
//	    13     8  commitTimestamp (0 from clients; the server sets it)
//	    21     4  crc: CRC-32C of bytes [25, end)
//	    25     2  schemaId
//	    27     1  attributes: bit 0 = append-only
//	    28     4  lastOffsetDelta: recordCount-1, 0 when empty
//	    32     8  writerId
//	    40     4  batchSequence
//	    44     4  recordCount
//	    48     …  records
//
// Magic V1 in Fluss 0.7-0.9 (read only here) inserts an int32 leaderEpoch at
// 21 and shifts the rest by 4 (52-byte header). Fluss 1.0 reuses magic 1 for a
// statistics layout: the V0 fields, then int32 statisticsLength at 48 and that
// many statistics bytes before the records (the Java client writes it for
// tables with `table.statistics.columns`); its magic 2 is the 0.9 V1 layout
// plus statisticsLength at 52. Readers tell the two magic-1 layouts apart by
// their CRC (or, unchecked, by recordCount and lastOffsetDelta agreeing).
//
// Row-based records (INDEXED and COMPACTED log formats, IndexedLogRecord.java):
// int32 size of what follows, int8 change type, the row.

// Log batch magic values and sizes.
const (
	LogMagicV0 = 0 // the magic clients write
	LogMagicV1 = 1 // 0.9.1: V0 plus leaderEpoch

	LogBatchHeaderSizeV0 = 48
	LogBatchHeaderSizeV1 = 52

	// LogOverhead is the size of baseOffset + length (LogRecordBatchFormat.LOG_OVERHEAD).
	LogOverhead = 12

	logMagicOffset      = 12
	logCommitTSOffset   = 13
	logV0CRCOffset      = 21
	logV0SchemaIDOffset = 25

	// NoLeaderEpoch is the leader epoch of batches written before the server
	// assigns one (LogRecordBatchFormat.NO_LEADER_EPOCH).
	NoLeaderEpoch int32 = -1
)

// Batch attribute bits.
const (
	// AttrAppendOnly marks a batch whose records all have change type
	// APPEND_ONLY; clients always set it. For ARROW batches it also means
	// the records area has no change-type vector.
	AttrAppendOnly uint8 = 0x01
)

// ChangeType is the change type of a log record (record/ChangeType.java).
type ChangeType int8

// Change types and their byte values.
const (
	ChangeAppendOnly   ChangeType = 0 // +A
	ChangeInsert       ChangeType = 1 // +I
	ChangeUpdateBefore ChangeType = 2 // -U
	ChangeUpdateAfter  ChangeType = 3 // +U
	ChangeDelete       ChangeType = 4 // -D
)

// String returns the Fluss short string (+A, +I, -U, +U, -D).
func (c ChangeType) String() string {
	switch c {
	case ChangeAppendOnly:
		return "+A"
	case ChangeInsert:
		return "+I"
	case ChangeUpdateBefore:
		return "-U"
	case ChangeUpdateAfter:
		return "+U"
	case ChangeDelete:
		return "-D"
	default:
		return "?"
	}
}

// LogBatchParams are the client-set header fields of a V0 log batch.
type LogBatchParams struct {
	SchemaID      int32 // 0..32767
	Attributes    uint8 // AttrAppendOnly for every client batch
	WriterID      int64 // NoWriterID when idempotence is off
	BatchSequence int32 // NoBatchSequence when idempotence is off
	RecordCount   int32
}

// BeginLogBatch reserves a zeroed V0 header at the end of dst and returns the
// extended slice and the batch's start offset. Append the records area
// (Arrow IPC message, or row records) after it, then call FinishLogBatch.
func BeginLogBatch(dst []byte) ([]byte, int) {
	start := len(dst)
	return appendZeros(dst, LogBatchHeaderSizeV0), start
}

// FinishLogBatch fills in the V0 header of the batch that starts at
// dst[start] and extends to the end of dst: baseOffset 0, length, magic 0,
// commitTimestamp 0, the params, lastOffsetDelta = RecordCount-1 (0 when
// empty), and last the CRC-32C over bytes [start+25, end). It may be called
// again with new params (after a writer id reset).
func FinishLogBatch(dst []byte, start int, p LogBatchParams) error {
	if err := checkSchemaID(p.SchemaID); err != nil {
		return err
	}
	if p.RecordCount < 0 {
		return invalidValue("record count %d is negative", p.RecordCount)
	}
	if start < 0 || len(dst)-start < LogBatchHeaderSizeV0 {
		return invalidValue("log batch at %d has no room for its %d-byte header", start, LogBatchHeaderSizeV0)
	}
	le := binary.LittleEndian
	h := dst[start:]
	le.PutUint64(h[0:], 0)
	le.PutUint32(h[8:], uint32(len(h)-LogOverhead))
	h[logMagicOffset] = LogMagicV0
	le.PutUint64(h[logCommitTSOffset:], 0)
	le.PutUint16(h[logV0SchemaIDOffset:], uint16(p.SchemaID))
	h[27] = p.Attributes
	lastOffsetDelta := int32(0)
	if p.RecordCount > 0 {
		lastOffsetDelta = p.RecordCount - 1
	}
	le.PutUint32(h[28:], uint32(lastOffsetDelta))
	le.PutUint64(h[32:], uint64(p.WriterID))
	le.PutUint32(h[40:], uint32(p.BatchSequence))
	le.PutUint32(h[44:], uint32(p.RecordCount))
	le.PutUint32(h[logV0CRCOffset:], CRC32C(h[logV0SchemaIDOffset:]))
	return nil
}

// AppendLogBatch appends a complete V0 log batch whose records area is
// records (for example one Arrow IPC RecordBatch message, or nothing for an
// empty Arrow batch) to dst.
func AppendLogBatch(dst []byte, p LogBatchParams, records []byte) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginLogBatch(dst)
	dst = append(dst, records...)
	if err := FinishLogBatch(dst, start, p); err != nil {
		return dst[:orig], err
	}
	return dst, nil
}

// RowLogBatchBuilder builds one V0 log batch of row-based records (the
// INDEXED or COMPACTED `table.log.format`) in a reusable buffer
// (MemoryLogRecordsIndexedBuilder / MemoryLogRecordsCompactedBuilder). It is
// not safe for concurrent use.
type RowLogBatchBuilder struct {
	enc        RowEncoder
	buf        []byte
	schemaID   int32
	appendOnly bool
	count      int32
}

// NewRowLogBatchBuilder starts a batch whose rows are encoded by enc
// (IndexedRowEncoder for INDEXED, CompactedRowEncoder for COMPACTED). When
// appendOnly is true (every client batch), only ChangeAppendOnly records are
// accepted and the batch gets AttrAppendOnly.
func NewRowLogBatchBuilder(enc RowEncoder, schemaID int32, appendOnly bool, buf []byte) (*RowLogBatchBuilder, error) {
	b := &RowLogBatchBuilder{enc: enc, appendOnly: appendOnly, buf: buf}
	if err := b.Reset(schemaID); err != nil {
		return nil, err
	}
	return b, nil
}

// Reset empties the builder for a new batch, keeping its buffer and encoder.
func (b *RowLogBatchBuilder) Reset(schemaID int32) error {
	if err := checkSchemaID(schemaID); err != nil {
		return err
	}
	b.schemaID, b.count = schemaID, 0
	b.buf, _ = BeginLogBatch(b.buf[:0])
	return nil
}

// RecordCount returns the number of records appended so far.
func (b *RowLogBatchBuilder) RecordCount() int { return int(b.count) }

// SizeInBytes returns the size of the batch so far, header included.
func (b *RowLogBatchBuilder) SizeInBytes() int { return len(b.buf) }

// Append encodes row and appends it as a record of change type ct. On an
// encoding error the batch is left unchanged.
func (b *RowLogBatchBuilder) Append(ct ChangeType, row []domain.Datum) error {
	if b.appendOnly && ct != ChangeAppendOnly {
		return invalidValue("only APPEND_ONLY records are allowed in an append-only batch, got %s", ct)
	}
	if ct < ChangeAppendOnly || ct > ChangeDelete {
		return invalidValue("unknown change type %d", ct)
	}
	start := len(b.buf)
	b.buf = append(b.buf, 0, 0, 0, 0, byte(ct))
	var err error
	if b.buf, err = b.enc.AppendRow(b.buf, row); err != nil {
		b.buf = b.buf[:start]
		return err
	}
	binary.LittleEndian.PutUint32(b.buf[start:], uint32(len(b.buf)-start-4))
	b.count++
	return nil
}

// Build writes the header and CRC and returns the batch, aliasing the
// builder's buffer until the next Reset or Append. It may be called again
// with another writer state.
func (b *RowLogBatchBuilder) Build(writerID int64, batchSequence int32) []byte {
	var attrs uint8
	if b.appendOnly {
		attrs = AttrAppendOnly
	}
	// FinishLogBatch cannot fail here: the schema id was checked by Reset and
	// the header was reserved by BeginLogBatch.
	_ = FinishLogBatch(b.buf, 0, LogBatchParams{
		SchemaID: b.schemaID, Attributes: attrs, WriterID: writerID,
		BatchSequence: batchSequence, RecordCount: b.count,
	})
	return b.buf
}

// LogBatch is a decoded log batch header with its records area.
type LogBatch struct {
	BaseOffset      int64
	Magic           int8
	CommitTimestamp int64
	LeaderEpoch     int32 // NoLeaderEpoch for magic V0
	CRC             uint32
	SchemaID        int16
	Attributes      uint8
	LastOffsetDelta int32
	WriterID        int64
	BatchSequence   int32
	RecordCount     int32
	// Records is the records area after the header (aliasing the input).
	Records []byte
}

// AppendOnly reports whether attributes bit 0 is set.
func (lb *LogBatch) AppendOnly() bool { return lb.Attributes&AttrAppendOnly != 0 }

// ReadLogBatch decodes the log batch at the start of b (magic V0; V1 as laid
// out by Fluss 0.9.1 or by 1.0; 1.0's V2), checking its length and CRC
// (DefaultLogRecordBatch.ensureValid), and returns it with the bytes that
// follow it.
func ReadLogBatch(b []byte) (LogBatch, []byte, error) {
	return readLogBatch(b, true)
}

// ReadLogBatchNoCRC is ReadLogBatch without the CRC check, for batches the
// server re-serialised for a projected fetch: FileLogProjection
// (fluss-common/.../record/FileLogProjection.java) rewrites the records and
// the length but leaves the original CRC in the header.
func ReadLogBatchNoCRC(b []byte) (LogBatch, []byte, error) {
	return readLogBatch(b, false)
}

func readLogBatch(b []byte, checkCRC bool) (LogBatch, []byte, error) {
	if len(b) < LogOverhead+1 {
		return LogBatch{}, nil, corrupt("log batch of %d bytes is shorter than its header", len(b))
	}
	le := binary.LittleEndian
	magic := int8(b[logMagicOffset])
	var layouts []logLayout
	switch magic {
	case LogMagicV0:
		layouts = []logLayout{layoutV0}
	case LogMagicV1:
		// 0.9's leader-epoch layout or 1.0's statistics layout: the one
		// whose CRC matches (without a CRC check, whose header is
		// consistent).
		layouts = []logLayout{layoutV1Stats, layoutV1Epoch}
	case LogMagicV2:
		layouts = []logLayout{layoutV2}
	default:
		return LogBatch{}, nil, corrupt("unsupported log batch magic %d", magic)
	}
	length := int32(le.Uint32(b[8:]))
	if int64(length) < int64(LogBatchHeaderSizeV0-LogOverhead) || int64(length) > int64(len(b)-LogOverhead) {
		return LogBatch{}, nil, corrupt("log batch length %d outside %d..%d", length, LogBatchHeaderSizeV0-LogOverhead, len(b)-LogOverhead)
	}
	size := int(length) + LogOverhead
	batch := b[:size:size]
	var firstErr error
	for _, l := range layouts {
		lb, err := l.read(batch, checkCRC)
		if err == nil && (checkCRC || len(layouts) == 1 || lb.consistent()) {
			return lb, b[size:], nil
		}
		if err == nil {
			err = corrupt("log batch header is inconsistent as magic %d (%s)", magic, l.name)
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return LogBatch{}, nil, firstErr
}

// logLayout is where the fields of one log batch magic sit
// (LogRecordBatchFormat.java at v0.9.1-incubating and at 1.0-SNAPSHOT).
type logLayout struct {
	name        string
	magic       int8
	epochOffset int // -1: no leader epoch
	crcOffset   int // the CRC covers [crcOffset+4, end)
	header      int // fixed header size
	stats       int // offset of the int32 statistics length, -1: none
}

// LogMagicV2 is the log batch magic of Fluss 1.0 with leader epoch and statistics.
const LogMagicV2 = 2

var (
	layoutV0      = logLayout{name: "V0", magic: 0, epochOffset: -1, crcOffset: 21, header: 48, stats: -1}
	layoutV1Epoch = logLayout{name: "0.9 leader epoch", magic: 1, epochOffset: 21, crcOffset: 25, header: 52, stats: -1}
	layoutV1Stats = logLayout{name: "1.0 statistics", magic: 1, epochOffset: -1, crcOffset: 21, header: 52, stats: 48}
	layoutV2      = logLayout{name: "1.0 leader epoch and statistics", magic: 2, epochOffset: 21, crcOffset: 25, header: 56, stats: 52}
)

func (l logLayout) read(batch []byte, checkCRC bool) (LogBatch, error) {
	le := binary.LittleEndian
	if len(batch) < l.header {
		return LogBatch{}, corrupt("log batch of %d bytes is shorter than its %d-byte header", len(batch), l.header)
	}
	lb := LogBatch{BaseOffset: int64(le.Uint64(batch)), Magic: l.magic, LeaderEpoch: NoLeaderEpoch,
		CommitTimestamp: int64(le.Uint64(batch[logCommitTSOffset:]))}
	if l.epochOffset >= 0 {
		lb.LeaderEpoch = int32(le.Uint32(batch[l.epochOffset:]))
	}
	f := batch[l.crcOffset:]
	lb.CRC = le.Uint32(f)
	lb.SchemaID = int16(le.Uint16(f[4:]))
	lb.Attributes = f[6]
	lb.LastOffsetDelta = int32(le.Uint32(f[7:]))
	lb.WriterID = int64(le.Uint64(f[11:]))
	lb.BatchSequence = int32(le.Uint32(f[19:]))
	lb.RecordCount = int32(le.Uint32(f[23:]))
	start := l.header
	if l.stats >= 0 {
		n := int32(le.Uint32(batch[l.stats:]))
		if n < 0 || int64(n) > int64(len(batch)-l.header) {
			return LogBatch{}, corrupt("log batch statistics length %d outside 0..%d", n, len(batch)-l.header)
		}
		start += int(n)
	}
	lb.Records = batch[start:]
	if got := CRC32C(f[4:]); checkCRC && got != lb.CRC {
		return LogBatch{}, corrupt("log batch crc %d, computed %d", lb.CRC, got)
	}
	return lb, nil
}

// consistent reports whether the client-set counts agree: lastOffsetDelta is
// recordCount-1 (0 for an empty batch).
func (lb *LogBatch) consistent() bool {
	return lb.RecordCount >= 0 && lb.LastOffsetDelta == max(0, lb.RecordCount-1)
}

// LogRecord is one row-based log record; Row aliases the batch bytes.
type LogRecord struct {
	ChangeType ChangeType
	Row        []byte
}

// RowRecords splits the records area of an INDEXED or COMPACTED log batch
// into its RecordCount records and checks that nothing is left over.
func (lb *LogBatch) RowRecords() ([]LogRecord, error) {
	if lb.RecordCount < 0 || int64(lb.RecordCount)*5 > int64(len(lb.Records)) {
		return nil, corrupt("log batch claims %d records in %d bytes", lb.RecordCount, len(lb.Records))
	}
	out := make([]LogRecord, 0, lb.RecordCount)
	rest := lb.Records
	for i := int32(0); i < lb.RecordCount; i++ {
		if len(rest) < 5 {
			return nil, corrupt("record %d: truncated header", i)
		}
		size := int32(binary.LittleEndian.Uint32(rest))
		if size < 1 || int64(size) > int64(len(rest)-4) {
			return nil, corrupt("record %d: size %d outside 1..%d", i, size, len(rest)-4)
		}
		ct := ChangeType(rest[4])
		if ct < ChangeAppendOnly || ct > ChangeDelete {
			return nil, corrupt("record %d: unknown change type %d", i, rest[4])
		}
		end := 4 + int(size)
		out = append(out, LogRecord{ChangeType: ct, Row: rest[5:end:end]})
		rest = rest[end:]
	}
	if len(rest) != 0 {
		return nil, corrupt("%d trailing bytes after %d records", len(rest), lb.RecordCount)
	}
	return out, nil
}
