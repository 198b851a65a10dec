// Package arrowlog builds and reads the records area of ARROW-format Fluss log
// batches (`table.log.format` = ARROW, the default), for Apache Fluss 0.9.1.
//
// Sources (apache/fluss at tag v0.9.1-incubating, fluss-common/src/main/java/
// org/apache/fluss): record/MemoryLogRecordsArrowBuilder.java,
// row/arrow/ArrowWriter.java and writers/*.java, utils/ArrowUtils.java,
// compression/*.java, record/FileLogProjection.java; Arrow Java 15.0.0 (the
// version Fluss 0.9.1 shades): VectorUnloader, VectorLoader,
// AbstractCompressionCodec, MessageSerializer.
//
// # The bytes
//
// An ARROW log batch is a magic-V0 log batch header (package record) whose
// records area is exactly one Arrow IPC encapsulated RecordBatch message:
//
//	0xFFFFFFFF                      continuation marker
//	int32 LE                        metadata length (flatbuffer + padding; the body starts 8-aligned)
//	flatbuffer Message (V5)         header RecordBatch: length, FieldNodes, Buffers,
//	                                BodyCompression (absent for NONE), bodyLength
//	body                            the buffers in depth-first schema order, each 8-aligned
//
// There is no Schema message (readers rebuild the Arrow schema from the table
// schema of the batch's schema id) and no end-of-stream marker. Batches are
// append-only (attributes bit 0), so no change-type vector precedes the
// message. An empty batch has no Arrow bytes at all.
//
// The message is produced with arrow-go: array builders, then an ipc.Writer
// with a payload writer that drops the Schema payload (the Rust client does
// the same with arrow-rs: it keeps the StreamWriter output after the schema).
//
// # Types (ArrowUtils.toArrowSchema)
//
//	BOOLEAN            Bool                         Datum.I64 0/1
//	TINYINT..BIGINT    Int(8|16|32|64, signed)      Datum.I64
//	FLOAT, DOUBLE      FloatingPoint(SINGLE|DOUBLE) Datum.F64
//	DECIMAL(p,s)       Decimal(p, s, 128)           16-byte LE two's complement unscaled value
//	CHAR(n), STRING    Utf8 (int32 offsets)         UTF-8 bytes, CHAR not padded
//	BINARY(n)          FixedSizeBinary(n)           exactly n bytes
//	BYTES              Binary (int32 offsets)
//	DATE               Date(DAY)                    days since epoch
//	TIME(p)            p=0 Time32(s), 1-3 Time32(ms), 4-6 Time64(us), 7-9 Time64(ns): ms of day /1000, x1, x1000, x10^6
//	TIMESTAMP(p),      p=0 Timestamp(s), 1-3 (ms), 4-6 (us), 7-9 (ns), no zone:
//	TIMESTAMP_LTZ(p)     ms/1000 (truncating, as Java), ms, ms*1000+nanos/1000, ms*10^6+nanos
//	ARRAY<T>           List, child "element"
//	MAP<K,V>           Map(keysSorted=false) -> "entries" Struct (not null) -> "key" (not null), "value"
//	ROW<...>           Struct
//
// Field nullability follows the Fluss types; it is not on the wire.
//
// # Compression (`table.log.arrow.compression.type`)
//
// NONE, LZ4_FRAME or ZSTD (the default); 0.9.1 has no other codec. The
// message's BodyCompression must name the table's codec: the server
// re-serialises projected batches with the table's codec
// (FileLogProjection). Each non-empty buffer is an int64 LE uncompressed
// length followed by one LZ4 frame or one zstd frame; -1 means the raw buffer
// follows (used when compressing would not shrink it, as Arrow Java does);
// an empty buffer stays 0 bytes, which Arrow Java's VectorLoader never
// decompresses.
//
// `table.log.arrow.compression.zstd.level` (default 3, 1..22) is validated
// but arrow-go offers no way to set a zstd level: it always uses
// klauspost/compress's SpeedDefault, its equivalent of zstd level 3, the
// Fluss default. The level changes only speed and ratio, never the format.
//
// # Where the bytes differ from the Java client's
//
// All of these are within the Arrow format and read identically by Arrow
// Java 15 and by Fluss's projection; the tests pin them:
//
//   - arrow-go writes a 0-length validity buffer for a field without nulls;
//     Java writes ceil(n/8) bytes of ones. VectorLoader and
//     BitVectorHelper.loadValidityBuffer accept both.
//   - With compression, Java writes an 8-byte zero length for an empty
//     buffer; arrow-go writes nothing. VectorLoader skips 0-byte buffers.
//   - Validity bitmaps may be reported longer than ceil(n/8) (arrow-go
//     sends its builder's bitmap, at most 64-byte padded; the extra bytes are
//     zero).
//   - The flatbuffer metadata lays out its fields in another order than
//     Java's FlatBufferBuilder calls do.
//   - Compressed bytes differ (klauspost zstd and pierrec lz4 against
//     zstd-jni and lz4-java); a buffer whose compressed form is exactly as
//     large as the raw one is stored raw here and compressed by Java.
package arrowlog
