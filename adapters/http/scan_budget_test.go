package http

import (
	"context"
	"encoding/json"
	"fmt"
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// bigScans answers n records of a 1 KiB message each.
type bigScans struct {
	fakeScans
	n int
}

func (f *bigScans) Scan(_ context.Context, _ application.Scope, _ domain.TablePath, req application.ScanRequest) (application.ScanResult, error) {
	f.req = req
	cols := []domain.Column{{Name: "msg", Type: domain.DataType{Root: domain.TypeString}}}
	res := application.ScanResult{Columns: cols, Cursor: "c-all", CaughtUp: true}
	for i := range f.n {
		res.Records = append(res.Records, application.ScanRecord{LogRecord: domain.LogRecord{Offset: int64(i), ChangeType: "+A",
			Row: []domain.Datum{{Bytes: []byte(strings.Repeat("x", 1024))}}}})
	}
	return res, nil
}

// TestScanAnswerBudget: a scan's records and answer are charged to the
// memory budget (429 with Retry-After when it cannot take them, released
// once written); an answer past the answer-size cap ends after the last
// record that fits, not caught up, in JSON and NDJSON.
func TestScanAnswerBudget(t *testing.T) {
	budget := membudget.New(256<<10, 50*time.Millisecond)
	f := &bigScans{n: 100}
	g := newGateway(t, withScans(f), withBudget(budget), func(o *Options, _ *Deps) { o.MaxLookupResponseBytes = 1 << 20 })
	path := db + "/shop/tables/events/records/scan"

	r := g.call(nethttp.MethodPost, path, `{"cursor": "c"}`)
	require.Equal(t, nethttp.StatusOK, r.status, "%s", r.body)
	var a struct {
		Records  []json.RawMessage `json:"records"`
		Cursor   string            `json:"cursor"`
		CaughtUp bool              `json:"caught_up"`
	}
	require.NoError(t, json.Unmarshal(r.body, &a))
	assert.Len(t, a.Records, 100)
	assert.True(t, a.CaughtUp)
	assert.Eventually(t, func() bool { return budget.Stats().InUse == 0 }, 2*time.Second, 10*time.Millisecond)

	// Held elsewhere: the budget cannot take the records.
	hold := budget.NewCharge()
	require.NoError(t, hold.Acquire(context.Background(), 200<<10))
	r = g.call(nethttp.MethodPost, path, `{"cursor": "c"}`)
	require.Equal(t, nethttp.StatusTooManyRequests, r.status, "%s", r.body)
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	assert.Contains(t, r.message(t), "memory budget")
	hold.Release()
	assert.Eventually(t, func() bool { return budget.Stats().InUse == 0 }, 2*time.Second, 10*time.Millisecond)

	// A cap of 20 KiB: the answer ends early, not caught up.
	g2 := newGateway(t, withScans(f), func(o *Options, _ *Deps) { o.MaxLookupResponseBytes = 20 << 10 })
	r = g2.call(nethttp.MethodPost, path, `{"cursor": "c"}`)
	require.Equal(t, nethttp.StatusOK, r.status, "%s", r.body)
	require.NoError(t, json.Unmarshal(r.body, &a))
	assert.Greater(t, len(a.Records), 5)
	assert.Less(t, len(a.Records), 20)
	assert.False(t, a.CaughtUp)
	assert.LessOrEqual(t, len(r.body), 20<<10)
	assert.Equal(t, a.Cursor, r.header.Get(HeaderScanCursor), "the cut answer's cursor")
	assert.Equal(t, "false", r.header.Get(HeaderScanCaughtUp))

	r = g2.call(nethttp.MethodPost, path, `{"cursor": "c"}`, "Accept", MIMEApplicationNDJSON)
	require.Equal(t, nethttp.StatusOK, r.status, "%s", r.body)
	lines := strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
	assert.Len(t, lines, len(a.Records)+1, "the same records, then the cursor line")
	assert.JSONEq(t, fmt.Sprintf(`{"cursor": %q, "caught_up": false}`, "c-all"), lines[len(lines)-1])

	// A first record larger than the cap: 413.
	g3 := newGateway(t, withScans(f), func(o *Options, _ *Deps) { o.MaxLookupResponseBytes = 512 })
	r = g3.call(nethttp.MethodPost, path, `{"cursor": "c"}`)
	assert.Equal(t, nethttp.StatusRequestEntityTooLarge, r.status, "%s", r.body)
}
