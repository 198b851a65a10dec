//go:build integration

package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestLookupPrefix checks prefix lookups on a table whose bucket key (a) is a
// prefix of its primary key (a, b, c): every row of each prefix comes back,
// bounded by MaxRowsPerPrefix.
func TestLookupPrefix(t *testing.T) {
	db := lkDatabase(t)
	cols := [][2]string{{"a", "int NOT NULL"}, {"b", "string NOT NULL"}, {"c", "bigint NOT NULL"}, {"v", "string"}}
	path := lkCreateTable(t, db, "prefixed", cols, "--primary-key", "a,b,c", "--bucket-key", "a", "--buckets", "3")
	var rows []map[string]any
	want := map[int64]map[string]bool{}
	for a := int64(0); a < 8; a++ {
		want[a] = map[string]bool{}
		for j := int64(0); j <= 2*a; j++ {
			b, v := fmt.Sprintf("b%d", j%3), fmt.Sprintf("%d/%d", a, j)
			rows = append(rows, map[string]any{"a": a, "b": b, "c": j, "v": v})
			want[a][fmt.Sprintf("%s|%d|%s", b, j, v)] = true
		}
	}
	lkUpsert(t, path, rows)
	e := lkNewEnv(t)
	ctx := lkCtx(t, 60*time.Second)

	prefixes := [][]domain.Datum{{{I64: 5}}, {{I64: 0}}, {{I64: 100}}, {{I64: 7}}, {{I64: 2}}, {{I64: 3}}}
	const bound = 6
	resp, err := e.lk.PrefixLookup(ctx, &domain.PrefixLookupRequest{
		Table: path, PrefixColumns: []string{"a"}, Prefixes: prefixes, MaxRowsPerPrefix: bound,
	})
	require.NoError(t, err)
	require.Len(t, resp.Results, len(prefixes))
	for k, p := range prefixes {
		r := resp.Results[k]
		require.Nil(t, r.Err, "prefix %d: %v", k, r.Err)
		a := p[0].I64
		all := want[a]
		wantN := min(len(all), bound)
		assert.Len(t, r.Rows, wantN, "prefix a=%d", a)
		assert.Equal(t, len(all) > bound, r.Truncated, "prefix a=%d", a)
		seen := map[string]bool{}
		for _, row := range r.Rows {
			require.Len(t, row, 4)
			assert.Equal(t, a, row[0].I64)
			key := fmt.Sprintf("%s|%d|%s", row[1].Bytes, row[2].I64, row[3].Bytes)
			assert.True(t, all[key], "prefix a=%d: unexpected row %s", a, key)
			assert.False(t, seen[key], "prefix a=%d: duplicate row %s", a, key)
			seen[key] = true
		}
	}

	// Without a bound every row of the prefix comes back.
	resp, err = e.lk.PrefixLookup(ctx, &domain.PrefixLookupRequest{
		Table: path, PrefixColumns: []string{"a"}, Prefixes: [][]domain.Datum{{{I64: 7}}},
	})
	require.NoError(t, err)
	assert.Len(t, resp.Results[0].Rows, len(want[7]))
	assert.False(t, resp.Results[0].Truncated)

	// Prefix columns other than the bucket key are rejected.
	_, err = e.lk.PrefixLookup(ctx, &domain.PrefixLookupRequest{
		Table: path, PrefixColumns: []string{"a", "b"}, Prefixes: [][]domain.Datum{{{I64: 7}, {Bytes: []byte("b0")}}},
	})
	assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err), "%v", err)
}

// TestLookupPrefixPartitioned checks prefix lookups on a partitioned table:
// the prefix is the bucket key plus the partition column.
func TestLookupPrefixPartitioned(t *testing.T) {
	db := lkDatabase(t)
	cols := [][2]string{{"dt", "string NOT NULL"}, {"a", "int NOT NULL"}, {"b", "int NOT NULL"}, {"v", "string"}}
	path := lkCreateTable(t, db, "prefixed_parted", cols, "--primary-key", "dt,a,b", "--bucket-key", "a",
		"--partition-key", "dt", "--buckets", "2")
	e := lkNewEnv(t)
	ctx := lkCtx(t, 60*time.Second)
	for _, d := range []string{"p1", "p2"} {
		require.NoError(t, e.cat.CreatePartition(ctx, path, domain.PartitionSpec{{Key: "dt", Value: d}}, false))
	}
	var rows []map[string]any
	for _, d := range []string{"p1", "p2"} {
		for a := 0; a < 4; a++ {
			for b := 0; b < a+1; b++ {
				rows = append(rows, map[string]any{"dt": d, "a": a, "b": b, "v": fmt.Sprintf("%s/%d/%d", d, a, b)})
			}
		}
	}
	lkUpsert(t, path, rows)

	resp, err := e.lk.PrefixLookup(ctx, &domain.PrefixLookupRequest{
		Table: path, PrefixColumns: []string{"a", "dt"},
		Prefixes: [][]domain.Datum{
			{{I64: 3}, {Bytes: []byte("p2")}},
			{{I64: 3}, {Bytes: []byte("p9")}}, // no such partition
			{{I64: 0}, {Bytes: []byte("p1")}},
			{{I64: 9}, {Bytes: []byte("p1")}},
		},
	})
	require.NoError(t, err)
	counts := []int{4, 0, 1, 0}
	for k, r := range resp.Results {
		require.Nil(t, r.Err, "prefix %d: %v", k, r.Err)
		assert.Len(t, r.Rows, counts[k], "prefix %d", k)
	}
	for _, row := range resp.Results[0].Rows {
		assert.Equal(t, "p2", string(row[0].Bytes))
		assert.Equal(t, int64(3), row[1].I64)
		assert.Equal(t, fmt.Sprintf("p2/3/%d", row[2].I64), string(row[3].Bytes))
	}
}
