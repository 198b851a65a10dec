package http

import (
	nethttp "net/http"
	"testing"
)

// FuzzScanBody: any body on the scan route answers 200 or a 4xx, never a
// 5xx or a panic (the fake use case answers every decoded request).
func FuzzScanBody(f *testing.F) {
	for _, s := range []string{
		`{"start": {"position": "earliest"}}`,
		`{"start": {"position": "offsets", "offsets": [{"partition": "p", "bucket": 0, "offset": 17}]}}`,
		`{"start": {"position": "offsets", "offsets": [{"bucket": 0}]}}`,
		`{"start": {"position": "timestamp", "timestamp": "2026-12-01T10:00:00Z"}, "columns": ["id"]}`,
		`{"cursor": "abc", "max_rows": 5, "max_wait_ms": 0, "on_out_of_range": "latest"}`,
		`{"start": {"position": "offsets", "offsets": []}}`,
	} {
		f.Add(s)
	}
	g := newGateway(&testing.T{}, withScans(&fakeScans{}))
	path := db + "/shop/tables/events/records/scan"
	f.Fuzz(func(t *testing.T, body string) {
		g.t = t
		r := g.call(nethttp.MethodPost, path, body)
		if r.status != nethttp.StatusOK && (r.status < 400 || r.status >= 500) {
			t.Fatalf("status %d for %q: %s", r.status, body, r.body)
		}
	})
}
