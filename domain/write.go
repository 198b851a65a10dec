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

// EntryResult is the verdict for one write entry. A zero Code means success.
type EntryResult struct {
	Code      string // snake_case entry error code, "" on success
	Message   string
	Retryable bool
	Applied   Applied
	// RetryAfter, when > 0, is how long the writer expects the row's bucket
	// to stay throttled by storage backpressure (Fluss 1.0): a retry sooner
	// would wait for the same throttle. Set with Code storage_backpressure.
	RetryAfter time.Duration
}

// OK reports whether the entry succeeded.
func (r EntryResult) OK() bool { return r.Code == "" }

// RowWriter is the port that writes rows into one table. Its request and row
// types are defined together with the write path (see write_rows.go).
type RowWriter interface {
	// Write submits a batch of already-validated rows and blocks until every
	// row has a verdict or ctx ends; results are in input order.
	Write(ctx context.Context, req *WriteBatch) ([]EntryResult, error)
}

// Lookup is the port for primary-key and prefix lookups on one table.
type Lookup interface {
	Lookup(ctx context.Context, req *LookupRequest) (*LookupResponse, error)
	PrefixLookup(ctx context.Context, req *PrefixLookupRequest) (*PrefixLookupResponse, error)
}
