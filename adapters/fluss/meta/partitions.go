package meta

// This file holds the partition cache: partition name ↔ id per table,
// loaded with GetMetadata and, when asked, created with CreatePartition.

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
)

// PartitionName returns the name of a cached partition.
func (c *Cache) PartitionName(tableID, partitionID int64) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[tableID]; ok {
		if pe, ok := e.partIDs[partitionID]; ok {
			return pe.name, true
		}
	}
	return "", false
}

// Partition resolves a partition name of table t to its id, fetching its
// metadata when it is not cached. When the partition does not exist and
// create is true it is created on the coordinator (ignoring a concurrent
// creation), as the Java client's dynamic partition creation does; otherwise
// the error is a partition_not_found *domain.Error.
func (c *Cache) Partition(ctx context.Context, t *Table, name string, create bool) (int64, error) {
	if !t.Partitioned {
		return NoPartition, domain.InvalidArgument("table `%s` is not partitioned", t.Path())
	}
	if id, ok := c.cachedPartition(t.ID(), name); ok {
		return id, nil
	}
	// A name Fluss cannot give a partition (an empty value, "..", other
	// characters) is refused before any request: the server answers such
	// metadata requests with internal errors, not PARTITION_NOT_EXISTS.
	spec, err := domain.ParsePartitionName(t.Info.Descriptor.PartitionKeys, name)
	if err != nil {
		return NoPartition, err
	}
	what := fmt.Sprintf("partition `%s` of table `%s`", name, t.Path())
	key := fmt.Sprintf("p:%d/%s/%t", t.ID(), name, create)
	err = c.do(ctx, key, func(ctx context.Context) error {
		err := c.fetchPartition(ctx, t, name)
		if err == nil || !create || ErrorCode(err) != wire.CodePartitionNotExists {
			return DomainError(err, what)
		}
		if err := c.createPartition(ctx, t, spec); err != nil {
			return DomainError(err, "creating "+what)
		}
		// The coordinator tells the tablet servers asynchronously; poll.
		deadline := c.opts.Now().Add(c.opts.PartitionCreateWait)
		wait := backoff.Policy{Initial: 50 * time.Millisecond, Max: 500 * time.Millisecond}.Start()
		for {
			err := c.fetchPartition(ctx, t, name)
			if err == nil || ErrorCode(err) != wire.CodePartitionNotExists || c.opts.Now().After(deadline) {
				return DomainError(err, what)
			}
			if !wait.Wait(ctx) {
				return DomainError(ctx.Err(), what)
			}
		}
	})
	if err != nil {
		return NoPartition, err
	}
	if id, ok := c.cachedPartition(t.ID(), name); ok {
		return id, nil
	}
	return NoPartition, &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourcePartition,
		Message: what + " does not exist"}
}

func (c *Cache) cachedPartition(tableID int64, name string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[tableID]; ok {
		if pe, ok := e.parts.Get(name); ok {
			return pe.id, true
		}
	}
	return NoPartition, false
}

// fetchPartition asks for the metadata of one partition by name; it returns
// the raw call error so that callers can see PARTITION_NOT_EXISTS.
func (c *Cache) fetchPartition(ctx context.Context, t *Table, name string) error {
	path := t.Path()
	req := &flusspb.MetadataRequest{
		TablePath: []*flusspb.PbTablePath{pbPath(path)},
		PartitionsPath: []*flusspb.PbPhysicalTablePath{{
			DatabaseName: proto.String(path.Database), TableName: proto.String(path.Table), PartitionName: proto.String(name),
		}},
	}
	var resp flusspb.MetadataResponse
	if err := c.call.Call(ctx, Any(), wire.KeyGetMetadata, req, &resp); err != nil {
		return err
	}
	return c.apply(&resp, path)
}

func (c *Cache) createPartition(ctx context.Context, t *Table, spec domain.PartitionSpec) error {
	pbSpec := &flusspb.PbPartitionSpec{}
	for _, pv := range spec {
		pbSpec.PartitionKeyValues = append(pbSpec.PartitionKeyValues,
			&flusspb.PbKeyValue{Key: proto.String(pv.Key), Value: proto.String(pv.Value)})
	}
	req := &flusspb.CreatePartitionRequest{
		TablePath:         pbPath(t.Path()),
		PartitionSpec:     pbSpec,
		IgnoreIfNotExists: proto.Bool(true), // means "ignore if it already exists"
	}
	return c.call.Call(ctx, Coordinator(), wire.KeyCreatePartition, req, &flusspb.CreatePartitionResponse{})
}
