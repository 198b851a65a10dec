//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeWithPositions posts a write with X-Fluss-Write-Positions: true and
// returns its successes.
func (g *gateway) writeWithPositions(t *testing.T, db, table string, entries []any) []map[string]any {
	t.Helper()
	b, err := json.Marshal(map[string]any{"entries": entries})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, g.base+"/databases/"+db+"/tables/"+table+"/records", bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Fluss-Write-Positions", "true")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	var out struct {
		SuccessCount int              `json:"success_count"`
		Successes    []map[string]any `json:"successes"`
	}
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	require.Equal(t, len(entries), out.SuccessCount, "%s", raw)
	return out.Successes
}

// TestWritePositionsReadBack: the offsets a write answers (with
// X-Fluss-Write-Positions) are where the rows are: the peer client's log
// scanner finds each row at its (bucket, offset), a gateway scan started
// at those offsets returns the row first; for a primary-key table each
// success carries the changelog's end offset after its batch, which the
// latest offsets and the peer's changelog agree with.
func TestWritePositionsReadBack(t *testing.T) {
	g := startGateway(t, scanTokenKey)
	db := newDatabase(t, g, "gw_wpos")
	createLogTable(t, g, db, "ev", 2, nil)

	type pos struct {
		bucket int
		offset int64
	}
	at := map[string]pos{} // row id -> where the write said it landed
	for round := 0; round < 3; round++ {
		var entries []any
		for i := 0; i < 7; i++ {
			id := round*10 + i
			entries = append(entries, map[string]any{"id": fmt.Sprint(id), "append": map[string]any{"id": id, "msg": fmt.Sprintf("m%d", id), "amount": "1.00"}})
		}
		for _, s := range g.writeWithPositions(t, db, "ev", entries) {
			_, hasPartition := s["partition"]
			assert.False(t, hasPartition, "%v", s)
			require.Contains(t, s, "offset", "%v", s)
			at[s["id"].(string)] = pos{int(s["bucket"].(float64)), int64(s["offset"].(float64))}
		}
	}
	require.Len(t, at, 21)

	// The peer finds each row where the write said.
	peer := map[pos]string{}
	for _, r := range wrScan(t, domainPath(db, "ev")) {
		peer[pos{r.Bucket, r.Offset}] = fmt.Sprint(r.Row["id"])
	}
	require.Len(t, peer, 21)
	for id, p := range at {
		assert.Equal(t, id, peer[p], "row %s at bucket %d offset %d", id, p.bucket, p.offset)
	}

	// A scan started at a row's offset returns that row first in its bucket.
	for _, id := range []string{"0", "13", "26"} {
		p := at[id]
		a := g.scan(t, db, "ev", map[string]any{"start": map[string]any{"position": "offsets",
			"offsets": []any{map[string]any{"bucket": p.bucket, "offset": p.offset}}}, "max_rows": 100})
		require.NotEmpty(t, a.Records, "row %s", id)
		first := a.Records[0]
		assert.Equal(t, p.bucket, first.Bucket)
		assert.Equal(t, p.offset, first.Offset)
		assert.Equal(t, id, fmt.Sprint(first.Row["id"]))
		for _, r := range a.Records {
			assert.Equal(t, p.bucket, r.Bucket, "only the named bucket's records from its offset; the others from latest")
		}
	}

	// A primary-key table: the changelog's end offset after each batch.
	createTable(t, g.base, db, "kv", columns("id INTEGER NOT NULL", "name STRING"),
		map[string]any{"primary_key": []any{"id"}, "distribution": map[string]any{"bucket_count": 1}})
	s1 := g.writeWithPositions(t, db, "kv", []any{
		map[string]any{"id": "a", "upsert": map[string]any{"id": 1, "name": "one"}},
		map[string]any{"id": "b", "upsert": map[string]any{"id": 2, "name": "two"}}})
	s2 := g.writeWithPositions(t, db, "kv", []any{map[string]any{"id": "c", "upsert": map[string]any{"id": 1, "name": "uno"}}})
	for _, s := range append(s1, s2...) {
		require.Contains(t, s, "log_end_offset", "%v", s)
		assert.NotContains(t, s, "offset", "a primary-key row has no exact offset: %v", s)
		assert.EqualValues(t, 0, s["bucket"])
	}
	// +I 1, +I 2 (offsets 0, 1), then -U 1, +U 1 (2, 3).
	assert.EqualValues(t, 2, s1[0]["log_end_offset"])
	assert.EqualValues(t, 4, s2[0]["log_end_offset"])
	status, body := g.do(http.MethodGet, "/databases/"+db+"/tables/kv/offsets?position=latest", nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	assert.EqualValues(t, 4, body["offsets"].([]any)[0].(map[string]any)["offset"])
	var below int
	for _, r := range wrScan(t, domainPath(db, "kv")) {
		if r.Offset < 4 {
			below++
		}
	}
	assert.Equal(t, 4, below, "the peer's changelog has the four changes below the end offset")
}
