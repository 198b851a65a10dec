package main

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPostWaitsOut429: a body refused with 429 is sent again after the
// answer's Retry-After, and the result counts the retries; other statuses
// are not retried.
func TestPostWaitsOut429(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		refuse  int32 // 429 answers before the 200
		status  int
		retried int
		calls   int32
	}{
		{"accepted at once", 0, http.StatusOK, 0, 1},
		{"two 429s then accepted", 2, http.StatusOK, 2, 3},
		{"a 503 is not retried", -1, http.StatusServiceUnavailable, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				n := calls.Add(1)
				switch {
				case tc.refuse < 0:
					w.WriteHeader(http.StatusServiceUnavailable)
				case n <= tc.refuse:
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(http.StatusTooManyRequests)
				default:
					_, _ = w.Write([]byte(`{"row_count":1,"success_count":1,"error_count":0,"successes":[{"id":"a"}],"failures":[]}`))
				}
			}))
			defer srv.Close()
			cl := &client{c: config{timeout: 5 * time.Second}, http: srv.Client(), urlPath: srv.URL, contentType: "application/json"}
			r := cl.post([]byte(`{"entries":[]}`))
			require.Equal(t, tc.status, r.status, r.firstErr)
			assert.Equal(t, tc.retried, r.retried429)
			assert.Equal(t, tc.calls, calls.Load())
		})
	}
}
