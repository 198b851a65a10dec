// Package record holds the pure byte codecs that the gateway needs to talk to
// an Apache Fluss 0.9.1 cluster: no networking, no goroutines, no global state.
//
// What lives here, with the Fluss source each format follows (paths relative
// to apache/fluss fluss-common/src/main/java/org/apache/fluss at tag
// v0.9.1-incubating):
//
//   - CRC-32C, little-endian and unsigned-varint helpers
//     (utils/crc/Crc32C.java, utils/VarLengthUtils.java, memory/MemorySegment.java).
//   - CompactedRow writer and reader for every Fluss type, including the
//     BinaryArray/BinaryMap layout used for nested ARRAY and MAP values
//     (row/compacted/CompactedRowWriter.java, CompactedRowReader.java,
//     row/BinaryArrayWriter.java, row/AbstractBinaryWriter.java, row/BinaryMap.java).
//   - IndexedRow writer and reader (row/indexed/IndexedRowWriter.java, IndexedRow.java).
//   - Key encoders: CompactedKeyEncoder and the Paimon and Iceberg lake key
//     encoders, chosen as KeyEncoder.ofPrimaryKeyEncoder/ofBucketKeyEncoder do
//     (row/encode/*.java).
//   - Bucketing functions: Fluss (default and lance), Paimon, Iceberg
//     (bucketing/*.java, utils/MurmurHashUtils.java, utils/MathUtils.java).
//   - Partition names (utils/PartitionUtils.java, utils/PartitionNameConverters.java).
//   - KV record batches (record/KvRecordBatchBuilder.java, DefaultKvRecordBatch.java,
//     DefaultKvRecord.java) and lookup values (row/encode/ValueEncoder.java).
//   - Log record batch headers, magic V0 (written) and V0/V1 (read), and
//     row-based INDEXED/COMPACTED log records (record/LogRecordBatchFormat.java,
//     MemoryLogRecordsRowBuilder.java, IndexedLogRecord.java). The ARROW
//     records area is produced elsewhere and plugged in through
//     BeginLogBatch/FinishLogBatch or AppendLogBatch.
//
// Values are exchanged as domain.Datum, interpreted through the column's
// domain.DataType exactly as domain/write_rows.go documents.
//
// Every multi-byte integer Fluss writes is little-endian. Encoders are built
// once per schema, are immutable and safe for concurrent use, and append into a
// caller-owned []byte without allocating in steady state. Decoders never panic
// on malformed input; they return an error wrapping ErrCorrupt, and the byte
// slices of the Datums they return alias the input.
package record
