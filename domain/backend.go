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

// MaxWaitBuckets bounds the bucket ids WaitOutcome lists.
const MaxWaitBuckets = 16

// WaitOutcome is the outcome of one write call's wait for the delivery of
// its rows, as the Fluss adapter's writer reports it to its tracer (the
// telemetry adapter ends the request's fluss.write.wait span with it).
type WaitOutcome struct {
	// Buckets are the distinct bucket ids the call's rows went to (at most
	// MaxWaitBuckets); BucketCount counts them all.
	Buckets     []int32
	BucketCount int
	// OK, Failed and Unknown count the call's verdicts (applied yes, no,
	// unknown).
	OK, Failed, Unknown int
	// Expired tells that the call's deadline passed before every verdict.
	Expired bool
}

// AddBucket notes one bucket of the call.
func (o *WaitOutcome) AddBucket(b int32) {
	for _, x := range o.Buckets {
		if x == b {
			return
		}
	}
	o.BucketCount++
	if len(o.Buckets) < MaxWaitBuckets {
		o.Buckets = append(o.Buckets, b)
	}
}
