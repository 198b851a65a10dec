//go:build integration

package integration

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/application"
)

// rpcName matches an internal Fluss call name such as GET_TABLE_INFO.
var rpcName = regexp.MustCompile(`\b[A-Z]{2,}(_[A-Z]+)+\b`)

// TestGatewayDeadlineMessages: on a gateway that has not served the table
// yet (fresh per try), a write under each caller deadline either succeeds
// or answers 504 saying nothing was written, naming no internal call, and
// saying the deadline is below the minimum workable one when it is. The
// smallest deadline that got through is logged: it backs
// application.MinWorkableDeadline.
func TestGatewayDeadlineMessages(t *testing.T) {
	setup := startGateway(t, "FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE=0s")
	db := newDatabase(t, setup, "gw_deadline")
	createTable(t, setup.base, db, "t", columns("id BIGINT"), map[string]any{"primary_key": []any{"id"}})

	var firstOK time.Duration
	for i, budget := range []time.Duration{time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond,
		30 * time.Millisecond, 60 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond, time.Second} {
		g := startGateway(t, "FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE=0s")
		status, body := httpJSON(t, http.MethodPost, g.base+"/databases/"+db+"/tables/t/records",
			map[string]any{"entries": []any{map[string]any{"id": "e", "upsert": map[string]any{"id": i}}}},
			"X-Fluss-Request-Timeout", budget.String())
		if status == http.StatusOK {
			t.Logf("%s: 200 %v", budget, body)
			if firstOK == 0 && body["success_count"] == float64(1) {
				firstOK = budget
			}
			continue
		}
		require.Equal(t, http.StatusGatewayTimeout, status, "%s: %v", budget, body)
		msg := body["error"].(map[string]any)["message"].(string)
		t.Logf("%s: 504 %s", budget, msg)
		assert.Contains(t, msg, "nothing was written")
		assert.False(t, rpcName.MatchString(msg), "internal call name in %q", msg)
		if budget < application.MinWorkableDeadline {
			assert.Contains(t, msg, "a deadline below "+application.MinWorkableDeadline.String())
		}
	}
	t.Logf("smallest deadline a cold write got through with: %s (MinWorkableDeadline %s)", firstOK, application.MinWorkableDeadline)
	require.NotZero(t, firstOK, "no deadline up to 1s got a cold write through")
}
