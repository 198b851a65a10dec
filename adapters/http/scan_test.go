package http

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// fakeScans records the decoded request and answers two records.
type fakeScans struct {
	req   application.ScanRequest
	start application.ScanStart
}

func (f *fakeScans) Scan(_ context.Context, _ application.Scope, _ domain.TablePath, req application.ScanRequest) (application.ScanResult, error) {
	f.req = req
	cols := []domain.Column{{Name: "id", Type: domain.DataType{Root: domain.TypeBigInt}}, {Name: "msg", Type: domain.DataType{Root: domain.TypeString, Nullable: true}}}
	return application.ScanResult{Columns: cols, Cursor: "c-1", CaughtUp: true, Records: []application.ScanRecord{
		{LogRecord: domain.LogRecord{Offset: 17, Timestamp: 1_796_119_200_123, ChangeType: "+A", Row: []domain.Datum{{I64: 1}, {Bytes: []byte("hi")}}}, Partition: "20261201"},
		{LogRecord: domain.LogRecord{Offset: 3, Timestamp: 0, ChangeType: "-D", Row: []domain.Datum{{I64: 2}, {Null: true}}}, Bucket: 2},
	}}, nil
}

func (f *fakeScans) Offsets(_ context.Context, _ application.Scope, _ domain.TablePath, start application.ScanStart, _ []string, _ []int32) (application.OffsetsResult, error) {
	f.start = start
	return application.OffsetsResult{Offsets: []domain.BucketOffset{{LogBucket: domain.LogBucket{Bucket: 0, PartitionID: -1}, Offset: 123}}}, nil
}

// longCursorScans answers no records and a long cursor.
type longCursorScans struct {
	fakeScans
	cursor string
}

func (f *longCursorScans) Scan(context.Context, application.Scope, domain.TablePath, application.ScanRequest) (application.ScanResult, error) {
	return application.ScanResult{Cursor: f.cursor}, nil
}

func withScans(s Scans) gatewayOption { return func(_ *Options, d *Deps) { d.Scans = s } }

func TestScanRoute(t *testing.T) {
	f := &fakeScans{}
	g := newGateway(t, withScans(f))
	path := db + "/shop/tables/events/records/scan"

	r := g.call(nethttp.MethodPost, path, `{"start": {"position": "timestamp", "timestamp": "2026-12-01T10:00:00Z"},
		"max_rows": 1000, "max_wait_ms": 5000, "columns": ["id", "msg"], "partitions": ["20261201"], "buckets": [0, 2],
		"on_out_of_range": "earliest"}`)
	require.Equal(t, nethttp.StatusOK, r.status, "%s", r.body)
	assert.JSONEq(t, `{"records": [
		{"partition": "20261201", "bucket": 0, "offset": 17, "timestamp": "2026-12-01T10:00:00.123Z", "change_type": "+A", "row": {"id": "1", "msg": "hi"}},
		{"bucket": 2, "offset": 3, "timestamp": "1970-01-01T00:00:00.000Z", "change_type": "-D", "row": {"id": "2", "msg": null}}],
		"cursor": "c-1", "caught_up": true}`, string(r.body))
	assert.Equal(t, "c-1", r.header.Get(HeaderScanCursor), "the body's cursor, in a header too")
	assert.Equal(t, "true", r.header.Get(HeaderScanCaughtUp))
	require.NotNil(t, f.req.Start)
	assert.Equal(t, domain.OffsetTimestamp, f.req.Start.Position)
	assert.Equal(t, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixMilli(), f.req.Start.Timestamp)
	assert.Equal(t, 1000, f.req.MaxRows)
	assert.Equal(t, 5*time.Second, f.req.MaxWait)
	assert.Equal(t, []string{"id", "msg"}, f.req.Columns)
	assert.Equal(t, []int32{0, 2}, f.req.Buckets)
	assert.Equal(t, application.OutOfRangeEarliest, f.req.OutOfRange)

	r = g.call(nethttp.MethodPost, path, `{"start": {"position": "timestamp", "timestamp": 1796119200123}}`)
	require.Equal(t, nethttp.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, int64(1796119200123), f.req.Start.Timestamp)

	// A cursor longer than maxHeaderCursor is in the body only.
	long := &longCursorScans{cursor: strings.Repeat("c", maxHeaderCursor+1)}
	r = newGateway(t, withScans(long)).call(nethttp.MethodPost, path, `{"cursor": "abc"}`)
	require.Equal(t, nethttp.StatusOK, r.status, "%s", r.body)
	assert.Contains(t, string(r.body), long.cursor)
	assert.Empty(t, r.header.Get(HeaderScanCursor))
	assert.Empty(t, r.header.Get(HeaderScanCaughtUp))

	// NDJSON: the records, then the cursor line.
	r = g.call(nethttp.MethodPost, path, `{"cursor": "abc"}`, "Accept", MIMEApplicationNDJSON)
	require.Equal(t, nethttp.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, MIMEApplicationNDJSON, r.header.Get("Content-Type"))
	assert.Empty(t, r.header.Get(HeaderScanCursor), "streamed: the cursor is in the last line only")
	assert.Equal(t, "abc", f.req.Cursor)
	var lines []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		lines = append(lines, m)
	}
	require.Len(t, lines, 3)
	assert.Equal(t, map[string]any{"cursor": "c-1", "caught_up": true}, lines[2])

	for _, tc := range []struct{ body, want string }{
		{`{"start": {"position": "soon"}}`, "start.position"},
		{`{"start": {"position": "timestamp"}}`, "start.timestamp: required"},
		{`{"start": {"position": "timestamp", "timestamp": "yesterday"}}`, "RFC 3339"},
		{`{"start": {"position": "earliest", "timestamp": 5}}`, "only with position"},
		{`{"cursor": ""}`, "cursor: empty"},
		{`{"cursor": "x", "max_rows": 0}`, "max_rows"},
		{`{"cursor": "x", "max_wait_ms": -1}`, "max_wait_ms"},
		{`{"cursor": "x", "on_out_of_range": "ignore"}`, "on_out_of_range"},
		{`{"cursor": "x", "bogus": 1}`, "unknown field"},
	} {
		r := g.call(nethttp.MethodPost, path, tc.body)
		assert.Equal(t, nethttp.StatusBadRequest, r.status, "%s: %s", tc.body, r.body)
		assert.Contains(t, r.message(t), tc.want, tc.body)
	}

	// NDJSON is accepted on the scan route only.
	r = g.call(nethttp.MethodGet, db, "", "Accept", MIMEApplicationNDJSON)
	assert.Equal(t, nethttp.StatusNotAcceptable, r.status)
}

func TestOffsetsRoute(t *testing.T) {
	f := &fakeScans{}
	g := newGateway(t, withScans(f))
	r := g.call(nethttp.MethodGet, db+"/shop/tables/events/offsets?position=earliest", "")
	require.Equal(t, nethttp.StatusOK, r.status, "%s", r.body)
	assert.JSONEq(t, `{"offsets": [{"bucket": 0, "offset": 123}]}`, string(r.body))
	assert.Equal(t, domain.OffsetEarliest, f.start.Position)

	r = g.call(nethttp.MethodGet, db+"/shop/tables/events/offsets?position=timestamp&timestamp=2026-12-01T10:00:00.5Z", "")
	require.Equal(t, nethttp.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, time.Date(2026, 12, 1, 10, 0, 0, 5e8, time.UTC).UnixMilli(), f.start.Timestamp)

	r = g.call(nethttp.MethodGet, db+"/shop/tables/events/offsets?position=never", "")
	assert.Equal(t, nethttp.StatusBadRequest, r.status)
	r = g.call(nethttp.MethodGet, db+"/shop/tables/events/offsets?nope=1", "")
	assert.Equal(t, nethttp.StatusBadRequest, r.status)

	// Without a scan service the routes are 501.
	g = newGateway(t)
	r = g.call(nethttp.MethodGet, db+"/shop/tables/events/offsets", "")
	assert.Equal(t, nethttp.StatusNotImplemented, r.status)
}

// TestScanRendererTimestamps: a timestamp formatted once is reused only for
// records that have the same one.
func TestScanRendererTimestamps(t *testing.T) {
	cols := []domain.Column{{Name: "id", Type: domain.DataType{Root: domain.TypeInteger}}}
	r := newScanRenderer(cols)
	for _, tc := range []struct {
		ts   int64
		want string
	}{
		{0, "1970-01-01T00:00:00.000Z"},
		{0, "1970-01-01T00:00:00.000Z"},
		{1_764_583_200_123, "2025-12-01T10:00:00.123Z"},
		{1_764_583_200_123, "2025-12-01T10:00:00.123Z"},
		{-1, "1969-12-31T23:59:59.999Z"},
		{0, "1970-01-01T00:00:00.000Z"},
	} {
		rec := application.ScanRecord{Partition: "p", Bucket: 2, LogRecord: domain.LogRecord{Offset: 9, Timestamp: tc.ts, ChangeType: "+U", Row: []domain.Datum{{I64: 5}}}}
		assert.Equal(t, `{"partition":"p","bucket":2,"offset":9,"timestamp":"`+tc.want+`","change_type":"+U","row":{"id":5}}`,
			string(r.appendRecord(nil, &rec)))
	}
}
