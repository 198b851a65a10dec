package domain

import (
	"context"
	"time"
)

// WriteOp is the operation of one write entry.
type WriteOp uint8

// Write operations: upsert and delete on primary-key tables, append on log tables.
const (
	OpUpsert WriteOp = iota + 1
	OpDelete
	OpAppend
)

// Applied states what the gateway knows about an entry that did not succeed.
type Applied string

// Applied values: "no" means the row was never sent or was rejected and can
// never land later; "unknown" means it was inside a request already sent when
// the outcome became unknowable (timeout, connection loss).
const (
	AppliedNo      Applied = "no"
	AppliedUnknown Applied = "unknown"
)

// EntryKind is the official error code (one of ErrorCodes) that a failed
// write entry counts as: what clients see as the entry's `error_code`.
type EntryKind string

// EntryResult is the verdict for one write entry: Kind (official) and Code
// (the finer reason) together. A zero Code means success.
type EntryResult struct {
	// Code is the finer snake_case reason of a failure in the vocabulary of
	// the adapter that gave it (for the Fluss adapter, e.g.
	// not_enough_replicas); "" on success. Logs and metrics count by it.
	Code string
	// Kind is the official code the failure counts as. The adapter that
	// gives the verdict sets it, mapping its own reasons once; it may stay
	// empty when Code is itself an official code (see Official).
	Kind      EntryKind
	Message   string
	Retryable bool
	Applied   Applied
	// RetryAfter, when > 0, is how long the writer expects the row's bucket
	// to stay throttled by storage backpressure (Fluss 1.0): a retry sooner
	// would wait for the same throttle. Set with Code storage_backpressure.
	RetryAfter time.Duration
	// At is where a successful entry landed, when the writer knows it
	// (At.Known); the zero value for failures and for successes that wrote
	// nothing (a delete in a partition that does not exist).
	At WrittenAt
}

// WrittenAt is where a written row landed in its bucket's log, from the
// answer of the request that carried it (apache/fluss fluss-rpc
// FlussApi.proto, 0.9.1 and 1.0: PbProduceLogRespForBucket.base_offset,
// PbPutKvRespForBucket.log_end_offset).
type WrittenAt struct {
	// Known is false when the answer gave no offset.
	Known bool
	// Partition is the partition name ("" for a non-partitioned table).
	Partition string
	Bucket    int32
	// Offset is, for a log table (Exact), the row's own offset: the batch's
	// base offset plus the row's index in the batch. For a primary-key
	// table it is the changelog's end offset after the batch that carried
	// the row (the offset the next change gets): Fluss does not say which
	// changelog records a row made (an upsert makes one or two, a delete of
	// a missing key none), only that they lie below this offset.
	Offset int64
	// Exact is true when Offset is the row's own record (log tables).
	Exact bool
}

// OK reports whether the entry succeeded.
func (r EntryResult) OK() bool { return r.Code == "" }

// Official returns the official code of a failed entry: Kind when set;
// else Code when it is official itself; else `unavailable` for a retryable
// failure and `backend` for any other. It is "" for a success.
func (r EntryResult) Official() EntryKind {
	switch {
	case r.OK():
		return ""
	case r.Kind != "":
		return r.Kind
	case IsErrorCode(r.Code):
		return EntryKind(r.Code)
	case r.Retryable:
		return EntryUnavailable
	default:
		return EntryBackend
	}
}

// RowWriter is the port that writes rows into one table. Its request and row
// types are defined together with the write path (see write_rows.go).
type RowWriter interface {
	// Write submits a batch of already-validated rows and blocks until every
	// row has a verdict or ctx ends; results are in input order.
	Write(ctx context.Context, req *WriteBatch) ([]EntryResult, error)
}

// ResultRun is the verdict of Rows consecutive entries: the run-length form
// of []EntryResult that ColumnarRunWriter answers. When Result.At is Known
// and Exact (a log table), it is the run's first row's position and row k
// of the run is at offset Result.At.Offset+k of the same bucket; otherwise
// every row of the run has Result as it is.
type ResultRun struct {
	Rows   int
	Result EntryResult
}

// ColumnarRunWriter is implemented by row writers that can answer a batch
// of columnar rows (WriteBatch.Columns) run by run: the runs cover the
// batch's rows in order (their Rows add up to WriteBatch.Len()). A
// 10,000-row Arrow record batch then has a verdict per batch the writer
// cut it into, not 10,000 of them (1.2 MB written and read again by every
// layer). Otherwise as RowWriter.Write.
type ColumnarRunWriter interface {
	WriteColumnRuns(ctx context.Context, req *WriteBatch) ([]ResultRun, error)
}

// RunRows returns the entries runs stand for.
func RunRows(runs []ResultRun) int {
	n := 0
	for _, r := range runs {
		n += r.Rows
	}
	return n
}

// ExpandRuns appends one verdict per entry of runs to dst, each row at its
// own offset when its run's At is exact (see ResultRun).
func ExpandRuns(dst []EntryResult, runs []ResultRun) []EntryResult {
	for _, run := range runs {
		res := run.Result
		for range run.Rows {
			dst = append(dst, res)
			if res.At.Known && res.At.Exact {
				res.At.Offset++
			}
		}
	}
	return dst
}

// Lookup is the port for primary-key and prefix lookups on one table.
type Lookup interface {
	Lookup(ctx context.Context, req *LookupRequest) (*LookupResponse, error)
	PrefixLookup(ctx context.Context, req *PrefixLookupRequest) (*PrefixLookupResponse, error)
}

// WriteTimeline records where one Write call's time went inside a RowWriter,
// for the Server-Timing answer header and the benchmark (tools/load -mode
// bench). A caller that wants it puts one in the context with
// WithWriteTimeline; the writer fills it before Write returns and never
// touches it afterwards. Durations are wall-clock; a phase the call never
// reached stays 0. For a call whose rows went into several batches, each
// phase is that of the batch that finished last.
type WriteTimeline struct {
	// Encode: from Write's start to its rows being queued (row encoding,
	// partition look-ups, buffer reservation).
	Encode time.Duration
	// Queue: from the rows being queued to the last of them being taken
	// into a batch (batch fill, linger, waiting for an in-flight slot).
	Queue time.Duration
	// Slot: the part of Queue the bucket's rows were ready but all of its
	// in-flight slots were taken.
	Slot time.Duration
	// Build: from the batch being taken to its request being handed to the
	// connection (batch bytes, Arrow, compression, grouping).
	Build time.Duration
	// Backend: the Fluss round trip (PutKv / ProduceLog) of that batch's last
	// attempt, from the call to its answer.
	Backend time.Duration
	// Resolve: from that answer to Write returning.
	Resolve time.Duration
	// Batches is the number of batches the call's rows went into; Attempts
	// counts the sends of the last one (more than 1 when it was retried).
	Batches, Attempts int
	// BatchRows is the rows of the last batch (of all the calls it carried),
	// InFlight the batches of its bucket in flight when it was sent, itself
	// included.
	BatchRows, InFlight int
}

type writeTimelineKey struct{}

// WithWriteTimeline returns a context whose writes fill tl.
func WithWriteTimeline(ctx context.Context, tl *WriteTimeline) context.Context {
	return context.WithValue(ctx, writeTimelineKey{}, tl)
}

// WriteTimelineFrom returns the timeline ctx carries, or nil.
func WriteTimelineFrom(ctx context.Context) *WriteTimeline {
	tl, _ := ctx.Value(writeTimelineKey{}).(*WriteTimeline)
	return tl
}
