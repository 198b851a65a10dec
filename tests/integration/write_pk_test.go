//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

var wrAllTypes = [][2]string{
	{"id", "bigint NOT NULL"},
	{"b", "boolean"},
	{"ti", "tinyint"},
	{"si", "smallint"},
	{"i", "int"},
	{"f", "float"},
	{"d", "double"},
	{"dec", "decimal(10,2)"},
	{"bigdec", "decimal(30,4)"},
	{"s", "string"},
	{"by", "bytes"},
	{"bin", "binary(4)"},
	{"dt", "date"},
	{"tm", "time(3)"},
	{"ts", "timestamp(3)"},
	{"ts6", "timestamp(6)"},
	{"ltz", "timestamp_ltz(3)"},
}

func bigBytes(s string) []byte {
	n, _ := new(big.Int).SetString(s, 10)
	b := n.Bytes() // magnitude; positive values here, add a sign byte if needed
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return b
}

// wrAllTypesRow builds row i and the JSON values the peer should return.
func wrAllTypesRow(i int64) ([]domain.Datum, map[string]any) {
	ts := time.Date(2024, 1, 2, 3, 4, 5, 123_000_000, time.UTC).Add(time.Duration(i) * time.Hour)
	day := ts.Unix() / 86400
	row := []domain.Datum{
		{I64: i},
		{I64: i % 2},
		{I64: -100 + i%200},
		{I64: -30000 + i},
		{I64: 2_000_000_000 - i},
		{F64: 1.5 + float64(i)},
		{F64: 3.141592653589793 * float64(i+1)},
		{I64: 1234567 + i}, // 12345.67 + i/100
		{Bytes: bigBytes("1234567890123456789012345678")}, // 123456789012345678901234.5678
		{Bytes: []byte(fmt.Sprintf("héllo %d ✓", i))},
		{Bytes: []byte{0, 1, 2, byte(i)}},
		{Bytes: []byte{0xde, 0xad, 0xbe, byte(i)}},
		{I64: day},
		{I64: 3*3600_000 + 4*60_000 + 5_000 + 678},
		{I64: ts.UnixMilli()},
		{I64: ts.UnixMilli(), Nanos: 456_000},
		{I64: ts.UnixMilli()},
	}
	want := map[string]any{
		"id":     float64(i),
		"b":      i%2 == 1,
		"ti":     float64(-100 + i%200),
		"si":     float64(-30000 + i),
		"i":      float64(2_000_000_000 - i),
		"f":      1.5 + float64(i),
		"d":      3.141592653589793 * float64(i+1),
		"dec":    fmt.Sprintf("%d.%02d", (1234567+i)/100, (1234567+i)%100),
		"bigdec": "123456789012345678901234.5678",
		"s":      fmt.Sprintf("héllo %d ✓", i),
		"by":     b64([]byte{0, 1, 2, byte(i)}),
		"bin":    b64([]byte{0xde, 0xad, 0xbe, byte(i)}),
		"dt":     ts.Format("2006-01-02"),
		"tm":     "03:04:05.678000",
		"ts":     ts.Format("2006-01-02T15:04:05.000000"),
		"ts6":    ts.Add(456 * time.Microsecond).Format("2006-01-02T15:04:05.000000"),
		"ltz":    ts.Format("2006-01-02T15:04:05.000000") + "+00:00",
	}
	return row, want
}

func b64(b []byte) string {
	out, _ := json.Marshal(b)
	return string(out[1 : len(out)-1])
}

func TestWritePKAllTypesUpsertDeletePartial(t *testing.T) {
	db := wrDatabase(t)
	path := wrCreateTable(t, db, "all_types", wrAllTypes, "--primary-key", "id", "--buckets", "3")
	e := wrNewWriter(t, writer.Options{})
	ctx := wrCtx(t, 60*time.Second)

	var entries []domain.WriteEntry
	wants := map[int64]map[string]any{}
	for i := range int64(5) {
		row, want := wrAllTypesRow(i)
		entries = append(entries, domain.WriteEntry{Op: domain.OpUpsert, Row: row})
		wants[i] = want
	}
	// A row of nulls (except the key).
	nulls := make([]domain.Datum, len(wrAllTypes))
	nulls[0] = domain.Datum{I64: 99}
	for j := 1; j < len(nulls); j++ {
		nulls[j].Null = true
	}
	entries = append(entries, domain.WriteEntry{Op: domain.OpUpsert, Row: nulls})
	wrRequireOK(t, e.write(t, ctx, &domain.WriteBatch{Table: path, Entries: entries}))

	for i, want := range wants {
		got := wrLookup(t, path, fmt.Sprintf(`{"id":%d}`, i))
		require.NotNil(t, got, "key %d", i)
		for k, v := range want {
			assert.Equal(t, v, got[k], "key %d column %s", i, k)
		}
	}
	got := wrLookup(t, path, `{"id":99}`)
	require.NotNil(t, got)
	for _, c := range wrAllTypes[1:] {
		assert.Nil(t, got[c[0]], "column %s", c[0])
	}

	// Delete key 1 and 99.
	delRow := func(id int64) domain.WriteEntry {
		r := make([]domain.Datum, len(wrAllTypes))
		r[0] = domain.Datum{I64: id}
		for j := 1; j < len(r); j++ {
			r[j].Null = true
		}
		return domain.WriteEntry{Op: domain.OpDelete, Row: r}
	}
	wrRequireOK(t, e.write(t, ctx, &domain.WriteBatch{Table: path, Entries: []domain.WriteEntry{delRow(1), delRow(99)}}))
	assert.Nil(t, wrLookup(t, path, `{"id":1}`))
	assert.Nil(t, wrLookup(t, path, `{"id":99}`))

	// Partial update of key 2: only `s` and `i` change.
	partial := make([]domain.Datum, len(wrAllTypes))
	for j := range partial {
		partial[j].Null = true
	}
	partial[0] = domain.Datum{I64: 2}
	partial[4] = domain.Datum{I64: 7}
	partial[9] = domain.Datum{Bytes: []byte("partially updated")}
	wrRequireOK(t, e.write(t, ctx, &domain.WriteBatch{Table: path, PartialUpdateColumns: []int{0, 4, 9},
		Entries: []domain.WriteEntry{{Op: domain.OpUpsert, Row: partial}}}))
	got = wrLookup(t, path, `{"id":2}`)
	require.NotNil(t, got)
	for k, v := range wants[2] {
		switch k {
		case "i":
			assert.Equal(t, float64(7), got[k])
		case "s":
			assert.Equal(t, "partially updated", got[k])
		default:
			assert.Equal(t, v, got[k], "column %s kept", k)
		}
	}
}

func TestWritePK10kRowsSeveralBuckets(t *testing.T) {
	db := wrDatabase(t)
	path := wrCreateTable(t, db, "big", [][2]string{{"id", "int NOT NULL"}, {"name", "string"}, {"v", "bigint"}},
		"--primary-key", "id", "--buckets", "4")
	e := wrNewWriter(t, writer.Options{})
	ctx := wrCtx(t, 120*time.Second)
	const n = 10_000
	entries := make([]domain.WriteEntry, n)
	for i := range entries {
		entries[i] = domain.WriteEntry{Op: domain.OpUpsert, Row: []domain.Datum{
			{I64: int64(i)}, {Bytes: []byte(fmt.Sprintf("name-%05d", i))}, {I64: int64(i) * 1_000_003},
		}}
	}
	start := time.Now()
	wrRequireOK(t, e.write(t, ctx, &domain.WriteBatch{Table: path, Entries: entries}))
	t.Logf("10,000 rows written in %v", time.Since(start))

	// The changelog holds exactly one +I per key, spread over the 4 buckets.
	rows := wrScan(t, path)
	seen := make(map[int]bool, n)
	perBucket := map[int]int{}
	for _, r := range rows {
		require.Equal(t, "+I", r.ChangeType)
		id := int(r.Row["id"].(float64))
		require.False(t, seen[id], "duplicate %d", id)
		seen[id] = true
		perBucket[r.Bucket]++
		assert.Equal(t, fmt.Sprintf("name-%05d", id), r.Row["name"])
		assert.Equal(t, float64(int64(id)*1_000_003), r.Row["v"])
	}
	assert.Len(t, seen, n)
	assert.Len(t, perBucket, 4, "%v", perBucket)
	// Point lookups through the peer only for keys whose compacted bytes
	// have no tail byte >= 0x80: pyfluss (Rust core) zero-extends those
	// bytes in its bucket hash where Java sign-extends
	// (docs/fluss-records.md#bucketing), so for other keys it asks the wrong bucket. The writer follows
	// Java, which the scan above cannot contradict: every key is present.
	for _, k := range []int{0, 77, 127} {
		got := wrLookup(t, path, fmt.Sprintf(`{"id":%d}`, k))
		require.NotNil(t, got)
		assert.Equal(t, fmt.Sprintf("name-%05d", k), got["name"])
	}
}

func TestWritePartitionedTable(t *testing.T) {
	db := wrDatabase(t)
	path := wrCreateTable(t, db, "parts", [][2]string{{"id", "int NOT NULL"}, {"region", "string NOT NULL"}, {"v", "string"}},
		"--primary-key", "id,region", "--partition-key", "region", "--buckets", "2")
	e := wrNewWriter(t, writer.Options{})
	ctx := wrCtx(t, 90*time.Second)
	row := func(id int64, region, v string) domain.WriteEntry {
		return domain.WriteEntry{Op: domain.OpUpsert, Row: []domain.Datum{{I64: id}, {Bytes: []byte(region)}, {Bytes: []byte(v)}}}
	}
	// Partitions eu and us do not exist yet: the writer creates them.
	wrRequireOK(t, e.write(t, ctx, &domain.WriteBatch{Table: path, Entries: []domain.WriteEntry{
		row(1, "eu", "a"), row(2, "us", "b"), row(3, "eu", "c"),
	}}))
	for _, c := range []struct {
		id     int
		region string
		v      string
	}{{1, "eu", "a"}, {2, "us", "b"}, {3, "eu", "c"}} {
		got := wrLookup(t, path, fmt.Sprintf(`{"id":%d,"region":%q}`, c.id, c.region))
		require.NotNil(t, got, "%+v", c)
		assert.Equal(t, c.v, got["v"])
	}

	// With dynamic creation disabled, a new partition fails per entry.
	e2 := wrNewWriter(t, writer.Options{DisableDynamicPartitions: true})
	res := e2.write(t, ctx, &domain.WriteBatch{Table: path, Entries: []domain.WriteEntry{row(4, "apac", "x"), row(5, "eu", "y")}})
	assert.Equal(t, "partition_not_found", res[0].Code, "%+v", res[0])
	assert.Equal(t, domain.AppliedNo, res[0].Applied)
	assert.True(t, res[1].OK(), "%+v", res[1])
}

func TestWriteErrorsFromTheServer(t *testing.T) {
	db := wrDatabase(t)
	path := wrCreateTable(t, db, "errs", [][2]string{{"id", "int NOT NULL"}, {"a", "string NOT NULL"}, {"b", "string"}},
		"--primary-key", "id", "--buckets", "1")
	e := wrNewWriter(t, writer.Options{})
	ctx := wrCtx(t, 60*time.Second)
	// Partial update leaving out a NOT NULL column: INVALID_TARGET_COLUMN.
	res := e.write(t, ctx, &domain.WriteBatch{Table: path, PartialUpdateColumns: []int{0, 2},
		Entries: []domain.WriteEntry{{Op: domain.OpUpsert, Row: []domain.Datum{{I64: 1}, {Bytes: []byte("x")}, {Bytes: []byte("y")}}}}})
	assert.Equal(t, "invalid_target_column", res[0].Code, "%+v", res[0])
	assert.Equal(t, domain.AppliedNo, res[0].Applied)
	// The bucket keeps working afterwards (sequence given back).
	wrRequireOK(t, e.write(t, ctx, &domain.WriteBatch{Table: path,
		Entries: []domain.WriteEntry{{Op: domain.OpUpsert, Row: []domain.Datum{{I64: 2}, {Bytes: []byte("x")}, {Bytes: []byte("y")}}}}}))
	got := wrLookup(t, path, `{"id":2}`)
	require.NotNil(t, got)
	assert.Equal(t, "y", got["b"])
}
