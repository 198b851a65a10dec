//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func domainPath(db, table string) domain.TablePath {
	return domain.TablePath{Database: db, Table: table}
}

// scanTokenKey is the shared token key of the gateways of one test: cursors
// issued by one replica must be accepted by the other.
const scanTokenKey = "FLUSS_GATEWAY__SECURITY__TOKEN_KEY=scan-test-key-0123456789abcdef0123456789"

// scanRecord is one record of a scan answer.
type scanRecord struct {
	Partition  string         `json:"partition"`
	Bucket     int            `json:"bucket"`
	Offset     int64          `json:"offset"`
	Timestamp  string         `json:"timestamp"`
	ChangeType string         `json:"change_type"`
	Row        map[string]any `json:"row"`
}

type scanAnswer struct {
	Records  []scanRecord `json:"records"`
	Cursor   string       `json:"cursor"`
	CaughtUp bool         `json:"caught_up"`
}

// scan posts one scan request and decodes the answer (status 200 required).
func (g *gateway) scan(t *testing.T, db, table string, req map[string]any) scanAnswer {
	t.Helper()
	status, raw := g.raw(http.MethodPost, "/databases/"+db+"/tables/"+table+"/records/scan", req, "")
	require.Equal(t, http.StatusOK, status, "%s", raw)
	var a scanAnswer
	require.NoError(t, json.Unmarshal(raw, &a), "%s", raw)
	return a
}

// raw sends a request and returns the status and the body bytes.
func (g *gateway) raw(method, path string, body any, accept string) (int, []byte) {
	g.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(g.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.base+path, rd)
	require.NoError(g.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(g.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(g.t, err)
	return resp.StatusCode, b
}

// drain follows a cursor chain, alternating between the given gateways,
// until an answer is empty and caught up; it returns every record.
func drain(t *testing.T, gws []*gateway, db, table string, first map[string]any) ([]scanRecord, string) {
	t.Helper()
	var all []scanRecord
	req := first
	for i := 0; ; i++ {
		require.Less(t, i, 500, "cursor chain does not end")
		a := gws[i%len(gws)].scan(t, db, table, req)
		all = append(all, a.Records...)
		require.NotEmpty(t, a.Cursor)
		if len(a.Records) == 0 && a.CaughtUp {
			return all, a.Cursor
		}
		req = map[string]any{"cursor": a.Cursor, "max_rows": first["max_rows"]}
		if c, ok := first["columns"]; ok {
			req["columns"] = c
		}
	}
}

// checkOrder asserts offsets strictly increase per (partition, bucket) and
// no (partition, bucket, offset) repeats.
func checkOrder(t *testing.T, recs []scanRecord) {
	t.Helper()
	last := map[string]int64{}
	for _, r := range recs {
		k := fmt.Sprintf("%s/%d", r.Partition, r.Bucket)
		if prev, ok := last[k]; ok {
			require.Greater(t, r.Offset, prev, "offsets of %s out of order or repeated", k)
		}
		last[k] = r.Offset
	}
}

func createLogTable(t *testing.T, g *gateway, db, table string, buckets int, extra map[string]any) {
	t.Helper()
	fields := map[string]any{"distribution": map[string]any{"bucket_count": buckets}}
	for k, v := range extra {
		fields[k] = v
	}
	createTable(t, g.base, db, table, columns("id BIGINT", "msg STRING", "amount DECIMAL(10,2)"), fields)
}

// TestScanLogTableAcrossReplicas: rows appended by the peer client (pyfluss)
// and by the gateway are read back through a cursor chain that alternates
// between two gateway replicas sharing the token key: every record exactly
// once, in offset order per bucket, values rendered as lookups render them;
// offsets (earliest/latest) match the peer's; a projection returns only the
// named columns; NDJSON carries the same records and the cursor last.
func TestScanLogTableAcrossReplicas(t *testing.T) {
	g1 := startGateway(t, scanTokenKey)
	g2 := startGateway(t, scanTokenKey)
	db := newDatabase(t, g1, "gw_scan")
	createLogTable(t, g1, db, "events", 3, nil)
	// 30 rows by the peer, 20 by the gateway.
	var lines []string
	for i := 0; i < 30; i++ {
		lines = append(lines, fmt.Sprintf(`{"id": %d, "msg": "peer-%d", "amount": "%d.25"}`, i, i, i))
	}
	wrPeer(t, []byte(strings.Join(lines, "\n")), "append", db, "events", "--rows-stdin")
	var entries []any
	for i := 30; i < 50; i++ {
		entries = append(entries, map[string]any{"id": fmt.Sprint(i), "append": map[string]any{"id": i, "msg": fmt.Sprintf("gw-%d", i), "amount": fmt.Sprintf("%d.25", i)}})
	}
	status, body := g1.do(http.MethodPost, "/databases/"+db+"/tables/events/records", map[string]any{"entries": entries})
	require.Equal(t, http.StatusOK, status, "%v", body)

	// Offsets agree with the peer's.
	peer := peerCmd(t, "offsets", db, "events")
	status, body = g2.do(http.MethodGet, "/databases/"+db+"/tables/events/offsets?position=latest", nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	latest := map[int]int64{}
	var total int64
	for _, o := range body["offsets"].([]any) {
		m := o.(map[string]any)
		_, hasPartition := m["partition"]
		assert.False(t, hasPartition, "no partition field for a non-partitioned table")
		latest[int(m["bucket"].(float64))] = int64(m["offset"].(float64))
		total += int64(m["offset"].(float64))
	}
	assert.EqualValues(t, 50, total)
	for _, b := range peer["buckets"].([]any) {
		m := b.(map[string]any)
		assert.EqualValues(t, m["latest"], latest[int(m["bucket"].(float64))], "bucket %v", m["bucket"])
	}
	status, body = g1.do(http.MethodGet, "/databases/"+db+"/tables/events/offsets?position=earliest", nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	for _, o := range body["offsets"].([]any) {
		assert.EqualValues(t, 0, o.(map[string]any)["offset"])
	}

	// The whole log, 7 rows per answer, alternating replicas.
	recs, cursor := drain(t, []*gateway{g1, g2}, db, "events", map[string]any{"start": map[string]any{"position": "earliest"}, "max_rows": 7})
	require.Len(t, recs, 50)
	checkOrder(t, recs)
	seen := map[int]bool{}
	for _, r := range recs {
		assert.Equal(t, "+A", r.ChangeType)
		var id int
		_, err := fmt.Sscan(fmt.Sprint(r.Row["id"]), &id)
		require.NoError(t, err, "%v", r.Row)
		assert.False(t, seen[id], "id %v twice", id)
		seen[id] = true
		want := fmt.Sprintf("peer-%d", id)
		if id >= 30 {
			want = fmt.Sprintf("gw-%d", id)
		}
		assert.Equal(t, want, r.Row["msg"])
		assert.Equal(t, fmt.Sprintf("%d.25", id), r.Row["amount"], "decimals render as lookups render them")
		_, err = time.Parse(time.RFC3339Nano, r.Timestamp)
		assert.NoError(t, err)
	}
	// The peer reads the same records at the same offsets.
	peerRecs := wrScan(t, domainPath(db, "events"))
	require.Len(t, peerRecs, 50)
	byPos := map[string]scanRecord{}
	for _, r := range recs {
		byPos[fmt.Sprintf("%d/%d", r.Bucket, r.Offset)] = r
	}
	for _, p := range peerRecs {
		r, ok := byPos[fmt.Sprintf("%d/%d", p.Bucket, p.Offset)]
		require.True(t, ok, "peer record %+v not scanned", p)
		assert.Equal(t, fmt.Sprint(p.Row["id"]), fmt.Sprint(r.Row["id"]))
		assert.Equal(t, p.ChangeType, r.ChangeType)
	}

	// The final cursor sees rows written afterwards, and only those.
	status, body = g2.do(http.MethodPost, "/databases/"+db+"/tables/events/records", map[string]any{"entries": []any{
		map[string]any{"id": "late", "append": map[string]any{"id": 50, "msg": "late", "amount": "1.00"}}}})
	require.Equal(t, http.StatusOK, status, "%v", body)
	a := g1.scan(t, db, "events", map[string]any{"cursor": cursor})
	require.Len(t, a.Records, 1)
	assert.Equal(t, "late", a.Records[0].Row["msg"])
	assert.True(t, a.CaughtUp)

	// Latest start: nothing, caught up.
	a = g2.scan(t, db, "events", map[string]any{"start": map[string]any{"position": "latest"}})
	assert.Empty(t, a.Records)
	assert.True(t, a.CaughtUp)

	// Projection: only the named columns, in the named order.
	a = g1.scan(t, db, "events", map[string]any{"start": map[string]any{"position": "earliest"}, "columns": []any{"msg", "id"}, "max_rows": 100})
	require.Len(t, a.Records, 51)
	for _, r := range a.Records {
		require.Len(t, r.Row, 2, "%v", r.Row)
		assert.Contains(t, r.Row, "msg")
	}
	// The projection is bound to the cursor.
	status, raw := g1.raw(http.MethodPost, "/databases/"+db+"/tables/events/records/scan", map[string]any{"cursor": a.Cursor, "columns": []any{"id"}}, "")
	assert.Equal(t, http.StatusBadRequest, status, "%s", raw)
	assert.Contains(t, string(raw), "projection")

	// Buckets: only bucket 1 (whose end moved if the late row went there).
	status, body = g1.do(http.MethodGet, "/databases/"+db+"/tables/events/offsets?position=latest", nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	end1 := body["offsets"].([]any)[1].(map[string]any)["offset"]
	a = g1.scan(t, db, "events", map[string]any{"start": map[string]any{"position": "earliest"}, "buckets": []any{1}, "max_rows": 100})
	assert.EqualValues(t, end1, len(a.Records))
	for _, r := range a.Records {
		assert.Equal(t, 1, r.Bucket)
	}

	// NDJSON: one record per line, the cursor last.
	status, raw = g2.raw(http.MethodPost, "/databases/"+db+"/tables/events/records/scan",
		map[string]any{"start": map[string]any{"position": "earliest"}, "max_rows": 10}, "application/x-ndjson")
	require.Equal(t, http.StatusOK, status, "%s", raw)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	var n int
	var tail map[string]any
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "%s", sc.Bytes())
		if _, ok := m["cursor"]; ok {
			tail = m
			continue
		}
		require.Nil(t, tail, "a record after the cursor line")
		n++
	}
	assert.Equal(t, 10, n)
	require.NotNil(t, tail)
	assert.Equal(t, false, tail["caught_up"])
}

// TestScanCursorRefusals: a tampered cursor, one of another table, one of a
// table dropped and re-created since, and one from a gateway with another
// token key are 400 invalid_argument naming why; an unknown column,
// both start and cursor, and neither are 400 too.
func TestScanCursorRefusals(t *testing.T) {
	g := startGateway(t, scanTokenKey)
	other := startGateway(t, "FLUSS_GATEWAY__SECURITY__TOKEN_KEY=another-key-0123456789abcdef0123456789")
	db := newDatabase(t, g, "gw_scanref")
	createLogTable(t, g, db, "a", 1, nil)
	createLogTable(t, g, db, "b", 1, nil)
	a := g.scan(t, db, "a", map[string]any{"start": map[string]any{"position": "earliest"}})

	refuse := func(gw *gateway, table string, body map[string]any, why string) {
		t.Helper()
		status, raw := gw.raw(http.MethodPost, "/databases/"+db+"/tables/"+table+"/records/scan", body, "")
		require.Equal(t, http.StatusBadRequest, status, "%s", raw)
		var env struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(raw, &env))
		assert.Equal(t, "invalid_argument", env.Error.Code, "%s", raw)
		assert.Contains(t, string(raw), why)
	}
	tampered := []byte(a.Cursor)
	tampered[len(tampered)/2] ^= 1
	if tampered[len(tampered)/2] == '-' || tampered[len(tampered)/2] == '_' {
		tampered[len(tampered)/2] = 'A'
	}
	refuse(g, "a", map[string]any{"cursor": string(tampered)}, "altered")
	refuse(g, "b", map[string]any{"cursor": a.Cursor}, "another table")
	refuse(other, "a", map[string]any{"cursor": a.Cursor}, "token-key")
	refuse(g, "a", map[string]any{"cursor": a.Cursor, "start": map[string]any{"position": "earliest"}}, "exactly one")
	refuse(g, "a", map[string]any{}, "exactly one")
	refuse(g, "a", map[string]any{"start": map[string]any{"position": "earliest"}, "columns": []any{"nope"}}, "no column `nope`")
	refuse(g, "a", map[string]any{"start": map[string]any{"position": "sometime"}}, "start.position")

	// Dropped and re-created: the cursor is refused, no rows of the new table.
	status, body := g.do(http.MethodDelete, "/databases/"+db+"/tables/a", nil)
	require.Equal(t, http.StatusNoContent, status, "%v", body)
	createLogTable(t, g, db, "a", 1, nil)
	refuse(g, "a", map[string]any{"cursor": a.Cursor}, "re-created")
}

// TestScanChangelog: the changelog of a primary-key table, written by the
// gateway (insert, update, delete) and by the peer (upsert): +I, -U/+U, -D
// in offset order, the same records the peer's log scanner reads.
func TestScanChangelog(t *testing.T) {
	g := startGateway(t, scanTokenKey)
	db := newDatabase(t, g, "gw_changelog")
	createTable(t, g.base, db, "kv", columns("id INTEGER NOT NULL", "name STRING"),
		map[string]any{"primary_key": []any{"id"}, "distribution": map[string]any{"bucket_count": 1}})
	write := func(entries ...any) {
		t.Helper()
		status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/kv/records", map[string]any{"entries": entries})
		require.Equal(t, http.StatusOK, status, "%v", body)
		require.EqualValues(t, len(entries), body["success_count"], "%v", body)
	}
	write(map[string]any{"id": "1", "upsert": map[string]any{"id": 1, "name": "one"}},
		map[string]any{"id": "2", "upsert": map[string]any{"id": 2, "name": "two"}})
	write(map[string]any{"id": "3", "upsert": map[string]any{"id": 1, "name": "uno"}})
	write(map[string]any{"id": "4", "delete": map[string]any{"id": 2}})
	wrPeer(t, nil, "upsert", db, "kv", "--row", `{"id": 3, "name": "three"}`)

	recs, _ := drain(t, []*gateway{g}, db, "kv", map[string]any{"start": map[string]any{"position": "earliest"}, "max_rows": 2})
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s %v %v", r.ChangeType, r.Row["id"], r.Row["name"]))
	}
	assert.Equal(t, []string{"+I 1 one", "+I 2 two", "-U 1 one", "+U 1 uno", "-D 2 two", "+I 3 three"}, got)
	checkOrder(t, recs)

	peerRecs := wrScan(t, domainPath(db, "kv"))
	sort.Slice(peerRecs, func(i, j int) bool { return peerRecs[i].Offset < peerRecs[j].Offset })
	require.Len(t, peerRecs, len(recs))
	for i, p := range peerRecs {
		assert.Equal(t, p.Offset, recs[i].Offset)
		assert.Equal(t, p.ChangeType, recs[i].ChangeType)
		assert.EqualValues(t, p.Row["name"], recs[i].Row["name"])
	}
}

func appendRows(t *testing.T, g *gateway, db, table string, rows ...map[string]any) {
	t.Helper()
	var entries []any
	for i, r := range rows {
		entries = append(entries, map[string]any{"id": fmt.Sprint(i), "append": r})
	}
	status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/"+table+"/records", map[string]any{"entries": entries})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.EqualValues(t, len(rows), body["success_count"], "%v", body)
}

// TestScanPartitions: a partitioned log table read across all partitions,
// records naming their partition; a partition created while consuming is
// read from its earliest offset by the same cursor chain; `partitions`
// restricts the scan; offsets list every partition's buckets.
func TestScanPartitions(t *testing.T) {
	g := startGateway(t, scanTokenKey)
	db := newDatabase(t, g, "gw_scanpart")
	createTable(t, g.base, db, "clicks", columns("id INTEGER", "day STRING"),
		map[string]any{"partitioned_by": []any{"day"}, "distribution": map[string]any{"bucket_count": 2}})
	for _, day := range []string{"d1", "d2"} {
		status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/clicks/partitions", map[string]any{"partition": map[string]any{"day": day}})
		require.Equal(t, http.StatusCreated, status, "%v", body)
	}
	var rows []map[string]any
	for i := 0; i < 10; i++ {
		rows = append(rows, map[string]any{"id": i, "day": []string{"d1", "d2"}[i%2]})
	}
	appendRows(t, g, db, "clicks", rows...)

	status, body := g.do(http.MethodGet, "/databases/"+db+"/tables/clicks/offsets?position=latest", nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	offs := body["offsets"].([]any)
	require.Len(t, offs, 4, "2 partitions x 2 buckets: %v", body)
	assert.Equal(t, "d1", offs[0].(map[string]any)["partition"])

	recs, cursor := drain(t, []*gateway{g}, db, "clicks", map[string]any{"start": map[string]any{"position": "earliest"}, "max_rows": 3})
	require.Len(t, recs, 10)
	checkOrder(t, recs)
	for _, r := range recs {
		assert.Equal(t, r.Row["day"], r.Partition)
	}

	// A partition created while consuming (by a write) is read from its
	// earliest offset by the same cursor chain.
	appendRows(t, g, db, "clicks", map[string]any{"id": 100, "day": "d3"}, map[string]any{"id": 101, "day": "d1"})
	a := g.scan(t, db, "clicks", map[string]any{"cursor": cursor})
	got := map[string]bool{}
	for _, r := range a.Records {
		got[fmt.Sprintf("%s/%v", r.Partition, r.Row["id"])] = true
	}
	assert.Equal(t, map[string]bool{"d3/100": true, "d1/101": true}, got)

	// `partitions` restricts.
	a = g.scan(t, db, "clicks", map[string]any{"start": map[string]any{"position": "earliest"}, "partitions": []any{"d2"}, "max_rows": 100})
	require.Len(t, a.Records, 5)
	for _, r := range a.Records {
		assert.Equal(t, "d2", r.Partition)
	}
	status, raw := g.raw(http.MethodPost, "/databases/"+db+"/tables/clicks/records/scan",
		map[string]any{"start": map[string]any{"position": "earliest"}, "partitions": []any{"nope"}}, "")
	assert.Equal(t, http.StatusNotFound, status, "%s", raw)
}

// TestScanTimestampAndLongPoll: a timestamp start reads only the records
// committed at or after it (offsets by timestamp agree); a long poll
// answers soon after a write, and an empty one when its wait ends.
func TestScanTimestampAndLongPoll(t *testing.T) {
	g := startGateway(t, scanTokenKey)
	db := newDatabase(t, g, "gw_scants")
	createLogTable(t, g, db, "ev", 2, nil)
	appendRows(t, g, db, "ev", map[string]any{"id": 1, "msg": "old"}, map[string]any{"id": 2, "msg": "old"})
	time.Sleep(1100 * time.Millisecond)
	ts := time.Now().UTC()
	time.Sleep(50 * time.Millisecond)
	appendRows(t, g, db, "ev", map[string]any{"id": 3, "msg": "new"}, map[string]any{"id": 4, "msg": "new"})

	for _, start := range []any{ts.Format(time.RFC3339Nano), ts.UnixMilli()} {
		a := g.scan(t, db, "ev", map[string]any{"start": map[string]any{"position": "timestamp", "timestamp": start}})
		require.Len(t, a.Records, 2, "start %v: %+v", start, a.Records)
		for _, r := range a.Records {
			assert.Equal(t, "new", r.Row["msg"])
		}
	}
	status, body := g.do(http.MethodGet, fmt.Sprintf("/databases/%s/tables/ev/offsets?position=timestamp&timestamp=%d", db, ts.UnixMilli()), nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	var sum float64
	for _, o := range body["offsets"].([]any) {
		sum += o.(map[string]any)["offset"].(float64)
	}
	assert.EqualValues(t, 2, sum, "the old records precede the timestamp: %v", body)

	// An empty long poll waits and ends empty.
	began := time.Now()
	a := g.scan(t, db, "ev", map[string]any{"start": map[string]any{"position": "latest"}, "max_wait_ms": 600})
	assert.Empty(t, a.Records)
	assert.GreaterOrEqual(t, time.Since(began), 500*time.Millisecond)
	assert.True(t, a.CaughtUp)

	// A long poll answers soon after a write.
	done := startLongPoll(g, db, "ev", a.Cursor)
	time.Sleep(700 * time.Millisecond)
	wrote := time.Now()
	appendRows(t, g, db, "ev", map[string]any{"id": 5, "msg": "polled"})
	r := <-done
	require.NoError(t, r.err)
	require.Len(t, r.a.Records, 1)
	assert.Equal(t, "polled", r.a.Records[0].Row["msg"])
	latency := r.at.Sub(wrote)
	t.Logf("long poll: answer %s after the write was sent", latency)
	assert.Less(t, latency, time.Second)
}

// scanPoll is the answer to a long-polling scan and when it came.
type scanPoll struct {
	a   scanAnswer
	at  time.Time
	err error
}

// startLongPoll sends a scan of db.table from cursor with a 10 s long poll
// (max_wait_ms) in the background; the channel delivers its answer.
func startLongPoll(g *gateway, db, table, cursor string) <-chan scanPoll {
	done := make(chan scanPoll, 1)
	go func() {
		b, _ := json.Marshal(map[string]any{"cursor": cursor, "max_wait_ms": 10000})
		resp, err := http.Post(g.base+"/databases/"+db+"/tables/"+table+"/records/scan", "application/json", bytes.NewReader(b))
		if err != nil {
			done <- scanPoll{err: err}
			return
		}
		defer resp.Body.Close()
		var r scanPoll
		r.err = json.NewDecoder(resp.Body).Decode(&r.a)
		r.at = time.Now()
		done <- r
	}()
	return done
}
