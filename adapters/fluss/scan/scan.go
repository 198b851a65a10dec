package scan

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
	"github.com/fluss-gateway/fluss-gateway-go/internal/defaults"
)

// Metadata is what the package needs from the table metadata cache
// (meta.Source, shared with the other read path); *meta.Cache implements it.
type Metadata = meta.Source

// Defaults of Options.
const (
	DefaultMaxAttempts  = 20
	DefaultRetryBackoff = 50 * time.Millisecond
	// DefaultMaxBufferSize bounds one decompressed Arrow buffer.
	DefaultMaxBufferSize = 64 << 20
)

// Options configure a Scanner; the zero value takes every default.
type Options struct {
	// MaxAttempts bounds the rounds of a ListOffsets whose buckets answer
	// retriable errors (leader moved); the caller's deadline bounds them too.
	MaxAttempts int
	// RetryBackoff is the wait between those rounds (doubling, at most 1 s).
	RetryBackoff time.Duration
	// MaxBufferSize bounds one decompressed Arrow buffer of a fetched batch.
	MaxBufferSize int
}

// Scanner is the domain.LogScanner of one cluster connection. It holds no
// state between calls but the shared metadata cache and the learned record
// sizes (a fetch-size hint), and no goroutines outside a call.
type Scanner struct {
	call  meta.Caller
	md    Metadata
	opts  Options
	sizes recordSizes
}

var _ domain.LogScanner = (*Scanner)(nil)

// New returns a Scanner that sends through call and resolves tables,
// partitions and leaders through md.
func New(call meta.Caller, md Metadata, opts Options) *Scanner {
	opts.MaxAttempts = defaults.Positive(opts.MaxAttempts, DefaultMaxAttempts)
	opts.RetryBackoff = defaults.Positive(opts.RetryBackoff, DefaultRetryBackoff)
	opts.MaxBufferSize = defaults.Positive(opts.MaxBufferSize, DefaultMaxBufferSize)
	return &Scanner{call: call, md: md, opts: opts}
}

// table resolves path; tableID, when not 0, must still be its id (a table
// dropped and re-created since is a stale definition).
func (s *Scanner) table(ctx context.Context, path domain.TablePath, tableID int64) (*meta.Table, error) {
	what := fmt.Sprintf("table `%s`", path)
	t, err := s.md.Table(ctx, path)
	if err != nil {
		return nil, meta.DomainError(err, what)
	}
	if tableID != 0 && t.ID() != tableID {
		if t, err = s.md.Reload(ctx, path); err != nil {
			return nil, meta.DomainError(err, what)
		}
		if t.ID() != tableID {
			return nil, domain.NewStaleDefinition(&domain.StaleDefinitionError{Table: path,
				UsedTableID: tableID, TableID: t.ID(), SchemaID: t.Info.SchemaID})
		}
	}
	return t, nil
}

// Buckets implements domain.LogScanner: the buckets of the named partitions
// (every partition now existing when none are named, listed with
// LIST_PARTITION_INFOS), restricted to req.Buckets, ordered by partition
// name, then bucket.
func (s *Scanner) Buckets(ctx context.Context, req *domain.LogBucketsRequest) ([]domain.LogBucket, error) {
	t, err := s.table(ctx, req.Table, req.TableID)
	if err != nil {
		return nil, err
	}
	for _, b := range req.Buckets {
		if b < 0 || int(b) >= t.NumBuckets {
			return nil, domain.InvalidArgument("buckets: table `%s` has buckets 0..%d, not %d", req.Table, t.NumBuckets-1, b)
		}
	}
	buckets := req.Buckets
	if buckets == nil {
		buckets = make([]int32, t.NumBuckets)
		for i := range buckets {
			buckets[i] = int32(i)
		}
	}
	if !t.Partitioned {
		if len(req.Partitions) > 0 {
			return nil, domain.InvalidArgument("partitions: table `%s` is not partitioned", req.Table)
		}
		out := make([]domain.LogBucket, len(buckets))
		for i, b := range buckets {
			out[i] = domain.LogBucket{PartitionID: domain.NoPartitionID, Bucket: b}
		}
		return out, nil
	}
	type part struct {
		id   int64
		name string
	}
	var parts []part
	if req.Partitions == nil {
		var resp flusspb.ListPartitionInfosResponse
		err := s.call.Call(ctx, meta.Any(), wire.KeyListPartitionInfos,
			&flusspb.ListPartitionInfosRequest{TablePath: &flusspb.PbTablePath{
				DatabaseName: &req.Table.Database, TableName: &req.Table.Table}}, &resp)
		if err != nil {
			return nil, meta.DomainError(err, fmt.Sprintf("listing the partitions of table `%s`", req.Table))
		}
		for _, p := range resp.GetPartitionsInfo() {
			kvs := p.GetPartitionSpec().GetPartitionKeyValues()
			spec := make(domain.PartitionSpec, len(kvs))
			for i, kv := range kvs {
				spec[i] = domain.PartitionValue{Key: kv.GetKey(), Value: kv.GetValue()}
			}
			parts = append(parts, part{p.GetPartitionId(), domain.PartitionName(spec)})
		}
	} else {
		for _, name := range req.Partitions {
			id, err := s.md.Partition(ctx, t, name, false)
			if err != nil {
				return nil, err
			}
			parts = append(parts, part{id, name})
		}
	}
	slices.SortFunc(parts, func(a, b part) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	out := make([]domain.LogBucket, 0, len(parts)*len(buckets))
	for _, p := range parts {
		for _, b := range buckets {
			out = append(out, domain.LogBucket{PartitionID: p.id, Partition: p.name, Bucket: b})
		}
	}
	return out, nil
}

// leader returns the leader of b, refreshing the leaders of its physical
// table once per call (refreshed remembers which were).
func (s *Scanner) leader(ctx context.Context, t *meta.Table, b domain.LogBucket, refreshed map[int64]error) (meta.ServerNode, error) {
	if n, ok := s.md.Leader(t.ID(), b.PartitionID, b.Bucket); ok {
		return n, nil
	}
	err, done := refreshed[b.PartitionID]
	if !done {
		err = s.md.RefreshLeaders(ctx, t.ID(), b.PartitionID)
		refreshed[b.PartitionID] = err
	}
	if err != nil {
		return meta.ServerNode{}, err
	}
	if n, ok := s.md.Leader(t.ID(), b.PartitionID, b.Bucket); ok {
		return n, nil
	}
	return meta.ServerNode{}, &domain.Error{Kind: domain.KindUnavailable, Retryable: true,
		Message: fmt.Sprintf("%s has no leader", where(t.Path(), b))}
}

// where names a bucket in messages.
func where(path domain.TablePath, b domain.LogBucket) string {
	if b.Partition != "" {
		return fmt.Sprintf("bucket %d of partition `%s` of table `%s`", b.Bucket, b.Partition, path)
	}
	return fmt.Sprintf("bucket %d of table `%s`", b.Bucket, path)
}

// bucketError translates a per-bucket error code; retriable codes drop the
// cached leaders of the bucket's physical table.
func (s *Scanner) bucketError(t *meta.Table, b domain.LogBucket, code wire.ErrorCode, msg string) *domain.Error {
	what := where(t.Path(), b)
	if code.InvalidatesMetadata() {
		s.md.InvalidateLeaders(t.ID(), b.PartitionID)
	}
	if msg == "" {
		msg = code.Description()
	}
	de := domain.AsError(meta.DomainError(wire.NewServerError(code, msg), what))
	if de == nil {
		de = &domain.Error{Kind: domain.KindBackend, Message: what + ": " + msg}
	}
	if code.Retriable() || code.InvalidatesMetadata() {
		de.Retryable = true
		if de.Kind == domain.KindBackend {
			de.Kind = domain.KindUnavailable
		}
	}
	return de
}

// ListOffsets implements domain.LogScanner: one LIST_OFFSETS per (leader,
// partition), retried for buckets whose leader moved.
func (s *Scanner) ListOffsets(ctx context.Context, req *domain.ListOffsetsRequest) (*domain.ListOffsetsResponse, error) {
	t, err := s.table(ctx, req.Table, req.TableID)
	if err != nil {
		return nil, err
	}
	var offsetType int32
	switch req.Position {
	case domain.OffsetEarliest:
		offsetType = 0
	case domain.OffsetLatest:
		offsetType = 1
	case domain.OffsetTimestamp:
		offsetType = 2
	default:
		return nil, domain.InvalidArgument("unknown offset position %d", req.Position)
	}
	out := &domain.ListOffsetsResponse{TableID: t.ID(), Offsets: make([]domain.BucketOffset, len(req.Buckets))}
	pending := make([]int, len(req.Buckets))
	for i, b := range req.Buckets {
		pending[i] = i
		out.Offsets[i].LogBucket = b
	}
	waits := backoff.Policy{Initial: s.opts.RetryBackoff, Max: time.Second}.Start()
	var last error
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt >= s.opts.MaxAttempts {
			return nil, last
		}
		if attempt > 0 && !waits.Wait(ctx) {
			return nil, meta.DomainError(ctx.Err(), fmt.Sprintf("listing offsets of table `%s`", req.Table))
		}
		type groupKey struct {
			node int32
			part int64
		}
		type group struct {
			node meta.ServerNode
			part int64
			idx  []int
			resp flusspb.ListOffsetsResponse
			err  error
		}
		groups := map[groupKey]*group{}
		var order []*group
		var still []int
		refreshed := map[int64]error{}
		for _, i := range pending {
			b := req.Buckets[i]
			n, err := s.leader(ctx, t, b, refreshed)
			if err != nil {
				if de := domain.AsError(err); de != nil && !de.Retryable {
					return nil, err
				}
				last = err
				still = append(still, i)
				continue
			}
			k := groupKey{n.ID, b.PartitionID}
			g := groups[k]
			if g == nil {
				g = &group{node: n, part: b.PartitionID}
				groups[k] = g
				order = append(order, g)
			}
			g.idx = append(g.idx, i)
		}
		var wg sync.WaitGroup
		for _, g := range order {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := &flusspb.ListOffsetsRequest{FollowerServerId: ptr(int32(-1)), OffsetType: &offsetType, TableId: ptr(t.ID())}
				if g.part != domain.NoPartitionID {
					r.PartitionId = ptr(g.part)
				}
				if req.Position == domain.OffsetTimestamp {
					r.StartTimestamp = ptr(req.Timestamp)
				}
				for _, i := range g.idx {
					r.BucketId = append(r.BucketId, req.Buckets[i].Bucket)
				}
				g.err = s.call.Call(ctx, meta.Node(g.node.ID), wire.KeyListOffsets, r, &g.resp)
			}()
		}
		wg.Wait()
		for _, g := range order {
			if g.err != nil {
				de := domain.AsError(meta.DomainError(g.err, fmt.Sprintf("listing offsets of table `%s` at tablet server %d", req.Table, g.node.ID)))
				if ctx.Err() != nil || (de != nil && !de.Retryable && !meta.Retriable(g.err)) {
					return nil, de
				}
				s.md.InvalidateLeaders(t.ID(), g.part)
				last = de
				still = append(still, g.idx...)
				continue
			}
			got := map[int32]*flusspb.PbListOffsetsRespForBucket{}
			for _, br := range g.resp.GetBucketsResp() {
				got[br.GetBucketId()] = br
			}
			for _, i := range g.idx {
				b := req.Buckets[i]
				br, ok := got[b.Bucket]
				if !ok {
					last = &domain.Error{Kind: domain.KindBackend, Message: fmt.Sprintf("tablet server %d did not answer for %s", g.node.ID, where(t.Path(), b))}
					still = append(still, i)
					continue
				}
				if code := wire.ErrorCode(br.GetErrorCode()); code != wire.CodeNone {
					de := s.bucketError(t, b, code, br.GetErrorMessage())
					if !de.Retryable {
						return nil, de
					}
					last = de
					still = append(still, i)
					continue
				}
				out.Offsets[i].Offset = br.GetOffset()
			}
		}
		pending = still
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }
