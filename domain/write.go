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
		return "unavailable"
	default:
		return "backend"
	}
}

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
