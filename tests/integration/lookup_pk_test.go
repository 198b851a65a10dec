//go:build integration

package integration

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// lkAllTypes are wrAllTypes with a second primary-key column k after id.
var lkAllTypes = append([][2]string{wrAllTypes[0], {"k", "string NOT NULL"}}, wrAllTypes[1:]...)

// lkAllTypesRow returns row i as the peer's JSON and as the Datums a lookup
// must return.
func lkAllTypesRow(i int64) (map[string]any, []domain.Datum) {
	ts := time.Date(2024, 1, 2, 3, 4, 5, 123_000_000, time.UTC).Add(time.Duration(i) * 7 * time.Hour)
	bigdec, _ := new(big.Int).SetString("1234567890123456789012345678", 10)
	if i%2 == 1 {
		bigdec.Neg(bigdec)
	}
	by := []byte{0, 1, 2, byte(i)}
	bin := []byte{0xde, 0xad, 0xbe, byte(i)}
	js := map[string]any{
		"id": i, "k": fmt.Sprintf("k-%d", i%4),
		"b": i%2 == 1, "ti": -100 + i, "si": -30000 + i, "i": 2_000_000_000 - i,
		"f": 1.5 + float64(i), "d": 3.141592653589793 * float64(i+1),
		"dec":    fmt.Sprintf("%d.%02d", (1234567+i)/100, (1234567+i)%100),
		"bigdec": decString(bigdec, 4),
		"s":      fmt.Sprintf("héllo %d ✓", i),
		"by":     base64.StdEncoding.EncodeToString(by),
		"bin":    base64.StdEncoding.EncodeToString(bin),
		"dt":     ts.Format("2006-01-02"),
		"tm":     "03:04:05.678000",
		"ts":     ts.Format("2006-01-02T15:04:05.000000"),
		"ts6":    ts.Add(456 * time.Microsecond).Format("2006-01-02T15:04:05.000000"),
		"ltz":    ts.Format("2006-01-02T15:04:05.000000") + "+00:00",
	}
	row := []domain.Datum{
		{I64: i}, {Bytes: []byte(js["k"].(string))},
		{I64: i % 2}, {I64: -100 + i}, {I64: -30000 + i}, {I64: 2_000_000_000 - i},
		{F64: 1.5 + float64(i)}, {F64: 3.141592653589793 * float64(i+1)},
		{I64: 1234567 + i}, {Bytes: twosComplement(bigdec)},
		{Bytes: []byte(js["s"].(string))}, {Bytes: by}, {Bytes: bin},
		{I64: ts.Unix() / 86400}, {I64: 3*3600_000 + 4*60_000 + 5_000 + 678},
		{I64: ts.UnixMilli()}, {I64: ts.UnixMilli(), Nanos: 456_000}, {I64: ts.UnixMilli()},
	}
	return js, row
}

func decString(unscaled *big.Int, scale int) string {
	s := new(big.Int).Abs(unscaled).String()
	for len(s) <= scale {
		s = "0" + s
	}
	out := s[:len(s)-scale] + "." + s[len(s)-scale:]
	if unscaled.Sign() < 0 {
		out = "-" + out
	}
	return out
}

// twosComplement is java.math.BigInteger#toByteArray.
func twosComplement(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n = ~(n-1): take |n|-1, invert the bytes, keep a leading sign bit.
	m := new(big.Int).Sub(new(big.Int).Abs(n), big.NewInt(1)).Bytes()
	if len(m) == 0 || m[0]&0x80 != 0 {
		m = append([]byte{0}, m...)
	}
	for i := range m {
		m[i] = ^m[i]
	}
	return m
}

func fromTwosComplement(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return n
}

// lkRequireRow compares a looked-up row with the expected Datums column by
// column (DECIMAL(p>18) by value, since Bytes may differ in sign padding).
func lkRequireRow(t *testing.T, cols [][2]string, want, got []domain.Datum, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	for c := range want {
		name := cols[c][0]
		w, g := want[c], got[c]
		if w.Null {
			assert.True(t, g.Null, "%s column %s must be null", msg, name)
			continue
		}
		require.False(t, g.Null, "%s column %s must not be null", msg, name)
		switch name {
		case "bigdec":
			assert.Equal(t, fromTwosComplement(w.Bytes).String(), fromTwosComplement(g.Bytes).String(), "%s column %s", msg, name)
		default:
			assert.Equal(t, w.I64, g.I64, "%s column %s", msg, name)
			assert.Equal(t, w.Nanos, g.Nanos, "%s column %s", msg, name)
			assert.Equal(t, w.F64, g.F64, "%s column %s", msg, name)
			assert.Equal(t, string(w.Bytes), string(g.Bytes), "%s column %s", msg, name)
		}
	}
}

// TestLookupPKAllTypes writes rows of every scalar type with the peer into a
// table with a composite primary key over 5 buckets and checks that lookups
// return them value by value, in input order, with missing keys not found.
func TestLookupPKAllTypes(t *testing.T) {
	db := lkDatabase(t)
	path := lkCreateTable(t, db, "all_types", lkAllTypes, "--primary-key", "id,k", "--buckets", "5")
	const n = 40
	var rows []map[string]any
	want := map[int64][]domain.Datum{}
	for i := range int64(n) {
		js, r := lkAllTypesRow(i)
		rows = append(rows, js)
		want[i] = r
	}
	// A row that is null except for the key.
	rows = append(rows, map[string]any{"id": 999, "k": "nulls"})
	nulls := make([]domain.Datum, len(lkAllTypes))
	nulls[0], nulls[1] = domain.Datum{I64: 999}, domain.Datum{Bytes: []byte("nulls")}
	for c := 2; c < len(nulls); c++ {
		nulls[c].Null = true
	}
	want[999] = nulls
	lkUpsert(t, path, rows)

	e := lkNewEnv(t)
	ctx := lkCtx(t, 60*time.Second)
	type probe struct {
		key   []domain.Datum
		want  []domain.Datum // nil: not found
		label string
	}
	var probes []probe
	for i := range int64(n) {
		probes = append(probes, probe{want[i][:2], want[i], fmt.Sprintf("id %d", i)})
	}
	probes = append(probes,
		probe{nulls[:2], nulls, "null row"},
		probe{[]domain.Datum{{I64: 1000}, {Bytes: []byte("k-0")}}, nil, "missing id"},
		probe{[]domain.Datum{{I64: 3}, {Bytes: []byte("k-0")}}, nil, "existing id, other k"},
		probe{[]domain.Datum{{I64: 998}, {Bytes: []byte("")}}, nil, "empty string key"},
	)
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(probes), func(a, b int) { probes[a], probes[b] = probes[b], probes[a] })
	keys := make([][]domain.Datum, len(probes))
	for i, p := range probes {
		keys[i] = p.key
	}
	tb, err := e.cache.Table(ctx, path)
	require.NoError(t, err)
	resp, err := e.lk.Lookup(ctx, &domain.LookupRequest{Table: path, TableID: tb.ID(), SchemaID: tb.Info.SchemaID, Keys: keys})
	require.NoError(t, err)
	require.Len(t, resp.Results, len(probes))
	lkRequireOnePerNode(t, e.calls.take(), len(probes))
	assert.Equal(t, tb.Info.SchemaID, resp.SchemaID)
	for i, p := range probes {
		r := resp.Results[i]
		require.Nil(t, r.Err, "%s: %v", p.label, r.Err)
		if p.want == nil {
			assert.Nil(t, r.Row, "%s must not be found", p.label)
			continue
		}
		require.NotNil(t, r.Row, "%s must be found", p.label)
		lkRequireRow(t, lkAllTypes, p.want, r.Row, p.label)
	}
}

// TestLookupPartitioned128Keys checks 128 keys spread over buckets and
// partitions (one missing) in a shuffled order.
func TestLookupPartitioned128Keys(t *testing.T) {
	db := lkDatabase(t)
	cols := [][2]string{{"dt", "string NOT NULL"}, {"id", "int NOT NULL"}, {"v", "string"}}
	path := lkCreateTable(t, db, "parted", cols, "--primary-key", "dt,id", "--partition-key", "dt", "--buckets", "4")
	e := lkNewEnv(t)
	ctx := lkCtx(t, 90*time.Second)
	days := []string{"2024-01-01", "2024-01-02", "2024-01-03"}
	for _, d := range days {
		require.NoError(t, e.cat.CreatePartition(ctx, path, domain.PartitionSpec{{Key: "dt", Value: d}}, false))
	}
	var rows []map[string]any
	for _, d := range days {
		for id := range 40 {
			rows = append(rows, map[string]any{"dt": d, "id": id, "v": fmt.Sprintf("%s/%d", d, id)})
		}
	}
	lkUpsert(t, path, rows)

	rng := rand.New(rand.NewPCG(3, 4))
	all := append(days, "2024-02-30")
	keys := make([][]domain.Datum, 128)
	for i := range keys {
		keys[i] = []domain.Datum{{Bytes: []byte(all[rng.IntN(len(all))])}, {I64: int64(rng.IntN(48))}}
	}
	resp, err := e.lk.Lookup(ctx, &domain.LookupRequest{Table: path, Keys: keys})
	require.NoError(t, err)
	require.Len(t, resp.Results, 128)
	sent := 0 // keys of the missing partition are not sent
	for _, k := range keys {
		if string(k[0].Bytes) != "2024-02-30" {
			sent++
		}
	}
	lkRequireOnePerNode(t, e.calls.take(), sent)
	found := 0
	for i, k := range keys {
		r := resp.Results[i]
		require.Nil(t, r.Err, "key %d: %v", i, r.Err)
		d, id := string(k[0].Bytes), k[1].I64
		if d == "2024-02-30" || id >= 40 {
			assert.Nil(t, r.Row, "key %d (%s, %d)", i, d, id)
			continue
		}
		found++
		require.NotNil(t, r.Row, "key %d (%s, %d)", i, d, id)
		assert.Equal(t, d, string(r.Row[0].Bytes))
		assert.Equal(t, id, r.Row[1].I64)
		assert.Equal(t, fmt.Sprintf("%s/%d", d, id), string(r.Row[2].Bytes))
	}
	assert.Greater(t, found, 64)
	t.Logf("128 keys: %d found", found)

	// The peer client agrees on a few keys (of existing partitions).
	for i, k := range keys[:8] {
		if string(k[0].Bytes) == "2024-02-30" {
			continue
		}
		out := wrPeer(t, nil, "lookup", db, "parted", "--key", fmt.Sprintf(`{"dt":%q,"id":%d}`, k[0].Bytes, k[1].I64))
		var pr struct {
			Found bool           `json:"found"`
			Row   map[string]any `json:"row"`
		}
		require.NoError(t, json.Unmarshal(out, &pr), "%s", out)
		assert.Equal(t, resp.Results[i].Row != nil, pr.Found, "key %d", i)
		if pr.Found {
			assert.Equal(t, pr.Row["v"], string(resp.Results[i].Row[2].Bytes), "key %d", i)
		}
	}
}

// TestLookupAfterAddColumn checks that rows written before ALTER TABLE ADD
// COLUMN are rendered in the new schema (the column null) while newer rows
// carry it: the adapter fetches the old schema with GetTableSchema.
func TestLookupAfterAddColumn(t *testing.T) {
	db := lkDatabase(t)
	cols := [][2]string{{"id", "int NOT NULL"}, {"v", "string"}}
	path := lkCreateTable(t, db, "evolving", cols, "--primary-key", "id", "--buckets", "2")
	lkUpsert(t, path, []map[string]any{{"id": 1, "v": "one"}, {"id": 2, "v": "two"}})
	e := lkNewEnv(t)
	ctx := lkCtx(t, 60*time.Second)
	require.NoError(t, e.cat.AlterTable(ctx, path, []domain.TableChange{{Kind: domain.ChangeAddColumn,
		Column: domain.Column{Name: "extra", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: domain.UnassignedFieldID}}}, false))
	lkUpsert(t, path, []map[string]any{{"id": 3, "v": "three", "extra": "x"}, {"id": 2, "v": "two again", "extra": "y"}})

	tb, err := e.cache.Table(ctx, path)
	require.NoError(t, err)
	require.Greater(t, tb.Info.SchemaID, int32(1))
	keys := [][]domain.Datum{{{I64: 1}}, {{I64: 2}}, {{I64: 3}}, {{I64: 4}}}
	resp, err := e.lk.Lookup(ctx, &domain.LookupRequest{Table: path, TableID: tb.ID(), SchemaID: tb.Info.SchemaID, Keys: keys})
	require.NoError(t, err)
	require.Len(t, resp.Results, 4)
	for i, r := range resp.Results[:3] {
		require.Nil(t, r.Err, "key %d", i)
		require.Len(t, r.Row, 3, "key %d", i)
	}
	r := resp.Results
	assert.Equal(t, "one", string(r[0].Row[1].Bytes))
	assert.True(t, r[0].Row[2].Null, "row written under schema 1: extra is null")
	assert.Equal(t, "two again", string(r[1].Row[1].Bytes))
	assert.Equal(t, "y", string(r[1].Row[2].Bytes))
	assert.Equal(t, "x", string(r[2].Row[2].Bytes))
	assert.Nil(t, r[3].Row)

	// Rendered in the first schema, the new column is dropped.
	resp, err = e.lk.Lookup(ctx, &domain.LookupRequest{Table: path, SchemaID: 1, Keys: keys[:3]})
	require.NoError(t, err)
	assert.Equal(t, int32(1), resp.SchemaID)
	for i, r := range resp.Results {
		require.Nil(t, r.Err, "key %d", i)
		assert.Len(t, r.Row, 2, "key %d", i)
	}
}

// lkRequireOnePerNode checks that a call sent one request per tablet server
// (so a request covers all the buckets its node leads) and nKeys keys in all.
func lkRequireOnePerNode(t *testing.T, reqs []lkReq, nKeys int) {
	t.Helper()
	nodes := map[int32]bool{}
	keys, buckets := 0, 0
	for _, r := range reqs {
		assert.False(t, nodes[r.node], "two requests to node %d: %+v", r.node, reqs)
		nodes[r.node] = true
		keys += r.keys
		buckets += r.buckets
	}
	assert.Equal(t, nKeys, keys)
	assert.Greater(t, buckets, len(reqs), "some request covers several buckets: %+v", reqs)
	t.Logf("requests: %+v", reqs)
}

// TestLookupSpreadsOverTabletServers needs a cluster with several tablet
// servers (FLUSS_TABLET_SERVERS=3): 128 keys over 12 buckets go out as one
// request per tablet server, each covering several buckets.
func TestLookupSpreadsOverTabletServers(t *testing.T) {
	e := lkNewEnv(t)
	ctx := lkCtx(t, 90*time.Second)
	cl, err := e.client.Cluster(ctx)
	require.NoError(t, err)
	if len(cl.TabletServers) < 2 {
		t.Skipf("the cluster has %d tablet server(s); start it with FLUSS_TABLET_SERVERS=3", len(cl.TabletServers))
	}
	db := lkDatabase(t)
	cols := [][2]string{{"id", "int NOT NULL"}, {"v", "string"}}
	path := lkCreateTable(t, db, "spread", cols, "--primary-key", "id", "--buckets", "12")
	// Only ids below 128: their key is one byte < 0x80. The peer (pyfluss
	// 1.0, fluss-rust) hashes key tail bytes >= 0x80 zero-extended where the
	// Java client (and this gateway) sign-extends them, so it would store
	// e.g. id 128 in bucket 3 of 12 where Java looks in bucket 10.
	var rows []map[string]any
	for id := range 100 {
		rows = append(rows, map[string]any{"id": id, "v": fmt.Sprint("v", id)})
	}
	lkUpsert(t, path, rows)

	keys := make([][]domain.Datum, 128)
	for i := range keys {
		keys[i] = []domain.Datum{{I64: int64((i * 37) % 128)}}
	}
	resp, err := e.lk.Lookup(ctx, &domain.LookupRequest{Table: path, Keys: keys})
	require.NoError(t, err)
	reqs := e.calls.take()
	lkRequireOnePerNode(t, reqs, 128)
	assert.Greater(t, len(reqs), 1, "several tablet servers lead the 12 buckets")
	for i, k := range keys {
		r := resp.Results[i]
		require.Nil(t, r.Err, "key %d: %v", i, r.Err)
		if k[0].I64 >= 100 {
			assert.Nil(t, r.Row, "key %d", i)
			continue
		}
		if !assert.NotNil(t, r.Row, "key %d (id %d)", i, k[0].I64) {
			continue
		}
		assert.Equal(t, fmt.Sprint("v", k[0].I64), string(r.Row[1].Bytes))
	}
}
