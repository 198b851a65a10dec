package writer

import (
	"context"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/defaults"
)

// Defaults of Options, following the Java client's `client.writer.*` options
// except Linger (see Options.Linger).
const (
	DefaultBatchSize            = 2 << 20 // client.writer.batch-size
	DefaultLinger               = 10 * time.Millisecond
	DefaultKvLinger             = 100 * time.Millisecond // client.writer.batch-timeout
	DefaultBufferMemory         = 64 << 20               // client.writer.buffer.memory-size
	DefaultMaxRequestSize       = 10 << 20               // client.writer.request-max-size
	DefaultMaxInFlightPerBucket = 5                      // client.writer.max-inflight-requests-per-bucket
	DefaultRequestTimeout       = 30 * time.Second
	DefaultRetryBackoff         = 50 * time.Millisecond
	DefaultRetryBackoffMax      = 1 * time.Second
	DefaultMaxThrottle          = 3 * time.Second // client.writer.kv-backpressure.max-throttle
	DefaultOrphanTimeout        = 2 * time.Minute
	DefaultLingerAfterInFlight  = 1
	DefaultLanes                = 2
	// AcksAll is acks = "all" (-1), required for idempotence.
	AcksAll = -1
)

// Options configure a Writer. The zero value takes every default.
type Options struct {
	// BatchSize is the target size of one bucket's batch in bytes; a bucket
	// whose queued records reach it is sent without waiting for Linger.
	BatchSize int
	// Linger is how long a non-full batch waits for more records (Java:
	// client.writer.batch-timeout, 100 ms) — but only in a bucket that has
	// LingerAfterInFlight batches or more in flight. The gateway default is
	// 10 ms: every HTTP request blocks on its rows' verdicts, so linger adds
	// directly to request latency, and a request of many rows fills its
	// batches by itself; 10 ms still lets concurrent small requests to the
	// same bucket share a batch and a PutKv.
	Linger time.Duration
	// LingerAfterInFlight: the queued rows of a bucket with fewer batches in
	// flight than this are sent at once, without waiting for Linger (default
	// 1: a bucket with nothing in flight sends at once; rows that arrive
	// while a batch is in flight gather until it is answered or Linger
	// passes). A Write queues all its rows at once, so lingering in an idle
	// bucket only delays them while the tablet server has nothing to do.
	// Negative: always wait for Linger (the Java client's rule).
	LingerAfterInFlight int
	// KvLinger replaces Linger for the PutKv rows of a bucket that has a
	// batch in flight (default 100 ms, the Java client's batch-timeout): they
	// wait for that batch's answer (its completion wakes the sender), up to
	// KvLinger, and then go as one batch. A tablet server pays much per PutKv
	// batch (a KV write batch and a changelog batch), and a bucket's requests
	// on one connection are handled in order anyway, so a second batch sent
	// early only waits on the server, smaller. Measured on the benchmark
	// (500 × 16, 4 buckets): 10 ms instead gave batches half as big, 3 to 4
	// in flight per bucket and up to twice the tablet server's CPU per row.
	// Log rows keep Linger: a ProduceLog batch is cheap for the server and
	// pipelining them was faster.
	KvLinger time.Duration
	// Lanes is the number of connections to each tablet server the writer's
	// PutKv and ProduceLog requests are spread over, by bucket (default 2,
	// apart from the connection metadata and lookups use; each bucket
	// always uses the same lane, so its batches keep their order). A Fluss
	// tablet server handles the requests of one connection one after the
	// other on one worker thread, so one connection caps the writes to a
	// server at one thread's pace (the Java client's case: PK upserts at
	// 500 × 16 stopped at ~125,000 rows/s, the tablet server's thread
	// busy); two lanes let it use two threads: on the quiet 2-core benchmark
	// machine PK rows/s rose 15-30 % (144,000-162,000), log appends did not
	// fall (docs/performance.md, session 6). More lanes make requests
	// smaller: on 2 cores 4 lanes cost the tablet server up to twice the
	// CPU per row and the gateway ~30 % more, for no more rows/s.
	Lanes int
	// BufferMemory bounds the encoded record bytes (plus a small per-row
	// overhead) of all requests in flight: a request reserves room for all
	// its rows before any is queued and gives it back when every row has a
	// verdict. A request that cannot reserve it before its deadline fails
	// its rows with `resource_exhausted` (applied "no", retryable; not
	// retryable when the request alone is larger than the buffer). Batch
	// bytes are a second copy made at drain time, bounded by the batches in
	// flight (at most MaxInFlightPerBucket per bucket); they are not counted.
	BufferMemory int64
	// MaxRequestSize bounds one PutKv/ProduceLog request; a single batch
	// larger than it is still sent alone.
	MaxRequestSize int
	// MaxInFlightPerBucket bounds the batches of one bucket sent and not
	// yet completed (at most 5 with idempotence, as the server remembers
	// the last 5 batches of each writer).
	MaxInFlightPerBucket int
	// RequestTimeout bounds one send and is sent as timeout_ms.
	RequestTimeout time.Duration
	// Acks is sent in every request (default AcksAll; idempotence needs it).
	Acks int
	// RetryBackoff and RetryBackoffMax shape the exponential backoff
	// (with jitter) before a retriable failure is retried; retries go on
	// while some entry of the batch still waits for its verdict.
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
	// MaxThrottle bounds the cooperative KV backpressure throttle (Fluss 1.0,
	// apache/fluss PR #3463; Java client.writer.kv-backpressure.max-throttle):
	// a PutKv answer whose bucket carries pressure p in (0, 1) blocks the
	// bucket for MaxThrottle × p², a STORAGE_BACKPRESSURE rejection (code 72)
	// for MaxThrottle. Rows whose request deadline ends before the throttle
	// do not wait for it: they fail at once with `storage_backpressure`,
	// applied "no", and EntryResult.RetryAfter set to the throttle's end.
	MaxThrottle time.Duration
	// OrphanTimeout: a batch whose entries have all timed out keeps being
	// retried (to keep the bucket's sequence intact) for at most this long;
	// then it is dropped and the writer id is reset.
	OrphanTimeout time.Duration
	// DisableIdempotence sends batches with writer id -1 and no sequence.
	DisableIdempotence bool
	// DisableDynamicPartitions stops the writer from creating missing
	// partitions (client.writer.dynamic-create-partition.enabled = false);
	// rows for them fail with `partition_not_found`.
	DisableDynamicPartitions bool
	// Arrow builds the records of ARROW log batches (DefaultArrow when nil).
	Arrow ArrowFactory
	// Metrics receives counters; nil means none.
	Metrics Metrics
	// Pressure is told of every backpressure signal; nil means none.
	Pressure PressureObserver
	// Tracer wraps every PutKv and ProduceLog; nil means none.
	Tracer RequestTracer
	// Now returns the current time (time.Now); tests replace it.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	o.BatchSize = defaults.Positive(o.BatchSize, DefaultBatchSize)
	if o.Linger < 0 {
		o.Linger = 0
	} else if o.Linger == 0 {
		o.Linger = DefaultLinger
	}
	o.BufferMemory = defaults.Positive(o.BufferMemory, DefaultBufferMemory)
	o.MaxRequestSize = defaults.Positive(o.MaxRequestSize, DefaultMaxRequestSize)
	if o.KvLinger < 0 {
		o.KvLinger = 0
	} else if o.KvLinger == 0 {
		o.KvLinger = DefaultKvLinger
	}
	if o.LingerAfterInFlight == 0 {
		o.LingerAfterInFlight = DefaultLingerAfterInFlight
	}
	o.Lanes = defaults.Positive(o.Lanes, DefaultLanes)
	o.MaxInFlightPerBucket = defaults.Positive(o.MaxInFlightPerBucket, DefaultMaxInFlightPerBucket)
	if !o.DisableIdempotence && o.MaxInFlightPerBucket > 5 {
		o.MaxInFlightPerBucket = 5
	}
	o.RequestTimeout = defaults.Positive(o.RequestTimeout, DefaultRequestTimeout)
	if o.Acks == 0 {
		o.Acks = AcksAll
	}
	o.RetryBackoff = defaults.Positive(o.RetryBackoff, DefaultRetryBackoff)
	o.RetryBackoffMax = defaults.Positive(o.RetryBackoffMax, DefaultRetryBackoffMax)
	o.MaxThrottle = defaults.Positive(o.MaxThrottle, DefaultMaxThrottle)
	o.OrphanTimeout = defaults.Positive(o.OrphanTimeout, DefaultOrphanTimeout)
	if o.Arrow == nil {
		o.Arrow = DefaultArrow
	}
	if o.Metrics == nil {
		o.Metrics = nopMetrics{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// The writer's hooks are the Options fields Metrics, Pressure and Tracer, one
// interface each, implemented by the telemetry adapter
// (adapters/telemetry.WriterHooks implements all three). Their signatures use
// standard and domain types only: this package imports no telemetry library.

// Metrics receives the writer's counters. Calls are made with internal locks
// released or from the sender goroutine and must not block.
type Metrics interface {
	// BatchesSent counts one request sent: its batches, rows and bytes.
	BatchesSent(table domain.TablePath, batches, rows, bytes int)
	// Retried counts batches re-queued after a retriable failure, with the
	// snake_case code of the failure.
	Retried(table domain.TablePath, batches int, code string)
	// EntriesDone counts verdicts: successes and failures by code.
	EntriesDone(table domain.TablePath, ok int, failed map[string]int)
	// BufferUsage reports the reserved buffer bytes after a change.
	BufferUsage(used, capacity int64)
}

// PressureObserver (Options.Pressure) is told of every cooperative
// backpressure signal of a bucket: the pressure of a PutKv answer in (0, 1),
// or 1 for a STORAGE_BACKPRESSURE rejection (code 72), and the throttle the
// writer applied for it (MaxThrottle × pressure², MaxThrottle for 1). It is
// called with the writer's lock held and must not block.
type PressureObserver interface {
	KvPressure(table domain.TablePath, bucket int32, pressure float64, throttle time.Duration)
}

// RequestTracer (Options.Tracer) wraps every PutKv and ProduceLog the sender
// issues. links are the contexts of the Write calls whose rows the request
// carries (at most 128, each once), so a tracer can link the backend span to
// the HTTP requests' spans. The returned context is used for the call; the
// returned function is called once with the outcome.
type RequestTracer interface {
	StartBackendRequest(ctx context.Context, api string, nodeID int32, buckets, rows int,
		links []context.Context) (context.Context, func(BackendOutcome))
}

// WaitTracer is an optional extension of RequestTracer: a tracer that
// implements it gets one span per Write call covering the call's wait for
// its rows' delivery (from enqueueing to the last verdict). StartWait returns
// the context the writer then hands to StartBackendRequest as the call's
// link (so the tracer can tie the wait to every request that carries its
// rows, and count attempts); the returned function is called once, when the
// call's rows all have verdicts or its deadline passed, with the call's
// buckets (at most domain.MaxWaitBuckets listed) and outcome.
type WaitTracer interface {
	StartWait(ctx context.Context, table domain.TablePath, rows int) (context.Context, func(WaitOutcome))
}

// WaitOutcome is the outcome of one Write call's wait (domain.WaitOutcome).
type WaitOutcome = domain.WaitOutcome

// BackendOutcome is the outcome of one request to a tablet server, as the
// RequestTracer hook receives it (domain.BackendOutcome).
type BackendOutcome = domain.BackendOutcome

type nopMetrics struct{}

func (nopMetrics) BatchesSent(domain.TablePath, int, int, int)       {}
func (nopMetrics) Retried(domain.TablePath, int, string)             {}
func (nopMetrics) EntriesDone(domain.TablePath, int, map[string]int) {}
func (nopMetrics) BufferUsage(int64, int64)                          {}

// ArrowFactory returns a builder of Arrow IPC RecordBatch messages for rows of
// the given column types, compressed with the table's codec
// (`table.log.arrow.compression.type`: NONE, LZ4_FRAME or ZSTD, and its level).
type ArrowFactory func(types []domain.DataType, compression string, zstdLevel int) (ArrowBuilder, error)

// ArrowBuilder accumulates rows and appends the records area of an ARROW log
// batch (one Arrow IPC RecordBatch message, no schema message).
type ArrowBuilder interface {
	// Append adds one row (one Datum per column).
	Append(row []domain.Datum) error
	// AppendTo appends the message for the rows added since the last Reset.
	AppendTo(dst []byte) ([]byte, error)
	// Reset forgets the rows, keeping allocated memory.
	Reset()
}
