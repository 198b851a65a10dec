package application

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

// fakeLog is an in-memory domain.LogScanner over one non-partitioned table:
// per bucket a log with a log start offset.
type fakeLog struct {
	mu       sync.Mutex
	tableID  int64
	logs     [][]domain.LogRecord // per bucket; record i has offset start+i
	start    []int64
	fetches  int
	maxBatch int // records a bucket returns per fetch (0: all)
	schemaID int32
}

func (f *fakeLog) append(bucket int, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		off := f.start[bucket] + int64(len(f.logs[bucket]))
		f.logs[bucket] = append(f.logs[bucket], domain.LogRecord{Offset: off, Timestamp: 1000 + off, ChangeType: "+A",
			Row: []domain.Datum{{I64: int64(bucket)*1000 + off}, {I64: off}}})
	}
}

func (f *fakeLog) Buckets(_ context.Context, req *domain.LogBucketsRequest) ([]domain.LogBucket, error) {
	var out []domain.LogBucket
	for b := range f.logs {
		if req.Buckets == nil || contains32(req.Buckets, int32(b)) {
			out = append(out, domain.LogBucket{PartitionID: domain.NoPartitionID, Bucket: int32(b)})
		}
	}
	return out, nil
}

func contains32(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (f *fakeLog) ListOffsets(_ context.Context, req *domain.ListOffsetsRequest) (*domain.ListOffsetsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &domain.ListOffsetsResponse{TableID: f.tableID}
	for _, b := range req.Buckets {
		o := domain.BucketOffset{LogBucket: b}
		switch req.Position {
		case domain.OffsetEarliest:
			o.Offset = f.start[b.Bucket]
		case domain.OffsetLatest:
			o.Offset = f.start[b.Bucket] + int64(len(f.logs[b.Bucket]))
		case domain.OffsetTimestamp:
			o.Offset = f.start[b.Bucket] + int64(len(f.logs[b.Bucket]))
			for _, r := range f.logs[b.Bucket] {
				if r.Timestamp >= req.Timestamp {
					o.Offset = r.Offset
					break
				}
			}
		}
		out.Offsets = append(out.Offsets, o)
	}
	return out, nil
}

func (f *fakeLog) Fetch(_ context.Context, req *domain.FetchLogRequest) (*domain.FetchLogResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetches++
	if req.TableID != f.tableID {
		return nil, domain.NewStaleDefinition(&domain.StaleDefinitionError{UsedTableID: req.TableID, TableID: f.tableID})
	}
	out := &domain.FetchLogResponse{TableID: f.tableID, SchemaID: f.schemaID}
	rows := 0
	for _, p := range req.Positions {
		b := p.Bucket
		hw := f.start[b] + int64(len(f.logs[b]))
		fb := domain.FetchedBucket{LogBucket: p.LogBucket, FetchOffset: p.Offset, NextOffset: p.Offset, HighWatermark: hw, LogStartOffset: f.start[b]}
		if p.Offset < f.start[b] || p.Offset > hw {
			fb.OutOfRange = true
			fb.Err = &domain.Error{Kind: domain.KindBackend, Message: "out of range"}
			out.Buckets = append(out.Buckets, fb)
			continue
		}
		for _, r := range f.logs[b][p.Offset-f.start[b]:] {
			if req.MaxRecords > 0 && rows >= req.MaxRecords || f.maxBatch > 0 && len(fb.Records) >= f.maxBatch {
				break
			}
			fb.Records = append(fb.Records, r)
			fb.NextOffset = r.Offset + 1
			rows++
		}
		out.Buckets = append(out.Buckets, fb)
	}
	return out, nil
}

type scanSession struct {
	fakeSession
	log *fakeLog
}

func (s scanSession) LogScanner() domain.LogScanner { return s.log }

type scanClusters struct {
	cat *fakeCatalog
	log *fakeLog
}

func (c *scanClusters) Names() []string { return []string{"c1"} }
func (c *scanClusters) Session(_ context.Context, cluster string, _ domain.Principal) (domain.Session, error) {
	if cluster != "c1" {
		return nil, domain.NotFound(domain.ResourceCluster, "no cluster `%s`", cluster)
	}
	return scanSession{fakeSession{c.cat}, c.log}, nil
}

var scanPath = domain.TablePath{Database: "db", Table: "t"}

func newScanFixture(buckets int) (*scanClusters, *fakeLog) {
	log := &fakeLog{tableID: 7, logs: make([][]domain.LogRecord, buckets), start: make([]int64, buckets)}
	cat := &fakeCatalog{}
	cat.getTable = func(p domain.TablePath) (domain.TableInfo, error) {
		if p != scanPath {
			return domain.TableInfo{}, domain.NotFound(domain.ResourceTable, "no table `%s`", p)
		}
		log.mu.Lock()
		defer log.mu.Unlock()
		return domain.TableInfo{Path: p, TableID: log.tableID, SchemaID: 1, Descriptor: domain.TableDescriptor{
			Schema: domain.Schema{Columns: []domain.Column{intColumn("id", false), intColumn("n", true)}}}}, nil
	}
	return &scanClusters{cat: cat, log: log}, log
}

var alice = Scope{Cluster: "c1", Principal: domain.Principal{Name: "alice"}}

func newScanService(t *testing.T, c domain.Clusters, key string) *ScanService {
	s, err := sealed.New([]byte(key + "-0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	return NewScanService(c, s, ScanOptions{})
}

// TestScanCursorChainAcrossReplicas: two services sharing the key read a
// growing log through one cursor chain: every record exactly once, in
// offset order per bucket.
func TestScanCursorChainAcrossReplicas(t *testing.T) {
	c, log := newScanFixture(3)
	log.maxBatch = 2
	for b := range 3 {
		log.append(b, 5+b)
	}
	replicas := []*ScanService{newScanService(t, c, "k"), newScanService(t, c, "k")}
	ctx := context.Background()
	seen := newRecordChain(3)
	req := ScanRequest{Start: &ScanStart{Position: domain.OffsetEarliest}, MaxRows: 4}
	for i := 0; ; i++ {
		require.Less(t, i, 100)
		if i == 3 {
			log.append(1, 3) // written while consuming
		}
		res, err := replicas[i%2].Scan(ctx, alice, scanPath, req)
		require.NoError(t, err)
		require.LessOrEqual(t, len(res.Records), 4)
		seen.add(t, res.Records)
		if len(res.Records) == 0 && res.CaughtUp {
			break
		}
		req = ScanRequest{Cursor: res.Cursor, MaxRows: 4}
	}
	assert.Len(t, seen.seen, 5+6+7+3)
}

// recordChain checks the records of a cursor chain's answers: every record
// once, in offset order per bucket.
type recordChain struct {
	seen map[string]bool // bucket/offset of every record given
	last map[int32]int64 // per bucket, the offset of its last record
}

func newRecordChain(buckets int) *recordChain {
	c := &recordChain{seen: map[string]bool{}, last: map[int32]int64{}}
	for b := range buckets {
		c.last[int32(b)] = -1
	}
	return c
}

// add checks the records of one answer.
func (c *recordChain) add(t *testing.T, records []ScanRecord) {
	t.Helper()
	for _, r := range records {
		k := fmt.Sprintf("%d/%d", r.Bucket, r.Offset)
		require.False(t, c.seen[k], "record %s twice", k)
		c.seen[k] = true
		require.Greater(t, r.Offset, c.last[r.Bucket])
		c.last[r.Bucket] = r.Offset
	}
}

func TestScanRefusals(t *testing.T) {
	c, log := newScanFixture(1)
	log.append(0, 3)
	s := newScanService(t, c, "k")
	ctx := context.Background()
	res, err := s.Scan(ctx, alice, scanPath, ScanRequest{Start: &ScanStart{Position: domain.OffsetEarliest}, Columns: []string{"n"}})
	require.NoError(t, err)
	cursor := res.Cursor
	tampered := []byte(cursor)
	tampered[3] ^= 1

	other := newScanService(t, c, "other")
	bob := Scope{Cluster: "c1", Principal: domain.Principal{Name: "bob"}}
	tests := []struct {
		name  string
		svc   *ScanService
		scope Scope
		path  domain.TablePath
		req   ScanRequest
		want  string
	}{
		{"tampered", s, alice, scanPath, ScanRequest{Cursor: string(tampered)}, "altered"},
		{"another key", other, alice, scanPath, ScanRequest{Cursor: cursor}, "token-key"},
		{"another principal", s, bob, scanPath, ScanRequest{Cursor: cursor}, "another principal"},
		{"another table", s, alice, domain.TablePath{Database: "db", Table: "u"}, ScanRequest{Cursor: cursor}, "another table"},
		{"another projection", s, alice, scanPath, ScanRequest{Cursor: cursor, Columns: []string{"id"}}, "projection"},
		{"both", s, alice, scanPath, ScanRequest{Cursor: cursor, Start: &ScanStart{}}, "exactly one"},
		{"neither", s, alice, scanPath, ScanRequest{}, "exactly one"},
		{"unknown column", s, alice, scanPath, ScanRequest{Start: &ScanStart{}, Columns: []string{"zz"}}, "no column `zz`"},
		{"not a cursor", s, alice, scanPath, ScanRequest{Cursor: "%%%"}, "altered"},
		{"a bucket twice", s, alice, scanPath, ScanRequest{Start: &ScanStart{}, Buckets: []int32{0, 0}}, "named twice"},
		{"no buckets", s, alice, scanPath, ScanRequest{Start: &ScanStart{}, Buckets: []int32{}}, "buckets: empty"},
		{"no partitions", s, alice, scanPath, ScanRequest{Start: &ScanStart{}, Partitions: []string{}}, "partitions: empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.svc.Scan(ctx, tc.scope, tc.path, tc.req)
			require.Error(t, err)
			assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err), "%v", err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	// Too many rows is 413.
	_, err = s.Scan(ctx, alice, scanPath, ScanRequest{Start: &ScanStart{}, MaxRows: 1_000_000})
	assert.Equal(t, domain.KindLimitExceeded, domain.KindOf(err))

	// Dropped and re-created: refused, naming why.
	log.mu.Lock()
	log.tableID = 8
	log.mu.Unlock()
	_, err = s.Scan(ctx, alice, scanPath, ScanRequest{Cursor: cursor, Columns: []string{"n"}})
	require.Error(t, err)
	assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
	assert.Contains(t, err.Error(), "re-created")
}

func TestScanOutOfRange(t *testing.T) {
	c, log := newScanFixture(1)
	log.append(0, 5)
	s := newScanService(t, c, "k")
	ctx := context.Background()
	res, err := s.Scan(ctx, alice, scanPath, ScanRequest{Start: &ScanStart{Position: domain.OffsetEarliest}, MaxRows: 2})
	require.NoError(t, err)
	// Retention removes offsets 0..3.
	log.mu.Lock()
	log.logs[0] = log.logs[0][4:]
	log.start[0] = 4
	log.mu.Unlock()

	_, err = s.Scan(ctx, alice, scanPath, ScanRequest{Cursor: res.Cursor})
	require.Error(t, err)
	assert.Equal(t, domain.KindFailedPrecondition, domain.KindOf(err))
	assert.Contains(t, err.Error(), "on_out_of_range")

	got, err := s.Scan(ctx, alice, scanPath, ScanRequest{Cursor: res.Cursor, OutOfRange: OutOfRangeEarliest})
	require.NoError(t, err)
	require.Len(t, got.Records, 1)
	assert.Equal(t, int64(4), got.Records[0].Offset)

	got, err = s.Scan(ctx, alice, scanPath, ScanRequest{Cursor: res.Cursor, OutOfRange: OutOfRangeLatest})
	require.NoError(t, err)
	assert.Empty(t, got.Records)
	assert.True(t, got.CaughtUp)
}

func TestScanLongPoll(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c, log := newScanFixture(2)
	s := newScanService(t, c, "k")
	ctx := context.Background()

	began := time.Now()
	res, err := s.Scan(ctx, alice, scanPath, ScanRequest{Start: &ScanStart{Position: domain.OffsetLatest}, MaxWait: 250 * time.Millisecond})
	require.NoError(t, err)
	assert.Empty(t, res.Records)
	assert.GreaterOrEqual(t, time.Since(began), 250*time.Millisecond)
	assert.True(t, res.CaughtUp)

	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(150 * time.Millisecond)
		log.append(1, 1)
	}()
	began = time.Now()
	got, err := s.Scan(ctx, alice, scanPath, ScanRequest{Cursor: res.Cursor, MaxWait: 5 * time.Second})
	<-done
	require.NoError(t, err)
	require.Len(t, got.Records, 1)
	assert.Less(t, time.Since(began), 2*time.Second)

	// The request's deadline ends the wait.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	began = time.Now()
	_, err = s.Scan(short, alice, scanPath, ScanRequest{Cursor: got.Cursor, MaxWait: 10 * time.Second})
	require.NoError(t, err)
	assert.Less(t, time.Since(began), time.Second)
}

func TestCursorPayloadRoundTrip(t *testing.T) {
	tests := []scanCursor{
		{Cluster: "c", Principal: "p", Path: scanPath, TableID: 9, AllPartitions: true},
		{Cluster: "c", Principal: "p", ActAs: "q", Path: scanPath, TableID: -1, Columns: []string{}, Partitions: []string{"a", "b$c"},
			Buckets: []int32{0, 3}, Positions: []cursorPosition{{PartitionID: 4, Bucket: 3, Offset: 1 << 40}, {PartitionID: -1, Bucket: 0, Offset: 0}}},
		{Cluster: "c", Path: scanPath, Columns: []string{"x", "y"}, Buckets: []int32{}},
	}
	for i, c := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			got, err := unmarshalCursor(c.marshal())
			require.NoError(t, err)
			assert.Equal(t, &c, got)
		})
	}
	for _, bad := range [][]byte{nil, {9}, {cursorVersion}, append(tests[0].marshal(), 0)} {
		_, err := unmarshalCursor(bad)
		assert.Error(t, err, "%x", bad)
	}
}

// FuzzCursorPayload: any payload decodes in linear time without panic, and
// what decodes re-encodes to a payload that decodes the same.
func FuzzCursorPayload(f *testing.F) {
	f.Add((&scanCursor{Cluster: "c", Path: scanPath, Columns: []string{"a"}, Positions: []cursorPosition{{1, 2, 3}}}).marshal())
	f.Add([]byte{cursorVersion, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := unmarshalCursor(b)
		if err != nil {
			return
		}
		again, err := unmarshalCursor(c.marshal())
		require.NoError(t, err)
		require.Equal(t, c, again)
	})
}

// FuzzOpenCursor: any token string is refused or opened without panic.
func FuzzOpenCursor(f *testing.F) {
	s := sealed.NewRandom()
	f.Add(sealCursor(s, &scanCursor{Cluster: "c1", Principal: "alice", Path: scanPath}))
	f.Add("")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := openCursor(s, tok, alice, scanPath)
		if err == nil {
			require.Equal(t, scanPath, c.Path)
			return
		}
		require.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
	})
}
