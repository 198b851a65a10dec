//go:build integration

package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/internal/testlog"
)

// Streamed answers (issues 25 and 23) against a real cluster: the NDJSON
// verdict lines of a write arrive while its body is still being sent, and
// an NDJSON scan sends its records one per line with the cursor last; the
// peer client reads the rows back, and writes rows the streamed scan reads.

func TestGatewayStreamedVerdictsAndScan(t *testing.T) {
	g := startGateway(t)
	db := wrDatabase(t)
	path := wrCreateTable(t, db, "streamed", ingestLogCols, "--buckets", "2")
	url := g.base + "/databases/" + db + "/tables/streamed/records"

	// (a) The first entry's verdict arrives before the rest of the body is
	// sent; then 2,000 more lines, an invalid entry and a line that is not
	// JSON, which ends the stream with the error envelope.
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, url, pr)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("Accept", "application/x-ndjson")
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		assert.NoError(t, err)
		answered <- resp
	}()
	_, err = io.WriteString(pw, ingestLine(0)+"\n")
	require.NoError(t, err)
	resp := <-answered
	require.NotNil(t, resp)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	body := bufio.NewReader(resp.Body)
	assert.JSONEq(t, `{"line":1,"id":"e0","ok":true}`, testlog.ReadLine(t, body, 60*time.Second), "the first verdict, the body still open")

	const n = 2000
	go func() {
		w := bufio.NewWriter(pw)
		for i := 1; i <= n; i++ {
			_, _ = w.WriteString(ingestLine(i) + "\n")
		}
		_, _ = w.WriteString(`{"id":"bad","append":{"nope":1}}` + "\n{not json\n" + ingestLine(n+1) + "\n")
		_ = pw.CloseWithError(w.Flush())
	}()
	ok := 1
	var lines []string
	for {
		line, err := body.ReadString('\n')
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		lines = append(lines, line)
	}
	require.Len(t, lines, n+2, "n verdicts, the invalid entry's, the error line")
	for i, line := range lines[:n] {
		var v struct {
			Line int    `json:"line"`
			ID   string `json:"id"`
			OK   bool   `json:"ok"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &v), line)
		require.Equal(t, i+2, v.Line)
		require.Equal(t, fmt.Sprintf("e%d", i+1), v.ID)
		if v.OK {
			ok++
		}
	}
	assert.Equal(t, n+1, ok)
	assert.Contains(t, lines[n], `"id":"bad","ok":false,"error_code":"invalid_argument"`)
	var env struct {
		Error struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[n+1]), &env), lines[n+1])
	assert.Equal(t, "invalid_argument", env.Error.Code)
	assert.Contains(t, env.Error.Message, fmt.Sprintf("line %d", n+3))
	assert.Equal(t, resp.Header.Get("X-Request-Id"), env.Error.RequestID)

	// The peer reads exactly the rows written: e0..e2000.
	got := wrScan(t, path)
	require.Len(t, got, n+1)
	seen := map[int64]bool{}
	for _, r := range got {
		id := int64(r.Row["id"].(float64))
		seen[id] = true
		assert.Equal(t, fmt.Sprintf("row %d", id), r.Row["s"])
	}
	assert.Len(t, seen, n+1)

	// Rows written by the peer, read with the rest by a streamed scan.
	var peerRows []string
	for i := n + 10; i < n+20; i++ {
		peerRows = append(peerRows, fmt.Sprintf(`{"id": %d, "s": "peer %d", "v": 1.5}`, i, i))
	}
	wrPeer(t, []byte(strings.Join(peerRows, "\n")), "append", db, "streamed", "--rows-stdin")

	// (b) The streamed scan: one record per line, the cursor last.
	total := 0
	ids := map[int64]bool{}
	cursor := ""
	for round := 0; round < 50 && total < n+11; round++ {
		var scanReq map[string]any
		if cursor == "" {
			scanReq = map[string]any{"start": map[string]any{"position": "earliest"}, "max_rows": 5000}
		} else {
			scanReq = map[string]any{"cursor": cursor, "max_rows": 5000}
		}
		b, _ := json.Marshal(scanReq)
		sreq, err := http.NewRequest(http.MethodPost, url+"/scan", strings.NewReader(string(b)))
		require.NoError(t, err)
		sreq.Header.Set("Content-Type", "application/json")
		sreq.Header.Set("Accept", "application/x-ndjson")
		sresp, err := http.DefaultClient.Do(sreq)
		require.NoError(t, err)
		require.Equal(t, 200, sresp.StatusCode)
		assert.Equal(t, "application/x-ndjson", sresp.Header.Get("Content-Type"))
		sc := bufio.NewScanner(sresp.Body)
		sc.Buffer(nil, 1<<20)
		var last map[string]any
		for sc.Scan() {
			var m map[string]any
			require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
			if _, isCursor := m["cursor"]; isCursor {
				last = m
				continue
			}
			require.Nil(t, last, "no record after the cursor line")
			row := m["row"].(map[string]any)
			id, err := strconv.ParseInt(fmt.Sprint(row["id"]), 10, 64) // BIGINT renders as a string
			require.NoError(t, err)
			assert.False(t, ids[id], "record %d once", id)
			ids[id] = true
			total++
			assert.Equal(t, "+A", m["change_type"])
		}
		require.NoError(t, sc.Err())
		_ = sresp.Body.Close()
		require.NotNil(t, last, "the cursor line ends the answer")
		cursor = last["cursor"].(string)
	}
	assert.Equal(t, n+11, total, "the gateway's rows and the peer's")
	for i := n + 10; i < n+20; i++ {
		assert.True(t, ids[int64(i)], "peer row %d", i)
	}
}
