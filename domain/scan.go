package domain

import (
	"context"
	"time"
)

// NoPartitionID is the partition id of a bucket of a non-partitioned table
// (Fluss sends no partition_id for it).
const NoPartitionID int64 = -1

// OffsetPosition picks where ListOffsets looks in each bucket's log
// (apache/fluss: fluss-rpc FlussApi.proto ListOffsetsRequest.offset_type).
type OffsetPosition uint8

// Offset positions, with the Fluss offset_type they send.
const (
	// OffsetEarliest is the log start offset (offset_type 0).
	OffsetEarliest OffsetPosition = iota
	// OffsetLatest is the high watermark: the offset the next record gets
	// (offset_type 1).
	OffsetLatest
	// OffsetTimestamp is the first record whose commit timestamp is at or
	// after the given time, or the high watermark when there is none
	// (offset_type 2).
	OffsetTimestamp
)

// LogBucket names one bucket of a table's log: a bucket of the table, or of
// one of its partitions.
type LogBucket struct {
	// PartitionID is NoPartitionID for a non-partitioned table.
	PartitionID int64
	// Partition is the partition name ("" for a non-partitioned table).
	Partition string
	Bucket    int32
}

// BucketOffset is an offset in one bucket's log.
type BucketOffset struct {
	LogBucket
	Offset int64
}

// LogBucketsRequest asks for the buckets of a table's log.
type LogBucketsRequest struct {
	Table   TablePath
	TableID int64 // the id the request was validated against; 0: any
	// Partitions are partition names (nil: every partition that exists now
	// of a partitioned table; must be empty for a non-partitioned one).
	Partitions []string
	// Buckets restricts the buckets (nil: all).
	Buckets []int32
}

// ListOffsetsRequest asks for one offset per bucket.
type ListOffsetsRequest struct {
	Table    TablePath
	TableID  int64 // the id the request was validated against; 0: any
	Buckets  []LogBucket
	Position OffsetPosition
	// Timestamp is the time for OffsetTimestamp, in milliseconds since the epoch.
	Timestamp int64
}

// ListOffsetsResponse holds one offset per requested bucket, in order.
type ListOffsetsResponse struct {
	TableID int64
	Offsets []BucketOffset
}

// FetchLogRequest reads records from the given position of each bucket.
type FetchLogRequest struct {
	Table   TablePath
	TableID int64 // the id the request was validated against; 0: any
	// Columns are the positions of the columns to read (projection, pushed
	// to the tablet servers), in any order; nil: all. Rows then hold the
	// columns in this order.
	Columns []int
	// Positions are the fetch offsets, one per bucket.
	Positions []BucketOffset
	// MaxBytes bounds the record bytes the tablet servers return in all.
	MaxBytes int
	// MaxRecords bounds the records returned in all (0: no bound); buckets
	// past the bound return none and keep their position.
	MaxRecords int
	// MaxWait is how long a tablet server may wait for a first record
	// (long poll); 0 answers at once.
	MaxWait time.Duration
}

// LogRecord is one record of a table's log or of a primary-key table's
// changelog.
type LogRecord struct {
	Offset int64
	// Timestamp is the batch's commit timestamp, in milliseconds since the epoch.
	Timestamp int64
	// ChangeType is Fluss's ChangeType short string: "+A" (append-only log
	// tables), "+I", "-U", "+U", "-D" (changelog of primary-key tables).
	ChangeType string
	// Row holds the requested columns (FetchLogRequest.Columns) in order.
	Row []Datum
}

// FetchedBucket is the answer for one bucket.
type FetchedBucket struct {
	LogBucket
	// FetchOffset is the offset the bucket was read from.
	FetchOffset int64
	// Records have offsets >= FetchOffset, in offset order.
	Records []LogRecord
	// NextOffset is the offset after the last record read (FetchOffset when
	// none).
	NextOffset int64
	// HighWatermark and LogStartOffset as the leader reported them (-1: unknown).
	HighWatermark  int64
	LogStartOffset int64
	// OutOfRange is true when FetchOffset is below the log start offset or
	// above the high watermark (Fluss error 19, LOG_OFFSET_OUT_OF_RANGE).
	OutOfRange bool
	// Err is the bucket's own error (OutOfRange, the leader moved, ...); no
	// records then.
	Err *Error
}

// FetchLogResponse holds one FetchedBucket per requested position, in the
// request's order.
type FetchLogResponse struct {
	TableID int64
	// SchemaID is the schema the rows were decoded into (the table's
	// current schema as the scanner knows it; 0: unknown).
	SchemaID int32
	Buckets  []FetchedBucket
}

// LogScanner is the port for reading the log of a table (the changelog of a
// primary-key table), statelessly: every call names its positions.
type LogScanner interface {
	// Buckets lists the buckets of a table's log, ordered by partition name,
	// then bucket; an unknown partition is partition_not_found, a bucket
	// outside the table invalid_argument.
	Buckets(ctx context.Context, req *LogBucketsRequest) ([]LogBucket, error)
	// ListOffsets returns one offset per requested bucket.
	ListOffsets(ctx context.Context, req *ListOffsetsRequest) (*ListOffsetsResponse, error)
	// Fetch reads records from each position; a bucket's failure is its
	// FetchedBucket.Err, a failure of the whole request the error.
	Fetch(ctx context.Context, req *FetchLogRequest) (*FetchLogResponse, error)
}

// ScanSession is implemented by sessions that can read logs.
type ScanSession interface {
	LogScanner() LogScanner
}
