package lookup_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// prefixDesc: PK (a, b, c), bucket key (a): a prefix of the primary key.
func prefixDesc() domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema: domain.Schema{
			Columns: []domain.Column{
				col("a", domain.TypeInteger, false),
				col("b", domain.TypeString, false),
				col("c", domain.TypeBigInt, false),
				col("v", domain.TypeString, true),
			},
			PrimaryKey: []string{"a", "b", "c"},
		},
		BucketKeys:  []string{"a"},
		BucketCount: 6,
	}
}

func prefixRow(a, j int64) []domain.Datum {
	return row(i64(a), str(fmt.Sprintf("b%d", j%2)), i64(j), str(fmt.Sprintf("%d/%d", a, j)))
}

// rowSet renders rows for order-insensitive comparison.
func rowSet(rows [][]domain.Datum) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%d|%s|%d|%s", r[0].I64, r[1].Bytes, r[2].I64, r[3].Bytes)
	}
	sort.Strings(out)
	return out
}

func TestPrefixLookup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3, fastOpts())
	kt := e.createTable(t, "pfx", prefixDesc())
	want := map[int64][][]domain.Datum{}
	for a := int64(0); a < 12; a++ {
		for j := int64(0); j <= a; j++ {
			r := prefixRow(a, j)
			e.kv.put(t, kt, kt.schemaID, kt.schema, r)
			want[a] = append(want[a], r)
		}
	}
	prefixes := [][]domain.Datum{{i64(3)}, {i64(0)}, {i64(42)}, {i64(11)}, {i64(7)}, {i64(5)}}
	resp, err := e.lk.PrefixLookup(ctx(t), &domain.PrefixLookupRequest{
		Table: kt.path, PrefixColumns: []string{"a"}, Prefixes: prefixes, MaxRowsPerPrefix: 6,
	})
	require.NoError(t, err)
	require.Len(t, resp.Results, len(prefixes))
	for k, p := range prefixes {
		r := resp.Results[k]
		require.Nil(t, r.Err, "prefix %d", k)
		a := p[0].I64
		all := want[a]
		if len(all) > 6 {
			assert.True(t, r.Truncated, "prefix %d", k)
			require.Len(t, r.Rows, 6)
			assert.Subset(t, rowSet(all), rowSet(r.Rows))
			continue
		}
		assert.False(t, r.Truncated, "prefix %d", k)
		assert.Equal(t, rowSet(all), rowSet(r.Rows), "prefix %d", k)
	}
	reqs := e.kv.requests(wire.KeyPrefixLookup)
	nodes := map[int32]bool{}
	for _, r := range reqs {
		assert.False(t, nodes[r.node], "one request per node")
		nodes[r.node] = true
	}

	// Unbounded.
	resp, err = e.lk.PrefixLookup(ctx(t), &domain.PrefixLookupRequest{
		Table: kt.path, PrefixColumns: []string{"a"}, Prefixes: [][]domain.Datum{{i64(11)}},
	})
	require.NoError(t, err)
	assert.Equal(t, rowSet(want[11]), rowSet(resp.Results[0].Rows))
	assert.False(t, resp.Results[0].Truncated)
}

func TestPrefixLookupPartitioned(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, fastOpts())
	desc := domain.TableDescriptor{
		Schema: domain.Schema{
			Columns: []domain.Column{
				col("a", domain.TypeInteger, false),
				col("dt", domain.TypeString, false),
				col("b", domain.TypeBigInt, false),
				col("v", domain.TypeString, true),
			},
			PrimaryKey: []string{"dt", "a", "b"},
		},
		PartitionKeys: []string{"dt"},
		BucketKeys:    []string{"a"},
		BucketCount:   3,
	}
	kt := e.createTable(t, "ppt", desc, "d1", "d2")
	for _, d := range []string{"d1", "d2"} {
		for a := int64(0); a < 4; a++ {
			for b := int64(0); b < 3; b++ {
				e.kv.put(t, kt, kt.schemaID, kt.schema, row(i64(a), str(d), i64(b), str(fmt.Sprintf("%s/%d/%d", d, a, b))))
			}
		}
	}
	for _, cols := range [][]string{{"dt", "a"}, {"a", "dt"}} {
		mk := func(a int64, d string) []domain.Datum {
			if cols[0] == "dt" {
				return row(str(d), i64(a))
			}
			return row(i64(a), str(d))
		}
		resp, err := e.lk.PrefixLookup(ctx(t), &domain.PrefixLookupRequest{
			Table: kt.path, PrefixColumns: cols,
			Prefixes: [][]domain.Datum{mk(1, "d2"), mk(1, "d9"), mk(3, "d1"), mk(9, "d1")},
		})
		require.NoError(t, err, "%v", cols)
		counts := []int{3, 0, 3, 0}
		for k, r := range resp.Results {
			require.Nil(t, r.Err, "%v prefix %d", cols, k)
			assert.Len(t, r.Rows, counts[k], "%v prefix %d", cols, k)
			for _, rw := range r.Rows {
				if k == 0 {
					assert.Equal(t, "d2", string(rw[1].Bytes))
					assert.Equal(t, int64(1), rw[0].I64)
				}
			}
		}
	}

	// A prefix without the partition column is rejected.
	_, err := e.lk.PrefixLookup(ctx(t), &domain.PrefixLookupRequest{
		Table: kt.path, PrefixColumns: []string{"a"}, Prefixes: [][]domain.Datum{{i64(1)}},
	})
	assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
	assert.ErrorContains(t, err, "partition column")

	// Without the partition column but with the partition named
	// (PrefixLookupRequest.Partition): that partition only; a partition that
	// does not exist finds nothing; naming both is refused.
	for _, tc := range []struct {
		part string
		want int
	}{{"d2", 3}, {"d1", 3}, {"d9", 0}} {
		resp, err := e.lk.PrefixLookup(ctx(t), &domain.PrefixLookupRequest{
			Table: kt.path, PrefixColumns: []string{"a"}, Prefixes: [][]domain.Datum{{i64(1)}}, Partition: tc.part,
		})
		require.NoError(t, err, tc.part)
		require.Nil(t, resp.Results[0].Err, tc.part)
		require.Len(t, resp.Results[0].Rows, tc.want, tc.part)
		for _, rw := range resp.Results[0].Rows {
			assert.Equal(t, tc.part, string(rw[1].Bytes))
		}
	}
	_, err = e.lk.PrefixLookup(ctx(t), &domain.PrefixLookupRequest{
		Table: kt.path, PrefixColumns: []string{"a", "dt"}, Prefixes: [][]domain.Datum{{i64(1), str("d1")}}, Partition: "d1",
	})
	assert.ErrorContains(t, err, "must not contain the partition column")
}

func TestPrefixLookupValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, fastOpts())
	pfx := e.createTable(t, "pfx", prefixDesc())
	kv := e.createTable(t, "kv", kvDesc())
	logDesc := domain.TableDescriptor{Schema: domain.Schema{Columns: []domain.Column{col("a", domain.TypeInteger, true)}}, BucketCount: 1}
	log := e.createTable(t, "log", logDesc)
	notPrefix := prefixDesc()
	notPrefix.BucketKeys = []string{"b"}
	np := e.createTable(t, "np", notPrefix)

	cases := []struct {
		name  string
		path  domain.TablePath
		cols  []string
		width int
		want  string
	}{
		{"not the bucket key", pfx.path, []string{"b"}, 1, "must be the bucket key"},
		{"longer than the bucket key", pfx.path, []string{"a", "b"}, 2, "must be the bucket key"},
		{"unknown column", pfx.path, []string{"zz"}, 1, "not a column"},
		{"duplicate", pfx.path, []string{"a", "a"}, 2, "listed twice"},
		{"empty", pfx.path, nil, 0, "must not be empty"},
		{"whole primary key", kv.path, []string{"id", "name"}, 2, "use a primary-key lookup"},
		{"log table", log.path, []string{"a"}, 1, "no primary key"},
		{"bucket key not a prefix", np.path, []string{"b"}, 1, "not a prefix of the primary key"},
	}
	for _, tc := range cases {
		p := make([]domain.Datum, tc.width)
		for i := range p {
			p[i] = i64(1)
		}
		_, err := e.lk.PrefixLookup(ctx(t), &domain.PrefixLookupRequest{Table: tc.path, PrefixColumns: tc.cols, Prefixes: [][]domain.Datum{p}})
		assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err), "%s: %v", tc.name, err)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	_, err := e.lk.PrefixLookup(ctx(t), &domain.PrefixLookupRequest{Table: pfx.path, PrefixColumns: []string{"a"}, MaxRowsPerPrefix: -1})
	assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
}
