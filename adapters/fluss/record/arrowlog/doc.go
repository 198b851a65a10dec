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
// Rows go into arrow-go array builders; the message is then assembled by
// this package exactly as Arrow Java 15 does it inside Fluss's ArrowWriter
// (VectorUnloader, AbstractCompressionCodec, MessageSerializer; see
// serializer.go), not by arrow-go's IPC writer, whose output is valid Arrow
// but differs from Java's (no validity bitmap without nulls, no 8-byte
// prefix for empty compressed buffers, another flatbuffer field order) and
// whose zstd path is a concurrent streaming encoder without a level setting
// that is very slow for many small buffers. (arrow-go can emit a lone
// RecordBatch through ipc.NewWriterWithPayloadWriter by dropping the Schema
// payload, or ipc.GetRecordBatchPayload; the Rust client strips the schema
// prefix of an arrow-rs StreamWriter.)
//
// Verified against the real thing: testdata/java/ArrowGold.java runs the
// Fluss 0.9.1 Java writer (fluss-common 0.9.1-incubating jars) on three data
// sets covering every type; for NONE and LZ4_FRAME this package produces the
// same bytes, for ZSTD the same message except the zstd frames, and the
// Java reader decodes every batch built here (TestMatchesJavaBytes,
// TestJavaReadsOurBatches with ARROWLOG_JAVA=1).
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
// follows (when the frame would be larger than the raw bytes, as Arrow Java
// decides); an empty buffer is written as an 8-byte zero length, as Java
// does. Validity bitmaps are always sent (ceil(n/8) bytes, all ones without
// nulls), as Java does.
//
// `table.log.arrow.compression.zstd.level` (default 3, 1..22) picks the
// klauspost/compress encoder level (EncoderLevelFromZstd: below 3 fastest,
// 3..5 default, 6..9 better, 10 and up best); frames carry no checksum, as
// zstd-jni writes them. LZ4 frames are laid out as Fluss's
// FlussLZ4BlockOutputStream writes them (FLG 0x60, BD 0x40: independent
// 64 KB blocks, no checksums), the blocks compressed with the reference
// LZ4_compress_fast algorithm (pierrec/lz4 CompressorCCompat), as lz4-java does.
//
// # Where the bytes differ from the Java client's
//
// Only in ZSTD frames: klauspost/compress and zstd-jni (libzstd) produce
// different compressed bytes, so compressed buffer lengths, the layout
// offsets, and whether a small buffer ends up stored raw (-1) can differ.
// Everything else (header, field nodes, buffer count and contents, framing
// rules) is the same, and both decode to identical buffers.
package arrowlog
