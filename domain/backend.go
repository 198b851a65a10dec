package domain

import "time"

// BackendOutcome is the outcome of one PutKv or ProduceLog request to a
// tablet server, as the Fluss adapter's writer reports it to its request
// tracer (the telemetry adapter ends the backend span with it).
type BackendOutcome struct {
	// ErrorCode is the request-level Fluss error code (0: answered, or not
	// a Fluss error).
	ErrorCode int32
	// FailedBuckets counts the buckets answered with an error code.
	FailedBuckets int
	// Err is the call's error (nil when answered).
	Err error
	// Pressure is the highest per-bucket backpressure signal of the answer:
	// the PutKv `pressure` field, 1 for a code 72; 0 for none.
	Pressure float64
	// Throttle is the longest bucket throttle the answer caused.
	Throttle time.Duration
}
