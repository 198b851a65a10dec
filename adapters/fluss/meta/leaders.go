package meta

// This file holds the bucket-leader cache: the leader node of every
// physical bucket, refreshed after leadership errors, and the wait for
// a new table's leaders (AwaitLeaders).

import (
	"context"
	"fmt"
	"time"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
)

func leadersFromPB(bms []*flusspb.PbBucketMetadata, n int) []int32 {
	leaders := make([]int32, n)
	for i := range leaders {
		leaders[i] = NoLeader
	}
	for _, b := range bms {
		if id := int(b.GetBucketId()); id >= 0 && id < n && b.LeaderId != nil {
			leaders[id] = b.GetLeaderId()
		}
	}
	return leaders
}

// InvalidateLeaders forgets the bucket leaders of one physical table
// (partition NoPartition for a non-partitioned table), so that the next
// Leader call reports them unknown and the caller refreshes them.
func (c *Cache) InvalidateLeaders(tableID, partitionID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[tableID]
	if !ok {
		return
	}
	if partitionID == NoPartition {
		e.leaders = nil
	} else if pe, ok := e.partIDs[partitionID]; ok {
		pe.leaders = nil
	}
}

// Leader returns the leader node of a bucket; ok is false when the table,
// partition or leader is unknown or the leader's address is not known.
func (c *Cache) Leader(tableID, partitionID int64, bucket int32) (ServerNode, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[tableID]
	if !ok {
		return ServerNode{}, false
	}
	leaders := e.leaders
	if partitionID != NoPartition {
		pe, ok := e.partIDs[partitionID]
		if !ok {
			return ServerNode{}, false
		}
		leaders = pe.leaders
	}
	if int(bucket) < 0 || int(bucket) >= len(leaders) || leaders[bucket] == NoLeader {
		return ServerNode{}, false
	}
	n, ok := c.nodes[leaders[bucket]]
	return n, ok
}

// AvailableBuckets appends to dst the buckets of a physical table that have
// a known leader (for sticky assignment of key-less log rows).
func (c *Cache) AvailableBuckets(dst []int32, tableID, partitionID int64) []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[tableID]
	if !ok {
		return dst
	}
	leaders := e.leaders
	if partitionID != NoPartition {
		if pe, ok := e.partIDs[partitionID]; ok {
			leaders = pe.leaders
		} else {
			leaders = nil
		}
	}
	for b, l := range leaders {
		if _, known := c.nodes[l]; l != NoLeader && known {
			dst = append(dst, int32(b))
		}
	}
	return dst
}

// RefreshLeaders fetches the bucket metadata of one physical table. A
// partition that no longer exists is forgotten and reported as
// partition_not_found; a table that no longer exists (or was re-created with
// another id) as table_not_found.
func (c *Cache) RefreshLeaders(ctx context.Context, tableID, partitionID int64) error {
	c.mu.Lock()
	e, ok := c.byID[tableID]
	var path domain.TablePath
	if ok {
		path = e.path
	}
	c.mu.Unlock()
	if !ok {
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable,
			Message: fmt.Sprintf("table id %d is not in the metadata cache", tableID)}
	}
	key := fmt.Sprintf("l:%d/%d", tableID, partitionID)
	err := c.do(ctx, key, func(ctx context.Context) error {
		req := &flusspb.MetadataRequest{TablePath: []*flusspb.PbTablePath{pbPath(path)}}
		if partitionID != NoPartition {
			req.PartitionsId = []int64{partitionID}
		}
		var resp flusspb.MetadataResponse
		err := c.call.Call(ctx, Any(), wire.KeyGetMetadata, req, &resp)
		switch ErrorCode(err) {
		case wire.CodePartitionNotExists:
			c.mu.Lock()
			if pe, ok := e.partIDs[partitionID]; ok {
				delete(e.partIDs, partitionID)
				e.parts.Remove(pe.name)
			}
			c.mu.Unlock()
		case wire.CodeTableNotExist:
			c.Invalidate(path)
		}
		if err != nil {
			return DomainError(err, fmt.Sprintf("table `%s`", path))
		}
		err = c.apply(&resp, path)
		return err
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.byID[tableID]; !ok || cur.table == nil || cur.table.ID() != tableID {
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable,
			Message: fmt.Sprintf("table `%s` with id %d no longer exists", path, tableID)}
	}
	return nil
}

// AwaitLeaders polls the metadata of the table at path (a fresh load from
// the coordinator each time, 50 ms apart doubling to 500 ms; see
// BucketsWithoutLeader for why the coordinator) until every bucket has a leader whose
// address is known, so that a table just created is writable when its
// creation is answered. It gives up at until, or when ctx ends, with a
// KindUnavailable *domain.Error naming the table and how many buckets still
// had no leader. A table the metadata does not show yet counts as having no
// leaders. Partitioned tables return at once: their buckets come with their
// partitions.
func (c *Cache) AwaitLeaders(ctx context.Context, path domain.TablePath, until time.Time) error {
	start := c.opts.Now()
	waits := backoff.Policy{Initial: 50 * time.Millisecond, Max: 500 * time.Millisecond}.Start()
	for {
		missing, total, err := c.leaderless(ctx, path)
		switch {
		case err == nil && missing == 0:
			return nil
		case err != nil && domain.KindOf(err) != domain.KindNotFound && domain.KindOf(err) != domain.KindUnavailable:
			return err
		}
		wait := min(waits.Next(), until.Sub(c.opts.Now()))
		if wait <= 0 || ctx.Err() != nil {
			msg := fmt.Sprintf("table `%s` was created, but after %s not every bucket has a leader", path, c.opts.Now().Sub(start).Round(time.Millisecond))
			if total > 0 {
				msg += fmt.Sprintf(" (%d of %d without one)", missing, total)
			} else if err != nil {
				msg += " (the metadata does not show the table yet)"
			}
			return &domain.Error{Kind: domain.KindUnavailable, Resource: domain.ResourceTable, Retryable: true, Cause: err,
				Message: msg + "; writes and lookups fail until Fluss assigns them"}
		}
		backoff.Sleep(ctx, wait) // an ended ctx is reported by the next round
	}
}

// leaderless reloads path and counts its buckets without a known leader.
func (c *Cache) leaderless(ctx context.Context, path domain.TablePath) (missing, total int, err error) {
	_, missing, total, err = c.BucketsWithoutLeader(ctx, path)
	return missing, total, err
}

// BucketsWithoutLeader reloads the metadata of the table at path from the
// coordinator (a fresh load, as AwaitLeaders does) and returns its table id,
// how many of its buckets have no leader whose address is known, and its
// bucket count. A partitioned table reports 0 of 0: its buckets come with
// its partitions. Errors are those of Reload (KindNotFound while the
// metadata does not show the table).
//
// Only the coordinator's answer is believed here: right after a table is
// dropped and created again at the same path, a tablet server of Fluss
// 0.9.1 answers with the new table's info (read from ZooKeeper) but the
// bucket leaders of the dropped one, still in its cache under the old table
// id (TabletServerMetadataCache#getTableMetadata takes the id from its
// snapshot and the TableInfo from ZooKeeper), so a table whose buckets have
// no leader yet, or never will, looks ready. The coordinator answers from
// its own context (leaders only once it processed the creation) or from
// ZooKeeper.
func (c *Cache) BucketsWithoutLeader(ctx context.Context, path domain.TablePath) (tableID int64, missing, total int, err error) {
	t, err := c.reload(ctx, path, Coordinator())
	if err != nil {
		return 0, 0, 0, err
	}
	if t.Partitioned {
		return t.ID(), 0, 0, nil
	}
	have := len(c.AvailableBuckets(nil, t.ID(), NoPartition))
	return t.ID(), t.NumBuckets - have, t.NumBuckets, nil
}
