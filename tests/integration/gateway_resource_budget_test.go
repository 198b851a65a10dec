//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayMemoryBudget (issue 21): with a 2 MiB memory budget, eight
// concurrent writers of 270 KB bodies are partly refused with 429 and a
// Retry-After; retried, every row lands exactly once (the peer client's end
// offsets: one change-log record per new key). A lookup of 32 copies of one
// key answers 32 found rows (the key is fetched once), and an answer over
// gateway.rest.lookup.max-response-bytes is refused with 413.
func TestGatewayMemoryBudget(t *testing.T) {
	g := startGateway(t, "FLUSS_GATEWAY__REST__MEMORY_BUDGET_BYTES=2MiB",
		"FLUSS_GATEWAY__REST__LOOKUP__MAX_RESPONSE_BYTES=64KiB")
	db := newDatabase(t, g, "gw_budget")
	url := g.base + createTable(t, g.base, db, "t", columns("k BIGINT NOT NULL", "v STRING"),
		map[string]any{"primary_key": []any{"k"}, "distribution": map[string]any{"bucket_count": 2}})

	const writers, perWriter, rows = 8, 4, 250
	value := strings.Repeat("v", 1<<10)
	var mu sync.Mutex
	var acked, refused int
	var failures []string
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range perWriter {
				var b strings.Builder
				b.WriteString(`{"entries":[`)
				for i := range rows {
					k := (w*perWriter+r)*rows + i
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `{"id":"%d","upsert":{"k":%d,"v":"%s"}}`, k, k, value)
				}
				b.WriteString(`]}`)
				for attempt := 0; ; attempt++ {
					resp, err := http.Post(url, "application/json", strings.NewReader(b.String()))
					if err != nil {
						mu.Lock()
						failures = append(failures, err.Error())
						mu.Unlock()
						return
					}
					raw, _ := io.ReadAll(resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode == http.StatusTooManyRequests && attempt < 100 {
						mu.Lock()
						refused++
						if resp.Header.Get("Retry-After") == "" || !bytes.Contains(raw, []byte(`"resource_exhausted"`)) {
							failures = append(failures, "429 without Retry-After or envelope: "+string(raw))
						}
						mu.Unlock()
						time.Sleep(50 * time.Millisecond)
						continue
					}
					var ans struct {
						SuccessCount int `json:"success_count"`
					}
					_ = json.Unmarshal(raw, &ans)
					mu.Lock()
					if resp.StatusCode != http.StatusOK || ans.SuccessCount != rows {
						failures = append(failures, fmt.Sprintf("%d: %.300s", resp.StatusCode, raw))
					}
					acked += ans.SuccessCount
					mu.Unlock()
					break
				}
			}
		}()
	}
	wg.Wait()
	require.Empty(t, failures)
	assert.Equal(t, writers*perWriter*rows, acked)
	t.Logf("%d requests refused with 429 and retried", refused)

	offs := peerCmd(t, "offsets", db, "t")
	landed := 0
	for _, x := range offs["buckets"].([]any) {
		b := x.(map[string]any)
		landed += int(b["latest"].(float64) - b["earliest"].(float64))
	}
	assert.Equal(t, writers*perWriter*rows, landed, "every row landed once")

	var keys []any
	for range 32 {
		keys = append(keys, map[string]any{"k": 7})
	}
	status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/t/records/lookup", map[string]any{"keys": keys})
	require.Equal(t, http.StatusOK, status, "%v", body)
	results := body["results"].([]any)
	require.Len(t, results, 32)
	for i, r := range results {
		res := r.(map[string]any)
		assert.Equal(t, true, res["found"], "key copy %d", i)
		assert.Equal(t, strconv.Itoa(7), fmt.Sprint(res["row"].(map[string]any)["k"]))
	}

	keys = keys[:0]
	for i := range 128 {
		keys = append(keys, map[string]any{"k": i})
	}
	status, body = g.do(http.MethodPost, "/databases/"+db+"/tables/t/records/lookup", map[string]any{"keys": keys})
	require.Equal(t, http.StatusRequestEntityTooLarge, status, "%v", body)
	assert.Contains(t, fmt.Sprint(body), "max-response-bytes")
}
