package meta_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func table(id int64, name string, buckets int, partitionKeys ...string) *metatest.Table {
	cols := []domain.Column{
		{Name: "id", Type: domain.DataType{Root: domain.TypeBigInt}, ID: 0},
		{Name: "dt", Type: domain.DataType{Root: domain.TypeString}, ID: 1},
	}
	pk := []string{"id"}
	if len(partitionKeys) > 0 {
		pk = []string{"id", "dt"}
	}
	return &metatest.Table{ID: id, Path: domain.TablePath{Database: "db", Table: name}, Desc: domain.TableDescriptor{
		Schema:      domain.Schema{Columns: cols, PrimaryKey: pk, HighestFieldID: 1},
		BucketCount: buckets, PartitionKeys: partitionKeys,
		Properties: map[string]string{"table.replication.factor": "1"}, CustomProperties: map[string]string{},
	}}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestTableLoadsOnceAndCaches(t *testing.T) {
	t.Parallel()
	fake := metatest.New(2)
	fake.AddTable(table(7, "t", 3))
	c := meta.New(fake, meta.Options{})
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tb, err := c.Table(ctx(t), domain.TablePath{Database: "db", Table: "t"})
			assert.NoError(t, err)
			assert.Equal(t, int64(7), tb.ID())
			assert.Equal(t, 3, tb.NumBuckets)
			assert.Equal(t, []string{"id"}, tb.Info.Descriptor.Schema.PrimaryKey)
			assert.Equal(t, "1", tb.Property("table.replication.factor"))
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, fake.Calls(wire.KeyGetMetadata), "single flight")
	n, ok := c.Leader(7, meta.NoPartition, 2)
	require.True(t, ok)
	assert.Equal(t, int32(1), n.ID)
	assert.Equal(t, "127.0.0.1:9001", n.Addr())
	tb, ok := c.TableByID(7)
	require.True(t, ok)
	assert.Equal(t, "t", tb.Path().Table)
}

func TestUnknownTable(t *testing.T) {
	t.Parallel()
	c := meta.New(metatest.New(1), meta.Options{})
	_, err := c.Table(ctx(t), domain.TablePath{Database: "db", Table: "nope"})
	require.Error(t, err)
	de := domain.AsError(err)
	require.NotNil(t, de)
	assert.Equal(t, "table_not_found", de.Code())
}

func TestInvalidateAndReload(t *testing.T) {
	t.Parallel()
	fake := metatest.New(1)
	fake.AddTable(table(7, "t", 1))
	c := meta.New(fake, meta.Options{})
	p := domain.TablePath{Database: "db", Table: "t"}
	_, err := c.Table(ctx(t), p)
	require.NoError(t, err)
	_, err = c.Table(ctx(t), p)
	require.NoError(t, err)
	assert.Equal(t, 1, fake.Calls(wire.KeyGetMetadata))
	// DDL: drop and re-create with a new id.
	fake.DropTable(p)
	fake.AddTable(table(8, "t", 2))
	c.Invalidate(p)
	tb, err := c.Table(ctx(t), p)
	require.NoError(t, err)
	assert.Equal(t, int64(8), tb.ID())
	_, ok := c.TableByID(7)
	assert.False(t, ok)
}

func TestLeadersInvalidateAndRefresh(t *testing.T) {
	t.Parallel()
	fake := metatest.New(2)
	fake.AddTable(table(7, "t", 2))
	c := meta.New(fake, meta.Options{})
	p := domain.TablePath{Database: "db", Table: "t"}
	_, err := c.Table(ctx(t), p)
	require.NoError(t, err)
	fake.SetLeaders(p, 2, meta.NoLeader)
	c.InvalidateLeaders(7, meta.NoPartition)
	_, ok := c.Leader(7, meta.NoPartition, 0)
	assert.False(t, ok)
	require.NoError(t, c.RefreshLeaders(ctx(t), 7, meta.NoPartition))
	n, ok := c.Leader(7, meta.NoPartition, 0)
	require.True(t, ok)
	assert.Equal(t, int32(2), n.ID)
	_, ok = c.Leader(7, meta.NoPartition, 1)
	assert.False(t, ok, "no leader elected")
	assert.Equal(t, []int32{0}, c.AvailableBuckets(nil, 7, meta.NoPartition))
	// The table disappears: refresh reports table_not_found.
	fake.DropTable(p)
	err = c.RefreshLeaders(ctx(t), 7, meta.NoPartition)
	assert.Equal(t, "table_not_found", domain.AsError(err).Code())
}

func TestLRUBound(t *testing.T) {
	t.Parallel()
	fake := metatest.New(1)
	for i := range 5 {
		fake.AddTable(table(int64(i+1), fmt.Sprint("t", i), 1))
	}
	c := meta.New(fake, meta.Options{MaxTables: 3})
	for i := range 5 {
		_, err := c.Table(ctx(t), domain.TablePath{Database: "db", Table: fmt.Sprint("t", i)})
		require.NoError(t, err)
	}
	assert.Equal(t, 3, c.Len())
	_, ok := c.TableByID(1)
	assert.False(t, ok, "least recently used table evicted")
	_, ok = c.TableByID(5)
	assert.True(t, ok)
}

func TestMaxAgeReloads(t *testing.T) {
	t.Parallel()
	fake := metatest.New(1)
	fake.AddTable(table(7, "t", 1))
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	c := meta.New(fake, meta.Options{MaxAge: time.Minute, Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	p := domain.TablePath{Database: "db", Table: "t"}
	_, _ = c.Table(ctx(t), p)
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	_, _ = c.Table(ctx(t), p)
	assert.Eventually(t, func() bool { return fake.Calls(wire.KeyGetMetadata) == 2 }, 5*time.Second, time.Millisecond,
		"an expired entry is reloaded in the background")
}

// downCaller fails every metadata request while down is set, as an
// unreachable coordinator (and metadata) would.
type downCaller struct {
	*metatest.Cluster
	down    atomic.Bool
	refused atomic.Int32
}

func (d *downCaller) Call(ctx context.Context, to meta.Dest, key wire.APIKey, req, resp proto.Message) error {
	if d.down.Load() && key == wire.KeyGetMetadata {
		d.refused.Add(1)
		return &metatest.Error{Outcome: "notsent", Message: "connection refused", Retry: true}
	}
	return d.Cluster.Call(ctx, to, key, req, resp)
}

// TestExpiredEntryServedWhileMetadataIsDown: past MaxAge with the metadata
// unreachable, Table still answers the cached definition (no error, no
// wait); once the metadata answers again the background reload replaces it.
func TestExpiredEntryServedWhileMetadataIsDown(t *testing.T) {
	// Not parallel: the background reloads must all be gone at the end.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fake := &downCaller{Cluster: metatest.New(1)}
	fake.AddTable(table(7, "t", 1))
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	c := meta.New(fake, meta.Options{MaxAge: time.Minute, Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	p := domain.TablePath{Database: "db", Table: "t"}
	first, err := c.Table(ctx(t), p)
	require.NoError(t, err)

	fake.down.Store(true)
	mu.Lock()
	now = now.Add(10 * time.Minute)
	mu.Unlock()
	for range 20 {
		got, err := c.Table(ctx(t), p)
		require.NoError(t, err, "the stale entry is served")
		assert.Same(t, first, got)
	}
	assert.Eventually(t, func() bool { return fake.refused.Load() >= 1 }, 5*time.Second, time.Millisecond, "a background reload was tried")

	fake.down.Store(false)
	assert.Eventually(t, func() bool {
		got, err := c.Table(ctx(t), p)
		return err == nil && got != first
	}, 5*time.Second, 5*time.Millisecond, "a reload replaces the entry once the metadata answers")
}

func TestPartitionResolveAndCreate(t *testing.T) {
	t.Parallel()
	fake := metatest.New(1)
	fake.AddTable(table(7, "p", 2, "dt"))
	id := fake.AddPartition(domain.TablePath{Database: "db", Table: "p"}, "2026-01-01")
	c := meta.New(fake, meta.Options{})
	tb, err := c.Table(ctx(t), domain.TablePath{Database: "db", Table: "p"})
	require.NoError(t, err)
	assert.True(t, tb.Partitioned)

	got, err := c.Partition(ctx(t), tb, "2026-01-01", false)
	require.NoError(t, err)
	assert.Equal(t, id, got)
	n, ok := c.Leader(7, id, 1)
	require.True(t, ok)
	assert.Equal(t, int32(1), n.ID)
	name, ok := c.PartitionName(7, id)
	assert.True(t, ok)
	assert.Equal(t, "2026-01-01", name)

	_, err = c.Partition(ctx(t), tb, "2026-01-02", false)
	assert.Equal(t, "partition_not_found", domain.AsError(err).Code())
	assert.Zero(t, fake.Calls(wire.KeyCreatePartition))

	got, err = c.Partition(ctx(t), tb, "2026-01-02", true)
	require.NoError(t, err)
	assert.NotEqual(t, id, got)
	assert.Equal(t, 1, fake.Calls(wire.KeyCreatePartition))
}

func TestOlderSchema(t *testing.T) {
	t.Parallel()
	fake := metatest.New(1)
	tb := table(7, "t", 1)
	tb.SchemaID = 2
	old := tb.Desc.Schema
	old.Columns = old.Columns[:1]
	old.HighestFieldID = 0
	tb.Schemas = map[int32]domain.Schema{1: old}
	fake.AddTable(tb)
	c := meta.New(fake, meta.Options{})
	got, err := c.Table(ctx(t), domain.TablePath{Database: "db", Table: "t"})
	require.NoError(t, err)
	s, err := c.Schema(ctx(t), got, 1)
	require.NoError(t, err)
	assert.Len(t, s.Columns, 1)
	s, err = c.Schema(ctx(t), got, 2)
	require.NoError(t, err)
	assert.Len(t, s.Columns, 2)
	_, err = c.Schema(ctx(t), got, 1)
	require.NoError(t, err)
	assert.Equal(t, 1, fake.Calls(wire.KeyGetTableSchema))
}

func TestInvalidateDatabase(t *testing.T) {
	t.Parallel()
	fake := metatest.New(1)
	fake.AddTable(table(7, "t", 1))
	fake.AddTable(table(9, "u", 1))
	c := meta.New(fake, meta.Options{})
	for _, name := range []string{"t", "u"} {
		_, err := c.Table(ctx(t), domain.TablePath{Database: "db", Table: name})
		require.NoError(t, err)
	}
	require.Equal(t, 2, fake.Calls(wire.KeyGetMetadata))
	c.InvalidateDatabase("other")
	_, err := c.Table(ctx(t), domain.TablePath{Database: "db", Table: "t"})
	require.NoError(t, err)
	assert.Equal(t, 2, fake.Calls(wire.KeyGetMetadata), "another database's drop keeps the cache")

	c.InvalidateDatabase("db")
	_, ok := c.TableByID(7)
	assert.False(t, ok)
	_, ok = c.TableByID(9)
	assert.False(t, ok)
	_, err = c.Table(ctx(t), domain.TablePath{Database: "db", Table: "u"})
	require.NoError(t, err)
	assert.Equal(t, 3, fake.Calls(wire.KeyGetMetadata), "reloaded after the database was dropped")
}

// Partition names Fluss cannot hold are refused before any request, so a
// writer or lookup never waits on the server's internal errors for them.
func TestPartitionInvalidNameNoRequest(t *testing.T) {
	t.Parallel()
	fake := metatest.New(1)
	fake.AddTable(table(7, "p", 2, "dt"))
	c := meta.New(fake, meta.Options{})
	tb, err := c.Table(ctx(t), domain.TablePath{Database: "db", Table: "p"})
	require.NoError(t, err)
	calls := fake.Calls(wire.KeyGetMetadata)
	for _, name := range []string{"", "..", "a/b", "a$b", "é"} {
		_, err := c.Partition(ctx(t), tb, name, true)
		de := domain.AsError(err)
		require.NotNil(t, de, "%q", name)
		assert.Equal(t, domain.KindInvalidArgument, de.Kind, "%q", name)
	}
	assert.Equal(t, calls, fake.Calls(wire.KeyGetMetadata))
	assert.Zero(t, fake.Calls(wire.KeyCreatePartition))
}
