package scan

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// withAheadWorkers sets the goroutines that decode ahead for one test.
// (and decoding ahead for any number of records).
func withAheadWorkers(t testing.TB, n int) {
	old, oldMin := aheadWorkers, aheadMinRecords
	aheadWorkers, aheadMinRecords = n, 0
	t.Cleanup(func() { aheadWorkers, aheadMinRecords = old, oldMin })
}

// seqRows returns rows first, first+1, ... of testColumns, n of them.
func seqRows(first, n int) [][]domain.Datum {
	out := make([][]domain.Datum, n)
	for i := range out {
		v := int64(first + i)
		out[i] = row(v, fmt.Sprintf("m%d", v), v)
	}
	return out
}

// batches returns the batches of sizes (rows each) from offset base on.
func batches(t testing.TB, base int64, sizes ...int) []byte {
	var out []byte
	for _, n := range sizes {
		out = append(out, arrowBatch(t, testColumns, base, 1_700_000_000_000+base, nil, seqRows(int(base), n)...)...)
		base += int64(n)
	}
	return out
}

// fourBucketMD is newFakeMD with a fourth bucket led by node 2.
func fourBucketMD() *fakeMD {
	md := newFakeMD()
	md.t.NumBuckets = 4
	md.leaders = map[int32]int32{0: 1, 1: 1, 2: 2, 3: 2}
	return md
}

// TestFetchDecodesAheadAsInOrder: a fetch whose batches are decoded ahead on
// several goroutines answers exactly what the in-order decode answers
// (records, next offsets, errors), across the cross-bucket max_rows limit,
// fetch offsets inside batches, empty and truncated buckets.
func TestFetchDecodesAheadAsInOrder(t *testing.T) {
	b0 := batches(t, 0, 3, 4, 5)
	tests := []struct {
		name       string
		records    map[int32][]byte
		from       [4]int64
		maxRecords int
	}{
		{"no limit", map[int32][]byte{0: b0, 1: batches(t, 0, 2), 2: batches(t, 0, 6, 1), 3: batches(t, 0, 1, 1, 1)}, [4]int64{}, 0},
		{"limit inside the second bucket", map[int32][]byte{0: b0, 1: batches(t, 0, 2), 2: batches(t, 0, 6, 1), 3: batches(t, 0, 1)}, [4]int64{}, 13},
		{"limit at a batch end", map[int32][]byte{0: b0, 1: batches(t, 0, 2), 2: batches(t, 0, 6, 1)}, [4]int64{}, 7},
		{"limit exactly the bucket", map[int32][]byte{0: b0, 1: batches(t, 0, 2), 2: batches(t, 0, 6)}, [4]int64{}, 12},
		{"fetch offsets inside batches", map[int32][]byte{0: b0, 1: batches(t, 0, 2), 2: batches(t, 0, 6, 1), 3: batches(t, 0, 3)}, [4]int64{4, 1, 6, 3}, 9},
		{"truncated last batch", map[int32][]byte{0: b0[:len(b0)-7], 1: batches(t, 0, 2, 2)[:40], 2: batches(t, 0, 6)}, [4]int64{}, 0},
		{"a corrupt batch after good ones", map[int32][]byte{0: append(batches(t, 0, 3), corruptCRC(batches(t, 3, 2))...), 2: batches(t, 0, 2)}, [4]int64{}, 0},
		{"a corrupt batch past the limit", map[int32][]byte{0: batches(t, 0, 3), 2: corruptCRC(batches(t, 0, 2))}, [4]int64{}, 3},
		{"one batch", map[int32][]byte{0: batches(t, 0, 5)}, [4]int64{}, 0},
		{"nothing", map[int32][]byte{}, [4]int64{}, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var pos []domain.BucketOffset
			for b := range int32(4) {
				pos = append(pos, domain.BucketOffset{LogBucket: domain.LogBucket{PartitionID: -1, Bucket: b}, Offset: tc.from[b]})
			}
			fetch := func(workers int) (*domain.FetchLogResponse, error) {
				withAheadWorkers(t, workers)
				md := fourBucketMD()
				s := New(&fakeCaller{records: tc.records}, md, Options{})
				return s.Fetch(context.Background(), &domain.FetchLogRequest{Table: md.t.Path(), TableID: 7, Positions: pos, MaxRecords: tc.maxRecords})
			}
			want, wantErr := fetch(1)
			// Too few records to decode ahead by default: the same answer.
			old := aheadMinRecords
			aheadMinRecords = 1 << 20
			got, err := New(&fakeCaller{records: tc.records}, fourBucketMD(), Options{}).Fetch(context.Background(),
				&domain.FetchLogRequest{Table: fourBucketMD().t.Path(), TableID: 7, Positions: pos, MaxRecords: tc.maxRecords})
			aheadMinRecords = old
			if wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, want, got)
			}
			for _, workers := range []int{2, 3, 8} {
				got, err := fetch(workers)
				if wantErr != nil {
					require.Error(t, err, "workers %d", workers)
					assert.Equal(t, wantErr.Error(), err.Error(), "workers %d", workers)
					continue
				}
				require.NoError(t, err, "workers %d", workers)
				assert.Equal(t, want, got, "workers %d", workers)
			}
			if wantErr == nil && tc.maxRecords > 0 {
				n := 0
				for _, b := range want.Buckets {
					n += len(b.Records)
				}
				assert.LessOrEqual(t, n, tc.maxRecords)
			}
		})
	}
}

// corruptCRC spoils the CRC of the first batch in b.
func corruptCRC(b []byte) []byte {
	b[21] ^= 0xff
	return b
}

// TestPlanAhead: the batches predicted are those the in-order pass decodes.
func TestPlanAhead(t *testing.T) {
	b := batches(t, 10, 3, 4, 5) // offsets 10-12, 13-16, 17-21
	one := batches(t, 0, 2)
	tests := []struct {
		name       string
		buckets    []aheadBucket
		maxRecords int
		want       [][]bool // per bucket index, per batch position: a job
		records    int      // taken from them
	}{
		{"all", []aheadBucket{{idx: 0, records: b, from: 10}}, 0, [][]bool{{true, true, true}}, 12},
		{"below the fetch offset", []aheadBucket{{idx: 0, records: b, from: 15}}, 0, [][]bool{{false, true, true}}, 7},
		{"below the fetch offset, with a limit", []aheadBucket{{idx: 0, records: b, from: 15}}, 3, [][]bool{{false, true, true}}, 3},
		{"past the end", []aheadBucket{{idx: 0, records: b, from: 22}}, 0, [][]bool{nil}, 0},
		{"limit inside a batch", []aheadBucket{{idx: 0, records: b, from: 10}}, 5, [][]bool{{true, true}}, 5},
		{"limit at a batch end", []aheadBucket{{idx: 0, records: b, from: 10}}, 3, [][]bool{{true}}, 3},
		{"limit across buckets, in their order", []aheadBucket{{idx: 1, records: b, from: 13}, {idx: 0, records: one}}, 10, [][]bool{{true}, {false, true, true}}, 10},
		{"limit used up by the first bucket", []aheadBucket{{idx: 1, records: b, from: 13}, {idx: 0, records: one}}, 9, [][]bool{nil, {false, true, true}}, 9},
		{"truncated", []aheadBucket{{idx: 0, records: b[:len(b)-1], from: 10}}, 0, [][]bool{{true, true}}, 7},
		{"garbage", []aheadBucket{{idx: 0, records: []byte("not a log batch at all, but long enough for a header")}}, 0, [][]bool{nil}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jobs, byBucket, records := planAhead(tc.buckets, tc.maxRecords, len(tc.want))
			assert.Equal(t, tc.records, records)
			got := make([][]bool, len(byBucket))
			n := 0
			for i, js := range byBucket {
				for _, j := range js {
					got[i] = append(got[i], j != nil)
					if j != nil {
						n++
					}
				}
			}
			assert.Equal(t, tc.want, got)
			assert.Len(t, jobs, n)
		})
	}
}

// FuzzDecodeAhead: arbitrary bytes as a bucket's records decode, with the
// batches planned and decoded ahead, to exactly what the in-order decode
// gives.
func FuzzDecodeAhead(f *testing.F) {
	f.Add(batches(f, 0, 2, 3), int64(1), 4)
	f.Add(batches(f, 5, 1, 1, 1), int64(6), 0)
	f.Add([]byte{}, int64(0), 1)
	f.Fuzz(func(t *testing.T, data []byte, from int64, limit int) {
		if limit < 0 {
			limit = -1
		}
		decode := func(ahead bool) (*domain.FetchedBucket, error) {
			s, tb, p := newTestPlan(t, nil)
			s.opts.MaxBufferSize = 1 << 20
			fb := &domain.FetchedBucket{FetchOffset: from, NextOffset: from}
			var jobs [][]*batchJob
			if ahead {
				// The jobs run one after the other here: goroutines would
				// make the fuzzer's coverage vary from run to run
				// (TestFetchDecodesAheadAsInOrder runs them in parallel).
				var all []*batchJob
				all, jobs, _ = planAhead([]aheadBucket{{records: data, from: from}}, max(limit, 0), 1)
				wp := p.forWorker()
				for _, j := range all {
					j.run(context.Background(), s, tb, wp)
				}
			}
			var mine []*batchJob
			if jobs != nil {
				mine = jobs[0]
			}
			err := s.decodeBucket(context.Background(), tb, p, fb, data, limit, mine)
			return fb, err
		}
		want, wantErr := decode(false)
		got, err := decode(true)
		if wantErr != nil {
			require.Error(t, err)
			require.Equal(t, wantErr.Error(), err.Error())
			return
		}
		require.NoError(t, err)
		require.Equal(t, want, got)
	})
}
