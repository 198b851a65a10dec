package telemetry

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// GatewayMetrics records the REST-level families. The HTTP adapter and the
// write use case call it through interfaces of their own with the same
// method signatures.
type GatewayMetrics struct{ in *Instrumentation }

// Gateway returns the REST-level recorder.
func (in *Instrumentation) Gateway() *GatewayMetrics { return &GatewayMetrics{in: in} }

// Entry outcomes of fluss_gateway_write_entries_total.
const (
	OutcomeSuccess = "success" // the entry was written
	OutcomeFailed  = "failed"  // the entry was not applied (applied "no")
	OutcomeUnknown = "unknown" // the entry may have been applied (applied "unknown")
)

// CodeOK is the `code` attribute of successful entries.
const CodeOK = "ok"

// ObserveRequest records one REST request: fluss_gateway_rest_requests_total
// {method, route, status_code, status_class} and
// fluss_gateway_rest_request_duration_seconds{method, route, status_class}.
// route is the OpenAPI template (`/v1/clusters/{cluster}/databases`), never
// the raw path; "" (no route matched) is recorded as "unmatched". Unknown
// methods are recorded as _OTHER.
func (g *GatewayMetrics) ObserveRequest(ctx context.Context, method, route string, status int, elapsed time.Duration) {
	g.ObserveRequestDetail(ctx, method, route, status, "", domain.TablePath{}, elapsed)
}

// ObserveRequestDetail is ObserveRequest with the error envelope's code
// (error_code; "" for a request without error is recorded as "ok") and the
// table the route names (table and database attributes when configured,
// capped; zero for routes without one).
func (g *GatewayMetrics) ObserveRequestDetail(ctx context.Context, method, route string, status int, errorCode string, table domain.TablePath, elapsed time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	if errorCode == "" {
		errorCode = CodeOK
	}
	m, code := normalizeMethod(method), statusCode(status)
	k := optKey{family: famRequest, s0: m, s1: route, s2: code, s3: errorCode, table: g.in.labelled(table)}
	g.in.restRequests.Add(ctx, 1, g.in.opts.options(k, func() []attribute.KeyValue {
		return g.in.tableAttr([]attribute.KeyValue{AttrMethod.String(m), AttrRoute.String(route),
			AttrStatusCode.String(code), AttrStatusClass.String(statusClass(status)), AttrErrorCode.String(errorCode)}, table)
	}).add...)
	// No status_code on the histogram (the class is a function of it).
	k.family = famRequestDuration
	g.in.restDuration.Record(ctx, seconds(elapsed), g.in.opts.options(k, func() []attribute.KeyValue {
		return g.in.tableAttr([]attribute.KeyValue{AttrMethod.String(m), AttrRoute.String(route),
			AttrStatusClass.String(statusClass(status)), AttrErrorCode.String(errorCode)}, table)
	}).record...)
}

// statusCodes are the status_code values of the statuses 100-599, made
// once (strconv.Itoa allocates each above 99).
var statusCodes = func() []string {
	out := make([]string, 500)
	for i := range out {
		out[i] = strconv.Itoa(100 + i)
	}
	return out
}()

// statusCode is strconv.Itoa(status), without allocating for 100-599.
func statusCode(status int) string {
	if status >= 100 && status < 600 {
		return statusCodes[status-100]
	}
	return strconv.Itoa(status)
}

// Lookup kinds of fluss_gateway_lookup_keys_total.
const (
	KindLookup       = "lookup"
	KindPrefixLookup = "prefix_lookup"
)

// Lookup outcomes of fluss_gateway_lookup_keys_total.
const (
	OutcomeFound  = "found"
	OutcomeMissed = "missed"
)

// RecordLookups counts the keys of one lookup (kind KindLookup) or the
// prefixes of one prefix lookup (KindPrefixLookup) by outcome:
// fluss_gateway_lookup_keys_total{kind, outcome=found|missed|failed}.
func (g *GatewayMetrics) RecordLookups(ctx context.Context, table domain.TablePath, kind string, found, missed, failed int) {
	for _, c := range []struct {
		outcome string
		n       int
	}{{OutcomeFound, found}, {OutcomeMissed, missed}, {OutcomeFailed, failed}} {
		if c.n > 0 {
			// From the cache: once per lookup request (issue 22).
			k := optKey{family: famLookups, s0: kind, s1: c.outcome, table: g.in.labelled(table)}
			g.in.lookupKeys.Add(ctx, int64(c.n), g.in.opts.options(k, func() []attribute.KeyValue {
				return g.in.tableAttr([]attribute.KeyValue{AttrKind.String(kind), AttrOutcome.String(c.outcome)}, table)
			}).add...)
		}
	}
}

// RecordScan counts one log scan: fluss_gateway_scan_requests_total{outcome,
// caught_up} (outcome "ok" or the error code) and its records in
// fluss_gateway_scan_records_total. It implements application.ScanMetrics.
func (g *GatewayMetrics) RecordScan(ctx context.Context, table domain.TablePath, records int, caughtUp bool, outcome string) {
	attrs := g.in.tableAttr([]attribute.KeyValue{AttrOutcome.String(outcome), AttrCaughtUp.Bool(caughtUp)}, table)
	g.in.scanReqs.Add(ctx, 1, metric.WithAttributes(attrs...))
	if records > 0 {
		g.in.scanRecords.Add(ctx, int64(records), metric.WithAttributes(g.in.tableAttr(nil, table)...))
	}
}

// RecordEntries counts the verdicts of one write request in
// fluss_gateway_write_entries_total{outcome, code}: outcome success (code
// "ok"), failed (Applied "no" or unset) or unknown (Applied "unknown"), code
// the entry's snake_case code. Call it once per request with the final
// verdicts (validation rejections included). table is used only when
// InstrumentationOptions.TableLabel is set.
func (g *GatewayMetrics) RecordEntries(ctx context.Context, table domain.TablePath, results []domain.EntryResult) {
	var c entryCounts
	for i := range results {
		c.add(&results[i], 1)
	}
	g.recordEntryCounts(ctx, table, &c)
}

// RecordEntryRuns is RecordEntries for verdicts run by run
// (application.WriteResult.Runs): each run counts for its rows.
func (g *GatewayMetrics) RecordEntryRuns(ctx context.Context, table domain.TablePath, runs []domain.ResultRun) {
	var c entryCounts
	for i := range runs {
		c.add(&runs[i].Result, int64(runs[i].Rows))
	}
	g.recordEntryCounts(ctx, table, &c)
}

type entryKey struct{ outcome, code string }

// entryCounts counts verdicts by outcome and code. Successes are counted
// apart: a map update per entry (hashing two strings) was most of the cost
// of recording a 500-entry request.
type entryCounts struct {
	ok     int64
	counts map[entryKey]int64
}

func (c *entryCounts) add(r *domain.EntryResult, n int64) {
	switch {
	case r.OK():
		c.ok += n
		return
	case c.counts == nil:
		c.counts = make(map[entryKey]int64, 2)
	}
	if r.Applied == domain.AppliedUnknown {
		c.counts[entryKey{OutcomeUnknown, r.Code}] += n
	} else {
		c.counts[entryKey{OutcomeFailed, r.Code}] += n
	}
}

func (g *GatewayMetrics) recordEntryCounts(ctx context.Context, table domain.TablePath, c *entryCounts) {
	counts := c.counts
	if c.ok > 0 {
		if counts == nil {
			counts = make(map[entryKey]int64, 1)
		}
		counts[entryKey{OutcomeSuccess, CodeOK}] = c.ok
	}
	for k, n := range counts {
		g.in.writeEntries.Add(ctx, n, g.in.opts.get(optKey{family: famEntries, s0: k.outcome, s1: k.code, table: g.in.labelled(table)},
			func() []attribute.KeyValue {
				return g.in.tableAttr([]attribute.KeyValue{AttrOutcome.String(k.outcome), AttrCode.String(k.code)}, table)
			}))
	}
}

// ObserveIngest counts one write body by its content type:
// fluss_gateway_write_body_rows_total{content_type} (the entries it held)
// and fluss_gateway_write_body_bytes_total{content_type} (its bytes as
// decoded, after gzip). contentType is one of the gateway's write media
// types, never free text from the request.
func (g *GatewayMetrics) ObserveIngest(ctx context.Context, contentType string, table domain.TablePath, rows, bytes int64) {
	opt := g.in.opts.get(optKey{family: famIngest, s0: contentType, table: g.in.labelled(table)}, func() []attribute.KeyValue {
		return g.in.tableAttr([]attribute.KeyValue{AttrContentType.String(contentType)}, table)
	})
	g.in.bodyRows.Add(ctx, rows, opt)
	g.in.bodyBytes.Add(ctx, bytes, opt)
}
