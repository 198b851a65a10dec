// Package writer implements domain.RowWriter for one Fluss cluster
// connection: the client write path of the Java client (RecordAccumulator,
// Sender, IdempotenceManager) rebuilt around per-request deadlines and a
// verdict per row.
//
// Write encodes every entry of a request (primary key, bucket key and value
// row, or the row of a log append) into one arena owned by the request,
// reserves that many bytes of the shared buffer, and appends one record per
// entry to the queue of its bucket. A single sender goroutine per Writer
// drains ready buckets (full batch, linger elapsed, retry due) into batches
// — the KV or log batch bytes are built only then, outside the writer's
// lock, so that a request reaching its deadline never waits for a batch
// build (see takeLocked) — and sends one PutKv or
// ProduceLog request per (tablet server, table) carrying one batch per
// bucket. Each record resolves its own entry when its batch completes.
//
// Key-less log rows (log tables without a bucket key) go to a sticky bucket
// per table or partition, which changes whenever a row would start a new
// batch in it: the sender took its open batch, or the batch is full or of
// another schema (the Java client's StickyBucketAssigner#onNewBatch). The
// next bucket is drawn at random among the other buckets with a known
// leader; a full batch left behind is sent without waiting for linger (see
// stickyLocked).
//
// Deadlines: when the request's context ends, records still queued are
// removed (verdict `timeout`, applied "no"; they can never be sent later),
// records in a batch already sent are `timeout` with applied "unknown".
// Batches are immutable once built: a retry resends the same records with
// the same writer id and batch sequence; only the idempotence bookkeeping
// (docs/fluss-writer.md#idempotence: a fatal failure of an earlier batch of the same bucket) re-stamps the
// header of later, not yet accepted batches, as the Java client does.
package writer
