package telemetry

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// ScopeName is the instrumentation scope (meter and tracer name) of the
// gateway's own metrics and spans.
const ScopeName = "github.com/fluss-gateway/fluss-gateway-go/adapters/telemetry"

// Instrument names. The OTel names use dots; the Prometheus exporter (and any
// OTLP-to-Prometheus translation) turns them into the family names in the
// comments: dots become underscores, the unit adds `_seconds`/`_bytes` unless
// the name already says so, and counters get `_total`.
const (
	// REST API (fed by GatewayMetrics.ObserveRequest).
	MetricRESTRequests        = "fluss.gateway.rest.requests"         // fluss_gateway_rest_requests_total
	MetricRESTRequestDuration = "fluss.gateway.rest.request.duration" // fluss_gateway_rest_request_duration_seconds
	// Per-entry verdicts of write requests (GatewayMetrics.RecordEntries).
	MetricWriteEntries = "fluss.gateway.write.entries" // fluss_gateway_write_entries_total
	// Keys of lookups and prefixes of prefix lookups by outcome (GatewayMetrics.RecordLookups).
	MetricLookupKeys = "fluss.gateway.lookup.keys" // fluss_gateway_lookup_keys_total
	// Write bodies by content type (GatewayMetrics.ObserveIngest): entries
	// decoded and body bytes read (after gzip).
	MetricWriteBodyRows  = "fluss.gateway.write.body.rows"  // fluss_gateway_write_body_rows_total
	MetricWriteBodyBytes = "fluss.gateway.write.body.bytes" // fluss_gateway_write_body_bytes_total
	// Log scans by outcome, and the records they returned (GatewayMetrics.RecordScan).
	MetricScanRequests = "fluss.gateway.scan.requests" // fluss_gateway_scan_requests_total
	MetricScanRecords  = "fluss.gateway.scan.records"  // fluss_gateway_scan_records_total
	// Rows and bytes sent to Fluss by the writer (WriterHooks.BatchesSent).
	MetricBackendWriteRows  = "fluss.gateway.backend.write.rows"  // fluss_gateway_backend_write_rows_total
	MetricBackendWriteBytes = "fluss.gateway.backend.write.bytes" // fluss_gateway_backend_write_bytes_total
	// Fluss RPCs (FlussHooks.OnFlussRequest).
	MetricBackendRequests        = "fluss.gateway.backend.requests"         // fluss_gateway_backend_requests_total
	MetricBackendRequestDuration = "fluss.gateway.backend.request.duration" // fluss_gateway_backend_request_duration_seconds
	// Fluss connections (FlussHooks.OnFlussConnect, OnFlussDisconnect).
	MetricConnectionsActive  = "fluss.gateway.connections.active"  // fluss_gateway_connections_active
	MetricConnectionsCreated = "fluss.gateway.connections.created" // fluss_gateway_connections_created_total
	MetricConnectionsClosed  = "fluss.gateway.connections.closed"  // fluss_gateway_connections_closed_total
	MetricConnectionsFailed  = "fluss.gateway.connections.failed"  // fluss_gateway_connections_failed_total
	MetricConnectDuration    = "fluss.gateway.connect.duration"    // fluss_gateway_connect_duration_seconds
	// Writer internals (WriterHooks).
	MetricWriterBatches        = "fluss.client.writer.batches"         // fluss_client_writer_batches_total
	MetricWriterBatchSize      = "fluss.client.writer.batch.size"      // fluss_client_writer_batch_size_bytes
	MetricWriterBatchRows      = "fluss.client.writer.batch.rows"      // fluss_client_writer_batch_rows
	MetricWriterRetries        = "fluss.client.writer.retries"         // fluss_client_writer_retries_total
	MetricWriterArrowPacked    = "fluss.client.writer.arrow.packed"    // fluss_client_writer_arrow_packed_total
	MetricWriterEntries        = "fluss.client.writer.entries"         // fluss_client_writer_entries_total
	MetricWriterBufferUsed     = "fluss.client.writer.buffer.used"     // fluss_client_writer_buffer_used_bytes
	MetricWriterBufferCapacity = "fluss.client.writer.buffer.capacity" // fluss_client_writer_buffer_capacity_bytes
	MetricWriterKvPressure     = "fluss.client.writer.kv.pressure"     // fluss_client_writer_kv_pressure
	MetricWriterKvThrottle     = "fluss.client.writer.kv.throttle"     // fluss_client_writer_kv_throttle_seconds_total
)

// Attribute keys of the gateway's metrics and spans. Gateway families carry
// no table, request or user attribute unless InstrumentationOptions.TableLabel
// is set; backend and writer families carry the configured cluster id.
const (
	AttrMethod      = attribute.Key("method")       // REST: GET, POST, ... or _OTHER
	AttrRoute       = attribute.Key("route")        // REST: OpenAPI route template, or "unmatched"
	AttrStatusCode  = attribute.Key("status_code")  // REST: "201"
	AttrStatusClass = attribute.Key("status_class") // REST: "2xx"
	AttrOutcome     = attribute.Key("outcome")      // see the method docs for the values
	AttrCode        = attribute.Key("code")         // snake_case entry or Fluss error code
	AttrTable       = attribute.Key("table")        // database.table, only with TableLabel (capped, see MaxTables)
	AttrDatabase    = attribute.Key("database")     // database, only with DatabaseLabel (capped)
	AttrErrorCode   = attribute.Key("error_code")   // REST: the error envelope's code, "ok" without error
	AttrKind        = attribute.Key("kind")         // lookups: lookup or prefix_lookup
	AttrCaughtUp    = attribute.Key("caught_up")    // scans: true or false
	AttrCluster     = attribute.Key("cluster")      // configured cluster id
	AttrAPI         = attribute.Key("api")          // Fluss API name, PUT_KV
	AttrFlussCode   = attribute.Key("fluss_code")   // Fluss error name (NONE on success), see FlussCodeName
	AttrContentType = attribute.Key("content_type") // write bodies: application/json, application/x-ndjson, application/vnd.apache.arrow.stream
)

// Span attribute keys.
const (
	// RequestIDKey carries the gateway request id (the X-Request-Id header,
	// the `request_id` of logs and error envelopes) on the server span.
	RequestIDKey = attribute.Key("gateway.request_id")

	SpanAttrCluster      = attribute.Key("fluss.cluster")
	SpanAttrAPI          = attribute.Key("fluss.api")
	SpanAttrAPIVersion   = attribute.Key("fluss.api.version")
	SpanAttrNodeID       = attribute.Key("fluss.node.id")
	SpanAttrBucketCount  = attribute.Key("fluss.bucket.count")
	SpanAttrRowCount     = attribute.Key("fluss.row.count")
	SpanAttrErrorCode    = attribute.Key("fluss.error.code")
	SpanAttrFailed       = attribute.Key("fluss.bucket.failed_count")
	SpanAttrRequestSize  = attribute.Key("fluss.request.size")
	SpanAttrResponseSize = attribute.Key("fluss.response.size")
	SpanAttrLinksDropped = attribute.Key("fluss.links.dropped")
	// SpanAttrKvPressure is the highest per-bucket KV backpressure signal of
	// a PutKv answer (Fluss 1.0 `pressure`, 1 for a code 72); absent when 0.
	SpanAttrKvPressure = attribute.Key("fluss.kv.pressure")
	// SpanAttrKvThrottle is the longest bucket throttle (ms) that answer
	// caused in the writer; absent when 0.
	SpanAttrKvThrottle = attribute.Key("fluss.kv.throttle_ms")
	SpanAttrServerAddr = attribute.Key("server.address")
	SpanAttrServerPort = attribute.Key("server.port")
)

// Histogram bucket boundaries.
var (
	secondsBuckets  = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	bytesBuckets    = []float64{256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20}
	rowsBuckets     = []float64{1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 50000, 100000}
	pressureBuckets = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}
)

// InstrumentationOptions configure NewInstrumentation. Following the
// OpenTelemetry contrib rules, it takes providers (never a Meter or Tracer)
// and defaults to the globals.
type InstrumentationOptions struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// TableLabel adds a `table` attribute (database.table) to the REST
	// request families (data-plane and table routes), the write entries,
	// lookup keys, backend write rows and bytes and writer families. Off by
	// default: tables are unbounded. Values are capped: the first MaxTables
	// distinct tables seen get their own value, every later one `other`
	// (config gateway.metrics.table-label.enabled, gateway.metrics.max-tables).
	TableLabel bool
	// DatabaseLabel adds a `database` attribute to the same families, capped
	// the same way (gateway.metrics.database-label.enabled).
	DatabaseLabel bool
	// MaxTables caps the distinct table (and database) values; 0 means
	// DefaultMaxTables.
	MaxTables int
	// FlussCodeName names a numeric Fluss error code for the fluss_code
	// attribute (bootstrap passes the wire table: 36 is
	// INVALID_COORDINATOR_EXCEPTION); nil keeps the number.
	FlussCodeName func(code int32) string
}

// DefaultMaxTables is the default InstrumentationOptions.MaxTables.
const DefaultMaxTables = 100

// OtherLabel is the table or database value of every table past the cap.
const OtherLabel = "other"

// labelCap hands out at most max distinct label values, first come first
// served, and OtherLabel afterwards: the series count stays bounded however
// many tables a shared gateway serves.
type labelCap struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func newLabelCap(max int) *labelCap {
	return &labelCap{max: max, seen: make(map[string]struct{}, min(max, 1024))}
}

func (c *labelCap) value(v string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[v]; ok {
		return v
	}
	if len(c.seen) >= c.max {
		return OtherLabel
	}
	c.seen[v] = struct{}{}
	return v
}

// Instrumentation holds the gateway's instruments, created once. Hand its
// parts to the other adapters through bootstrap:
//
//   - Gateway() to the HTTP adapter and the write use case (REST requests,
//     entry verdicts),
//   - FlussHooks(cluster) to rpc.Config.Hooks (connections, Fluss requests,
//     request spans),
//   - WriterHooks(cluster) to the writer (batches, retries, buffer,
//     backpressure, backend spans with links).
//
// Every method is safe for concurrent use and never blocks.
type Instrumentation struct {
	tracer     trace.Tracer
	tableLabel bool
	dbLabel    bool
	tables     *labelCap
	databases  *labelCap
	flussName  func(int32) string

	// opts caches the attribute sets recorded per request (optcache.go).
	opts optionCache

	restRequests metric.Int64Counter
	restDuration metric.Float64Histogram
	writeEntries metric.Int64Counter
	lookupKeys   metric.Int64Counter
	bodyRows     metric.Int64Counter
	bodyBytes    metric.Int64Counter
	scanReqs     metric.Int64Counter
	scanRecords  metric.Int64Counter

	backendRows     metric.Int64Counter
	backendBytes    metric.Int64Counter
	backendRequests metric.Int64Counter
	backendDuration metric.Float64Histogram

	connActive   metric.Int64UpDownCounter
	connCreated  metric.Int64Counter
	connClosed   metric.Int64Counter
	connFailed   metric.Int64Counter
	connDuration metric.Float64Histogram

	writerBatches   metric.Int64Counter
	writerBatchSize metric.Int64Histogram
	writerBatchRows metric.Int64Histogram
	writerRetries   metric.Int64Counter
	writerPacked    metric.Int64Counter
	writerEntries   metric.Int64Counter
	writerBufUsed   metric.Int64Gauge
	writerBufCap    metric.Int64Gauge
	writerPressure  metric.Float64Histogram
	writerThrottle  metric.Float64Counter

	// Idempotency-Key (idempotency.go).
	idemRequests metric.Int64Counter
	idemWait     metric.Float64Histogram
}

// NewInstrumentation creates every instrument. An error means an instrument
// could not be created (it is then a no-op); the result is usable anyway.
func NewInstrumentation(opts InstrumentationOptions) (*Instrumentation, error) {
	tp, mp := opts.TracerProvider, opts.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName)
	maxTables := opts.MaxTables
	if maxTables <= 0 {
		maxTables = DefaultMaxTables
	}
	in := &Instrumentation{tracer: tp.Tracer(ScopeName), tableLabel: opts.TableLabel, dbLabel: opts.DatabaseLabel,
		tables: newLabelCap(maxTables), databases: newLabelCap(maxTables), flussName: opts.FlussCodeName}
	b := builder{m: m}

	in.restRequests = b.counter(MetricRESTRequests, "{request}", "REST requests served, by method, route template, status and error code.")
	in.restDuration = b.histogram(MetricRESTRequestDuration, "s", "Duration of REST requests, by method, route template, status class and error code.", secondsBuckets)
	in.writeEntries = b.counter(MetricWriteEntries, "{entry}", "Entries of REST write requests by final verdict, once per entry: outcome success, failed (applied no) or unknown (maybe applied), and entry code; entries refused while decoding with X-Fluss-Invalid-Entries included.")
	in.bodyRows = b.counter(MetricWriteBodyRows, "{entry}", "Entries of REST write requests by the body's content type (application/json, application/x-ndjson, application/vnd.apache.arrow.stream).")
	in.bodyBytes = b.counter(MetricWriteBodyBytes, "By", "Body bytes of REST write requests by content type, counted as decoded (after gzip).")
	in.scanReqs = b.counter(MetricScanRequests, "{request}", "Log scans (records/scan) by outcome (ok or the error code) and caught_up (every scanned bucket read to its high watermark).")
	in.scanRecords = b.counter(MetricScanRecords, "{record}", "Records returned by log scans.")
	in.lookupKeys = b.counter(MetricLookupKeys, "{key}", "Keys of lookups and prefixes of prefix lookups, by kind and outcome: found (a row, or at least one row), missed (none) or failed.")

	in.backendRows = b.counter(MetricBackendWriteRows, "{row}", "Rows sent to Fluss in PutKv and ProduceLog requests (resends included).")
	in.backendBytes = b.counter(MetricBackendWriteBytes, "By", "Record bytes sent to Fluss in PutKv and ProduceLog requests (resends included).")
	in.backendRequests = b.counter(MetricBackendRequests, "{request}", "Fluss RPCs by API, outcome and Fluss error code.")
	in.backendDuration = b.histogram(MetricBackendRequestDuration, "s", "Duration of Fluss RPCs by API and outcome.", secondsBuckets)

	in.connActive = b.upDown(MetricConnectionsActive, "{connection}", "Open connections to Fluss servers.")
	in.connCreated = b.counter(MetricConnectionsCreated, "{connection}", "Connections to Fluss servers established (handshake included).")
	in.connClosed = b.counter(MetricConnectionsClosed, "{connection}", "Established connections to Fluss servers that ended, by outcome (closed or error).")
	in.connFailed = b.counter(MetricConnectionsFailed, "{connection}", "Failed attempts to connect to a Fluss server.")
	in.connDuration = b.histogram(MetricConnectDuration, "s", "Time to dial and handshake with a Fluss server, by outcome.", secondsBuckets)

	in.writerBatches = b.counter(MetricWriterBatches, "{batch}", "Record batches sent by the writer (resends included).")
	in.writerBatchSize = b.intHistogram(MetricWriterBatchSize, "By", "Size of the record batches sent by the writer.", bytesBuckets)
	in.writerBatchRows = b.intHistogram(MetricWriterBatchRows, "{row}", "Rows per record batch sent by the writer.", rowsBuckets)
	in.writerRetries = b.counter(MetricWriterRetries, "{batch}", "Batches re-queued after a retriable failure, by code.")
	in.writerPacked = b.counter(MetricWriterArrowPacked, "{row}", "Rows of Arrow log batches built from a client's ZSTD-compressed Arrow IPC record batch as it was (not compressed again).")
	in.writerEntries = b.counter(MetricWriterEntries, "{entry}", "Verdicts of the Fluss writer per call, by outcome (success, failed: applied no, unknown: maybe applied) and code; a REST write the gateway repeats with a newer table definition is counted once per attempt, so this can exceed fluss_gateway_write_entries_total.")
	in.writerBufUsed = b.gauge(MetricWriterBufferUsed, "By", "Writer buffer bytes reserved.")
	in.writerBufCap = b.gauge(MetricWriterBufferCapacity, "By", "Writer buffer capacity.")
	in.writerPressure = b.histogram(MetricWriterKvPressure, "", "KV backpressure signals received per bucket: pressure in (0, 1], 1 for a hard rejection (code 72).", pressureBuckets)
	in.writerThrottle = b.floatCounter(MetricWriterKvThrottle, "s", "Time buckets were throttled because of KV backpressure.")
	in.idemRequests, in.idemWait = newIdempotencyInstruments(&b)
	return in, b.err
}

// builder creates instruments and collects the errors.
type builder struct {
	m   metric.Meter
	err error
}

func (b *builder) counter(name, unit, desc string) metric.Int64Counter {
	c, err := b.m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.err = errors.Join(b.err, err)
	return c
}

func (b *builder) floatCounter(name, unit, desc string) metric.Float64Counter {
	c, err := b.m.Float64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.err = errors.Join(b.err, err)
	return c
}

func (b *builder) upDown(name, unit, desc string) metric.Int64UpDownCounter {
	c, err := b.m.Int64UpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.err = errors.Join(b.err, err)
	return c
}

func (b *builder) gauge(name, unit, desc string) metric.Int64Gauge {
	g, err := b.m.Int64Gauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.err = errors.Join(b.err, err)
	return g
}

func (b *builder) histogram(name, unit, desc string, bounds []float64) metric.Float64Histogram {
	h, err := b.m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(bounds...))
	b.err = errors.Join(b.err, err)
	return h
}

func (b *builder) intHistogram(name, unit, desc string, bounds []float64) metric.Int64Histogram {
	h, err := b.m.Int64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(bounds...))
	b.err = errors.Join(b.err, err)
	return h
}

// tableAttr returns attrs with the table and database attributes, when
// configured, capped (see labelCap).
func (in *Instrumentation) tableAttr(attrs []attribute.KeyValue, table domain.TablePath) []attribute.KeyValue {
	if in.tableLabel && table.Table != "" {
		attrs = append(attrs, AttrTable.String(in.tables.value(table.String())))
	}
	if in.dbLabel && table.Database != "" {
		attrs = append(attrs, AttrDatabase.String(in.databases.value(table.Database)))
	}
	return attrs
}

// flussCode renders a Fluss error code for the fluss_code attribute.
func (in *Instrumentation) flussCode(code int32) string {
	if in.flussName != nil {
		return in.flussName(code)
	}
	return strconv.Itoa(int(code))
}

// httpMethods are the methods kept as they are; others become _OTHER so a
// client cannot create series at will.
var httpMethods = map[string]string{
	http.MethodGet: http.MethodGet, http.MethodHead: http.MethodHead, http.MethodPost: http.MethodPost,
	http.MethodPut: http.MethodPut, http.MethodPatch: http.MethodPatch, http.MethodDelete: http.MethodDelete,
	http.MethodOptions: http.MethodOptions, http.MethodConnect: http.MethodConnect, http.MethodTrace: http.MethodTrace,
}

func normalizeMethod(m string) string {
	if v, ok := httpMethods[m]; ok {
		return v
	}
	return "_OTHER"
}

// statusClass renders 201 as "2xx"; out-of-range codes as "other".
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status/100) + "xx"
}

func seconds(d time.Duration) float64 { return d.Seconds() }
