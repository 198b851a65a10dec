package scan

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeMD is a Metadata of one non-partitioned table with three buckets:
// 0 and 1 led by node 1, 2 by node 2.
type fakeMD struct {
	mu          sync.Mutex
	t           *meta.Table
	leaders     map[int32]int32
	invalidated int
	refreshed   int
}

func newFakeMD() *fakeMD {
	t := testTable()
	t.NumBuckets = 3
	return &fakeMD{t: t, leaders: map[int32]int32{0: 1, 1: 1, 2: 2}}
}

func (m *fakeMD) Table(context.Context, domain.TablePath) (*meta.Table, error)  { return m.t, nil }
func (m *fakeMD) Reload(context.Context, domain.TablePath) (*meta.Table, error) { return m.t, nil }
func (m *fakeMD) Schema(context.Context, *meta.Table, int32) (domain.Schema, error) {
	return m.t.Info.Descriptor.Schema, nil
}
func (m *fakeMD) Partition(context.Context, *meta.Table, string, bool) (int64, error) {
	return 0, errors.New("not partitioned")
}
func (m *fakeMD) Leader(_, _ int64, b int32) (meta.ServerNode, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.leaders[b]
	return meta.ServerNode{ID: id, Host: "h", Port: 1}, ok
}
func (m *fakeMD) RefreshLeaders(context.Context, int64, int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refreshed++
	m.leaders = map[int32]int32{0: 1, 1: 1, 2: 2}
	return nil
}
func (m *fakeMD) InvalidateLeaders(int64, int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.invalidated++
	m.leaders = map[int32]int32{}
}

// fakeCaller answers ListOffsets and FetchLog per node; notLeader makes the
// first answer for that bucket NOT_LEADER_OR_FOLLOWER.
type fakeCaller struct {
	mu        sync.Mutex
	notLeader map[int32]bool
	records   map[int32][]byte
	calls     map[int32]int
	maxBytes  []int32 // of each FetchLog, in order
}

func (c *fakeCaller) Call(_ context.Context, to meta.Dest, key wire.APIKey, req, resp proto.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[int32]int{}
	}
	c.calls[to.Node]++
	switch key {
	case wire.KeyListOffsets:
		r := req.(*flusspb.ListOffsetsRequest)
		out := resp.(*flusspb.ListOffsetsResponse)
		for _, b := range r.GetBucketId() {
			br := &flusspb.PbListOffsetsRespForBucket{BucketId: ptr(b)}
			if c.notLeader[b] {
				delete(c.notLeader, b)
				br.ErrorCode = ptr(int32(wire.CodeNotLeaderOrFollower))
			} else {
				br.Offset = ptr(100*int64(b) + int64(r.GetOffsetType()))
			}
			out.BucketsResp = append(out.BucketsResp, br)
		}
	case wire.KeyFetchLog:
		r := req.(*flusspb.FetchLogRequest)
		c.maxBytes = append(c.maxBytes, r.GetMaxBytes())
		out := resp.(*flusspb.FetchLogResponse)
		tr := &flusspb.PbFetchLogRespForTable{TableId: r.TablesReq[0].TableId}
		for _, b := range r.TablesReq[0].GetBucketsReq() {
			br := &flusspb.PbFetchLogRespForBucket{BucketId: b.BucketId, HighWatermark: ptr(int64(2))}
			if c.notLeader[b.GetBucketId()] {
				br.ErrorCode = ptr(int32(wire.CodeNotLeaderOrFollower))
			} else {
				br.Records = c.records[b.GetBucketId()]
			}
			tr.BucketsResp = append(tr.BucketsResp, br)
		}
		out.TablesResp = append(out.TablesResp, tr)
	default:
		return errors.New("unexpected API")
	}
	return nil
}

func TestListOffsetsRetriesMovedLeaders(t *testing.T) {
	md := newFakeMD()
	call := &fakeCaller{notLeader: map[int32]bool{2: true}}
	s := New(call, md, Options{RetryBackoff: 1})
	bs, err := s.Buckets(context.Background(), &domain.LogBucketsRequest{Table: md.t.Path()})
	require.NoError(t, err)
	require.Len(t, bs, 3)
	resp, err := s.ListOffsets(context.Background(), &domain.ListOffsetsRequest{Table: md.t.Path(), Buckets: bs, Position: domain.OffsetLatest})
	require.NoError(t, err)
	var offs []int64
	for _, o := range resp.Offsets {
		offs = append(offs, o.Offset)
	}
	assert.Equal(t, []int64{1, 101, 201}, offs)
	assert.Equal(t, 1, md.invalidated)
	assert.Equal(t, 1, md.refreshed)

	_, err = s.Buckets(context.Background(), &domain.LogBucketsRequest{Table: md.t.Path(), Buckets: []int32{3}})
	assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
	_, err = s.Buckets(context.Background(), &domain.LogBucketsRequest{Table: md.t.Path(), Partitions: []string{"p"}})
	assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
}

func TestFetchGroupsByLeader(t *testing.T) {
	md := newFakeMD()
	call := &fakeCaller{notLeader: map[int32]bool{1: true}, records: map[int32][]byte{
		0: arrowBatch(t, testColumns, 0, 5, nil, row(1, "a", 1), row(2, "b", 2)),
		2: arrowBatch(t, testColumns, 0, 5, nil, row(3, "c", 3)),
	}}
	s := New(call, md, Options{})
	pos := []domain.BucketOffset{{LogBucket: domain.LogBucket{PartitionID: -1, Bucket: 0}}, {LogBucket: domain.LogBucket{PartitionID: -1, Bucket: 1}},
		{LogBucket: domain.LogBucket{PartitionID: -1, Bucket: 2}, Offset: 0}}
	resp, err := s.Fetch(context.Background(), &domain.FetchLogRequest{Table: md.t.Path(), TableID: 7, Positions: pos})
	require.NoError(t, err)
	require.Len(t, resp.Buckets, 3)
	assert.Len(t, resp.Buckets[0].Records, 2)
	assert.Equal(t, int64(2), resp.Buckets[0].NextOffset)
	assert.Equal(t, int64(2), resp.Buckets[0].HighWatermark)
	require.NotNil(t, resp.Buckets[1].Err)
	assert.True(t, resp.Buckets[1].Err.Retryable)
	assert.Equal(t, int64(0), resp.Buckets[1].NextOffset)
	assert.Len(t, resp.Buckets[2].Records, 1)
	assert.Equal(t, map[int32]int{1: 1, 2: 1}, call.calls, "one FetchLog per leader")

	// MaxRecords: buckets past the bound keep their position.
	md.RefreshLeaders(context.Background(), 7, -1)
	call.notLeader = nil
	resp, err = s.Fetch(context.Background(), &domain.FetchLogRequest{Table: md.t.Path(), TableID: 7, Positions: pos, MaxRecords: 1})
	require.NoError(t, err)
	total := 0
	for _, b := range resp.Buckets {
		total += len(b.Records)
	}
	assert.Equal(t, 1, total)

	// A re-created table is a stale definition.
	_, err = s.Fetch(context.Background(), &domain.FetchLogRequest{Table: md.t.Path(), TableID: 6, Positions: pos})
	assert.True(t, domain.IsStaleDefinition(err), "%v", err)
}

// TestFetchAsksTheBytesItUses: a fetch bounded by a record count asks for
// twice the bytes that many records took in the table's earlier fetches
// (at least minBucketBytes), the full bound before anything is learned or
// without a record bound.
func TestFetchAsksTheBytesItUses(t *testing.T) {
	md := newFakeMD()
	var rows [][]domain.Datum
	for i := range 1000 {
		rows = append(rows, row(int64(i), fmt.Sprintf("message %d with some text to take room", i), int64(i)))
	}
	batch := arrowBatch(t, testColumns, 0, 5, nil, rows...)
	call := &fakeCaller{records: map[int32][]byte{0: batch}}
	s := New(call, md, Options{})
	pos := []domain.BucketOffset{{LogBucket: domain.LogBucket{PartitionID: -1, Bucket: 0}}}
	fetch := func(maxRecords int) {
		t.Helper()
		_, err := s.Fetch(context.Background(), &domain.FetchLogRequest{Table: md.t.Path(), TableID: 7, Positions: pos,
			MaxBytes: 8 << 20, MaxRecords: maxRecords})
		require.NoError(t, err)
	}
	fetch(100_000)
	fetch(100_000)
	fetch(0)
	fetch(10)
	per := float64(len(batch)) / 1000
	require.Len(t, call.maxBytes, 4)
	assert.Equal(t, int32(8<<20), call.maxBytes[0], "nothing learned yet")
	assert.InDelta(t, 2*per*100_000, float64(call.maxBytes[1]), 2, "twice the learned size of 100,000 records")
	assert.Equal(t, int32(8<<20), call.maxBytes[2], "no record bound")
	assert.Equal(t, int32(minBucketBytes), call.maxBytes[3], "at least minBucketBytes")
}

func TestRecordSizes(t *testing.T) {
	tests := []struct {
		name    string
		observe [][2]int64 // bytes, records
		records int
		limit   int
		want    int
	}{
		{"nothing learned", nil, 10, 1 << 20, 1 << 20},
		{"no record bound", [][2]int64{{1000, 10}}, 0, 1 << 20, 1 << 20},
		{"twice the learned size", [][2]int64{{100_000, 1000}}, 5000, 8 << 20, 1_000_000},
		{"at most the limit", [][2]int64{{100_000, 1000}}, 500_000, 8 << 20, 8 << 20},
		{"at least minBucketBytes", [][2]int64{{100_000, 1000}}, 1, 8 << 20, minBucketBytes},
		{"a moving average", [][2]int64{{100_000, 1000}, {200_000, 1000}}, 10_000, 8 << 20, 2_500_000},
		{"empty batches teach nothing", [][2]int64{{100_000, 1000}, {61, 0}}, 10_000, 8 << 20, 2_000_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s recordSizes
			for _, o := range tc.observe {
				s.observe(7, o[0], o[1])
			}
			assert.Equal(t, tc.want, s.fetchBytes(7, tc.records, tc.limit))
			assert.Equal(t, tc.limit, s.fetchBytes(8, tc.records, tc.limit), "another table")
		})
	}
}
