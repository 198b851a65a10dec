//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScanFetchAheadLargeAnswers: 4,000 rows in many log batches (the peer
// client's and the gateway's, in several writes) are read in answers of up
// to 2,500 records, large enough that the gateway decodes batches ahead and
// renders records in parallel chunks: a chain that sends each next request
// with the cursor of the answer's X-Fluss-Scan-Cursor header, before reading
// the answer, reads every record exactly once in offset order per bucket,
// the same ones as the peer client; each header carries the body's cursor
// and caught_up; a streamed NDJSON answer carries the same records as the
// JSON one.
func TestScanFetchAheadLargeAnswers(t *testing.T) {
	g := startGateway(t, scanTokenKey)
	db := newDatabase(t, g, "gw_scan_ahead")
	createLogTable(t, g, db, "events", 3, nil)
	var lines []string
	for i := range 1000 {
		lines = append(lines, fmt.Sprintf(`{"id": %d, "msg": "peer-%d", "amount": "%d.25"}`, i, i, i))
	}
	wrPeer(t, []byte(strings.Join(lines, "\n")), "append", db, "events", "--rows-stdin")
	for w := range 3 {
		var entries []any
		for i := 1000 + 1000*w; i < 2000+1000*w; i++ {
			entries = append(entries, map[string]any{"id": fmt.Sprint(i), "append": map[string]any{"id": i, "msg": fmt.Sprintf("gw-%d", i), "amount": fmt.Sprintf("%d.25", i)}})
		}
		status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/events/records", map[string]any{"entries": entries})
		require.Equal(t, http.StatusOK, status, "%v", body)
	}

	url := g.base + "/databases/" + db + "/tables/events/records/scan"
	post := func(req map[string]any, accept string) *http.Response {
		b, err := json.Marshal(req)
		require.NoError(t, err)
		r, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
		require.NoError(t, err)
		r.Header.Set("Content-Type", "application/json")
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return resp
	}
	type ahead struct {
		resp *http.Response
		done chan struct{}
	}
	sendAhead := func(cursor string) *ahead {
		a := &ahead{done: make(chan struct{})}
		go func() {
			defer close(a.done)
			b, _ := json.Marshal(map[string]any{"cursor": cursor, "max_rows": 2500})
			resp, err := http.Post(url, "application/json", bytes.NewReader(b))
			if err == nil {
				a.resp = resp
			}
		}()
		return a
	}

	var all []scanRecord
	resp := post(map[string]any{"start": map[string]any{"position": "earliest"}, "max_rows": 2500}, "")
	var firstAnswer scanAnswer
	for i := 0; ; i++ {
		require.Less(t, i, 20, "cursor chain does not end")
		cursor, caughtUp := resp.Header.Get("X-Fluss-Scan-Cursor"), resp.Header.Get("X-Fluss-Scan-Caught-Up")
		require.NotEmpty(t, cursor)
		var next *ahead
		if caughtUp == "false" {
			next = sendAhead(cursor) // before this answer's records are read
		}
		var a scanAnswer
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
		resp.Body.Close()
		assert.Equal(t, a.Cursor, cursor, "the header's cursor is the body's")
		assert.Equal(t, fmt.Sprint(a.CaughtUp), caughtUp)
		assert.LessOrEqual(t, len(a.Records), 2500)
		if i == 0 {
			firstAnswer = a
		}
		all = append(all, a.Records...)
		if next == nil {
			require.True(t, a.CaughtUp)
			if len(a.Records) == 0 {
				break
			}
			resp = post(map[string]any{"cursor": a.Cursor, "max_rows": 2500}, "")
			continue
		}
		<-next.done
		require.NotNil(t, next.resp, "the request sent ahead failed")
		require.Equal(t, http.StatusOK, next.resp.StatusCode)
		resp = next.resp
	}
	require.Len(t, all, 4000)
	checkOrder(t, all)
	seen := map[string]bool{}
	for _, r := range all {
		k := fmt.Sprintf("%d/%d", r.Bucket, r.Offset)
		require.False(t, seen[k], "%s twice", k)
		seen[k] = true
	}
	peer := wrScan(t, domainPath(db, "events"))
	require.Len(t, peer, 4000)
	for _, p := range peer {
		assert.True(t, seen[fmt.Sprintf("%d/%d", p.Bucket, p.Offset)], "peer record %d/%d not scanned", p.Bucket, p.Offset)
	}

	// NDJSON, streamed: the first answer's records, line by line.
	resp = post(map[string]any{"start": map[string]any{"position": "earliest"}, "max_rows": 2500}, "application/x-ndjson")
	defer resp.Body.Close()
	assert.Empty(t, resp.Header.Get("X-Fluss-Scan-Cursor"), "a streamed answer's cursor is in its last line")
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var recs []scanRecord
	var tail map[string]any
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte(`{"cursor"`)) {
			require.NoError(t, json.Unmarshal(sc.Bytes(), &tail))
			continue
		}
		var r scanRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "%s", sc.Bytes())
		recs = append(recs, r)
	}
	require.NoError(t, sc.Err())
	require.NotNil(t, tail)
	assert.NotEmpty(t, tail["cursor"])
	assert.Greater(t, len(recs), 512, "more than one chunk")
	assert.LessOrEqual(t, len(recs), 2500)
	// From the earliest offset: each bucket's records run 0, 1, 2, ...
	// with the values the chain read.
	byPos := map[string]scanRecord{}
	for _, r := range all {
		byPos[fmt.Sprintf("%d/%d", r.Bucket, r.Offset)] = r
	}
	next := map[int]int64{}
	for _, r := range recs {
		require.Equal(t, next[r.Bucket], r.Offset, "bucket %d", r.Bucket)
		next[r.Bucket]++
		assert.Equal(t, byPos[fmt.Sprintf("%d/%d", r.Bucket, r.Offset)], r)
	}
	assert.NotEmpty(t, firstAnswer.Records)
}
