// Package scan implements domain.LogScanner: stateless reads of a table's log
// (the changelog of a primary-key table) with the Fluss RPCs ListOffsets
// (1021) and FetchLog (1015), both sent to the bucket leaders.
//
// Sources (apache/fluss, fluss-rpc/src/main/proto/FlussApi.proto;
// fluss-client/.../table/scanner/log/{LogFetcher,CompletedFetch,
// LogScannerImpl}.java; fluss-client/.../admin/ListOffsetsParam, OffsetSpec;
// fluss-common/.../record/{DefaultLogRecordBatch,LogRecordReadContext,
// ChangeType}.java; the Rust client's scanner in apache/fluss-rust,
// crates/fluss/src/client/table/scanner.rs) — read, not copied.
//
// # What a fetch does
//
// The positions of one request are grouped by bucket leader: one FetchLog
// per tablet server, all buckets of the table (of any partition) in it,
// projection pushed down (projection_pushdown_enabled with the projected
// column positions in ascending order, as the Java client's
// Projection.getProjectionInOrder sends them; rows are reordered here). Each
// bucket answers zero or more log batches starting at or before its fetch
// offset; records below the fetch offset are skipped (a batch is returned
// whole), as CompletedFetch does. With FetchLogRequest.MaxWait, each request
// asks the server to hold it until a first byte (min_bytes 1, max_wait_ms);
// the first answer with records cancels the others, whose buckets then
// answer nothing (their positions stay). The gateway's long poll does not use
// it (application.ScanService polls instead): a Fluss tablet server handles a
// connection's requests in order, so a parked fetch would hold up every write
// and lookup sharing the connection (measured on 0.9.1).
//
// Batches are decoded by format (`table.log.format`): ARROW (the default)
// with record/arrowlog (change-type vector first when the batch is not
// append-only), INDEXED and COMPACTED with the row decoders of package
// record (projection then applied here: Fluss pushes projection down for
// ARROW only). A batch written under an older schema id is decoded with
// that schema and mapped onto the current columns by column id (absent
// columns are null) when nothing is projected; with a projection, the server
// projects by position, so batches of another schema are refused with a
// clear error.
//
// A fetch that takes many records (a thousand or more) decodes its batches
// on up to GOMAXPROCS goroutines first, those the in-order pass will use as
// predicted from the batch headers, and the in-order pass then builds the
// answer from them exactly as it would have decoding them itself
// (predecode.go).
//
// Nothing is kept between calls but the metadata cache (tables, partitions,
// leaders) shared with the other ports.
package scan
