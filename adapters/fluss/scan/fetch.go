package scan

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// minBucketBytes is the least max_fetch_bytes asked per bucket.
const minBucketBytes = 64 << 10

// Fetch implements domain.LogScanner: one FETCH_LOG per leader, concurrently;
// see the package documentation.
func (s *Scanner) Fetch(ctx context.Context, req *domain.FetchLogRequest) (*domain.FetchLogResponse, error) {
	t, err := s.table(ctx, req.Table, req.TableID)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(req.Columns, func(c int) bool { return c >= len(t.Info.Descriptor.Schema.Columns) }) {
		// A column added since the metadata was cached (the caller's
		// definition is newer): reload once.
		if t, err = s.md.Reload(ctx, req.Table); err != nil {
			return nil, meta.DomainError(err, fmt.Sprintf("table `%s`", req.Table))
		}
	}
	plan, err := s.newPlan(ctx, t, req.Columns)
	if err != nil {
		return nil, err
	}
	out := &domain.FetchLogResponse{TableID: t.ID(), SchemaID: t.Info.SchemaID, Buckets: make([]domain.FetchedBucket, len(req.Positions))}
	for i, p := range req.Positions {
		out.Buckets[i] = domain.FetchedBucket{LogBucket: p.LogBucket, FetchOffset: p.Offset, NextOffset: p.Offset,
			HighWatermark: -1, LogStartOffset: -1}
	}
	if len(req.Positions) == 0 {
		return out, nil
	}
	maxBytes := req.MaxBytes
	if maxBytes <= 0 {
		maxBytes = 8 << 20
	}
	perBucket := max(minBucketBytes, maxBytes/len(req.Positions))
	// Bounded by a record count: ask about the bytes that many take (the
	// tablet server shares the request's bytes among its buckets).
	reqBytes := s.sizes.fetchBytes(t.ID(), req.MaxRecords, maxBytes)

	groups := map[int32]*fetchGroup{}
	var order []*fetchGroup
	refreshed := map[int64]error{}
	for i, p := range req.Positions {
		n, err := s.leader(ctx, t, p.LogBucket, refreshed)
		if err != nil {
			de := domain.AsError(err)
			if de == nil || !de.Retryable {
				return nil, err
			}
			out.Buckets[i].Err = de
			continue
		}
		g := groups[n.ID]
		if g == nil {
			g = &fetchGroup{node: n}
			groups[n.ID] = g
			order = append(order, g)
		}
		g.idx = append(g.idx, i)
	}

	// With a wait, the first answer carrying records ends the others.
	waitCtx, cancelWait := context.WithCancel(ctx)
	defer cancelWait()
	var wg sync.WaitGroup
	for _, g := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &flusspb.PbFetchLogReqForTable{TableId: ptr(t.ID()), ProjectionPushdownEnabled: ptr(plan.pushdown != nil),
				ProjectedFields: plan.pushdown}
			for _, i := range g.idx {
				p := req.Positions[i]
				br := &flusspb.PbFetchLogReqForBucket{BucketId: ptr(p.Bucket), FetchOffset: ptr(p.Offset), MaxFetchBytes: ptr(int32(perBucket))}
				if p.PartitionID != domain.NoPartitionID {
					br.PartitionId = ptr(p.PartitionID)
				}
				tr.BucketsReq = append(tr.BucketsReq, br)
			}
			r := &flusspb.FetchLogRequest{FollowerServerId: ptr(int32(-1)), MaxBytes: ptr(int32(reqBytes)),
				TablesReq: []*flusspb.PbFetchLogReqForTable{tr}, MinBytes: ptr(int32(1)),
				MaxWaitMs: ptr(int32(req.MaxWait / time.Millisecond))}
			callCtx := ctx
			if req.MaxWait > 0 {
				callCtx = waitCtx
			}
			g.err = s.call.Call(callCtx, meta.Node(g.node.ID), wire.KeyFetchLog, r, &g.resp)
			if g.err == nil && req.MaxWait > 0 && hasRecords(&g.resp) {
				cancelWait()
			}
		}()
	}
	wg.Wait()

	ahead := s.decodeFetchedAhead(ctx, t, plan, req, out, order)
	rows := 0
	for _, g := range order {
		if g.err != nil {
			if waitCtx.Err() != nil && ctx.Err() == nil {
				continue // ended by another leader's records: nothing read, positions stay
			}
			de := domain.AsError(meta.DomainError(g.err, fmt.Sprintf("fetching the log of table `%s` from tablet server %d", req.Table, g.node.ID)))
			if ctx.Err() != nil || (de != nil && !de.Retryable && !meta.Retriable(g.err)) {
				return nil, de
			}
			for _, i := range g.idx {
				s.md.InvalidateLeaders(t.ID(), req.Positions[i].PartitionID)
				out.Buckets[i].Err = de
			}
			continue
		}
		got := bucketAnswers(t.ID(), &g.resp)
		for _, i := range g.idx {
			fb := &out.Buckets[i]
			br, ok := got[bucketKey{fb.PartitionID, fb.Bucket}]
			if !ok {
				fb.Err = &domain.Error{Kind: domain.KindUnavailable, Retryable: true,
					Message: fmt.Sprintf("tablet server %d did not answer for %s", g.node.ID, where(t.Path(), fb.LogBucket))}
				continue
			}
			if br.HighWatermark != nil {
				fb.HighWatermark = br.GetHighWatermark()
			}
			if br.LogStartOffset != nil {
				fb.LogStartOffset = br.GetLogStartOffset()
			}
			if code := wire.ErrorCode(br.GetErrorCode()); code != wire.CodeNone {
				fb.OutOfRange = code == wire.CodeLogOffsetOutOfRangeException
				fb.Err = s.bucketError(t, fb.LogBucket, code, br.GetErrorMessage())
				continue
			}
			if br.GetRemoteLogFetchInfo() != nil && len(br.GetRecords()) == 0 {
				fb.Err = &domain.Error{Kind: domain.KindUnsupported,
					Message: fmt.Sprintf("%s: offset %d is in remote (tiered) storage, which this gateway does not read", where(t.Path(), fb.LogBucket), fb.FetchOffset)}
				continue
			}
			limit := -1
			if req.MaxRecords > 0 {
				limit = max(0, req.MaxRecords-rows)
				if limit == 0 {
					continue // not read: the position stays
				}
			}
			if err := s.decodeBucket(ctx, t, plan, fb, br.GetRecords(), limit, ahead[i]); err != nil {
				return nil, err
			}
			rows += len(fb.Records)
		}
	}
	s.sizes.observe(t.ID(), plan.seenBytes, plan.seenRecords)
	return out, nil
}

// fetchGroup is the FetchLog of one tablet server: the positions of the
// buckets it leads (indexes into the request's) and its answer.
type fetchGroup struct {
	node meta.ServerNode
	idx  []int
	resp flusspb.FetchLogResponse
	err  error
}

// bucketKey names a bucket of a table in a FetchLog answer.
type bucketKey struct {
	part   int64
	bucket int32
}

// bucketAnswers indexes the bucket answers for table id in resp.
func bucketAnswers(id int64, resp *flusspb.FetchLogResponse) map[bucketKey]*flusspb.PbFetchLogRespForBucket {
	got := map[bucketKey]*flusspb.PbFetchLogRespForBucket{}
	for _, tr := range resp.GetTablesResp() {
		if tr.GetTableId() != id {
			continue
		}
		for _, br := range tr.GetBucketsResp() {
			part := domain.NoPartitionID
			if br.PartitionId != nil {
				part = br.GetPartitionId()
			}
			got[bucketKey{part, br.GetBucketId()}] = br
		}
	}
	return got
}

// decodeFetchedAhead decodes ahead, in parallel (predecode.go), the batches
// the in-order pass over the answers in order will decode, and returns per
// bucket index its jobs by batch position.
func (s *Scanner) decodeFetchedAhead(ctx context.Context, t *meta.Table, plan *plan, req *domain.FetchLogRequest,
	out *domain.FetchLogResponse, order []*fetchGroup) [][]*batchJob {
	var buckets []aheadBucket
	for _, g := range order {
		if g.err != nil {
			continue
		}
		got := bucketAnswers(t.ID(), &g.resp)
		for _, i := range g.idx {
			fb := &out.Buckets[i]
			br, ok := got[bucketKey{fb.PartitionID, fb.Bucket}]
			if !ok || wire.ErrorCode(br.GetErrorCode()) != wire.CodeNone || len(br.GetRecords()) == 0 {
				continue
			}
			buckets = append(buckets, aheadBucket{idx: i, records: br.GetRecords(), from: fb.FetchOffset})
		}
	}
	jobs, byBucket, records := planAhead(buckets, req.MaxRecords, len(out.Buckets))
	if records >= aheadMinRecords {
		s.decodeAhead(ctx, t, plan, jobs)
	} // else the jobs stay undone: the in-order pass decodes every batch
	return byBucket
}

func hasRecords(resp *flusspb.FetchLogResponse) bool {
	for _, tr := range resp.GetTablesResp() {
		for _, br := range tr.GetBucketsResp() {
			if len(br.GetRecords()) > 0 {
				return true
			}
		}
	}
	return false
}

// nextBatch cuts the first log batch off b by its LOG_OVERHEAD (base
// offset, then the length of the rest; fluss-common LogRecordBatchFormat):
// the batch and what follows it. It returns no batch when b holds no whole
// batch (shorter than LOG_OVERHEAD or than its length says: the server cut
// the answer at its byte limit), and a negative length as read.
func nextBatch(b []byte) (batch, rest []byte, length int32) {
	if len(b) < record.LogOverhead {
		return nil, b, 0
	}
	length = int32(binary.LittleEndian.Uint32(b[8:]))
	size := int64(length) + record.LogOverhead
	if length < 0 || size > int64(len(b)) {
		return nil, b, length
	}
	return b[:size], b[size:], length
}

// decodeBucket decodes the batches of one bucket's answer into fb, skipping
// records below the fetch offset and stopping after limit records (no
// limit when negative). A truncated last batch (the server cut the answer
// at its byte limit) is left for the next fetch.
func (s *Scanner) decodeBucket(ctx context.Context, t *meta.Table, plan *plan, fb *domain.FetchedBucket, b []byte, limit int, ahead []*batchJob) error {
	if n := aheadRecords(ahead, limit); n > 0 {
		fb.Records = slices.Grow(fb.Records, n) // room once for the records decoded ahead
	}
	for pos := 0; len(b) > 0; pos++ {
		batch, rest, length := nextBatch(b)
		if length < 0 {
			return &domain.Error{Kind: domain.KindBackend,
				Message: fmt.Sprintf("%s: a log batch at offset %d has a negative length", where(t.Path(), fb.LogBucket), fb.NextOffset)}
		}
		if batch == nil {
			break // truncated by the server's byte limit: read it next time
		}
		b = rest
		before := len(fb.Records)
		records, next, err := s.decodeBatch(ctx, t, plan, batch, fb.NextOffset, limit, jobAt(ahead, pos, batch), fb.Records)
		if err != nil {
			if domain.IsStaleDefinition(err) {
				return err // a batch of a newer schema: the caller reads again with it
			}
			return &domain.Error{Kind: domain.KindBackend,
				Message: fmt.Sprintf("%s: the log batch at offset %d cannot be read: %v", where(t.Path(), fb.LogBucket), fb.NextOffset, err), Cause: err}
		}
		fb.Records = records
		if next > fb.NextOffset {
			fb.NextOffset = next
		}
		if limit >= 0 {
			limit -= len(records) - before
			if limit == 0 {
				break
			}
		}
	}
	return nil
}

// decodeBatch decodes one batch; it returns dst with the records at or
// after from appended (at most limit of them when limit >= 0) and the
// offset after the last record it consumed. job, when not nil, is the
// batch decoded ahead.
func (s *Scanner) decodeBatch(ctx context.Context, t *meta.Table, plan *plan, batch []byte, from int64, limit int, job *batchJob, dst []domain.LogRecord) ([]domain.LogRecord, int64, error) {
	var h record.LogBatch
	if job != nil {
		h = job.h
	} else {
		var err error
		if h, err = plan.readHeader(batch); err != nil {
			return nil, 0, err
		}
	}
	plan.seenBytes += int64(len(batch))
	plan.seenRecords += int64(h.RecordCount)
	end := h.BaseOffset + int64(h.LastOffsetDelta) + 1
	if h.RecordCount == 0 || end <= from {
		return dst, max(end, from), nil
	}
	var dec *batchDecoder
	var rows [][]domain.Datum
	var cts []record.ChangeType
	if job != nil {
		dec, rows, cts = job.dec, job.rows, job.cts
	} else {
		var err error
		if dec, err = plan.decoder(ctx, s, t, int32(h.SchemaID)); err != nil {
			return nil, 0, err
		}
		if rows, cts, err = dec.decode(batch, &h); err != nil {
			return nil, 0, err
		}
	}
	out, n := dst, 0 // n: records appended
	next := from
	for i, row := range rows {
		off := h.BaseOffset + int64(i)
		if off < from {
			continue
		}
		if limit >= 0 && n >= limit {
			return out, next, nil
		}
		ct := record.ChangeAppendOnly
		if cts != nil {
			ct = cts[i]
		}
		out = append(out, domain.LogRecord{Offset: off, Timestamp: h.CommitTimestamp, ChangeType: ct.String(), Row: plan.project(dec, row)})
		n++
		next = off + 1
	}
	if limit < 0 || n < limit {
		next = max(next, end)
	}
	return out, next, nil
}

// logFormat is `table.log.format`.
type logFormat uint8

const (
	logArrow logFormat = iota
	logIndexed
	logCompacted
)

func tableLogFormat(t *meta.Table) (logFormat, error) {
	switch f := strings.ToUpper(strings.TrimSpace(t.Property("table.log.format"))); f {
	case "", "ARROW":
		return logArrow, nil
	case "INDEXED":
		return logIndexed, nil
	case "COMPACTED":
		return logCompacted, nil
	default:
		return 0, &domain.Error{Kind: domain.KindUnsupported, Message: fmt.Sprintf("table `%s`: log format %q cannot be read", t.Path(), f)}
	}
}

// plan is how one Fetch reads rows: the requested columns of the current
// schema, what is pushed down, and one decoder per schema id met.
type plan struct {
	format  logFormat
	current domain.Schema
	// want are the requested current-schema columns, in request order.
	want []domain.Column
	// pushdown are the projected positions sent (ascending), nil when the
	// server sends whole rows.
	pushdown []int32
	decoders map[int32]*batchDecoder
	// seenBytes and seenRecords add up the batches read (recordSizes).
	seenBytes, seenRecords int64
}

func (s *Scanner) newPlan(ctx context.Context, t *meta.Table, columns []int) (*plan, error) {
	format, err := tableLogFormat(t)
	if err != nil {
		return nil, err
	}
	cur, err := s.md.Schema(ctx, t, t.Info.SchemaID)
	if err != nil {
		return nil, meta.DomainError(err, fmt.Sprintf("schema of table `%s`", t.Path()))
	}
	p := &plan{format: format, current: cur, decoders: map[int32]*batchDecoder{}}
	if columns == nil {
		p.want = cur.Columns
		return p, nil
	}
	seen := map[int]bool{}
	for _, c := range columns {
		if c < 0 || c >= len(cur.Columns) {
			return nil, domain.InvalidArgument("columns: position %d outside the %d columns of table `%s`", c, len(cur.Columns), t.Path())
		}
		if seen[c] {
			return nil, domain.InvalidArgument("columns: column `%s` is named twice", cur.Columns[c].Name)
		}
		seen[c] = true
		p.want = append(p.want, cur.Columns[c])
	}
	if format == logArrow && s.pushable(ctx, t, columns) {
		for _, c := range columns {
			p.pushdown = append(p.pushdown, int32(c))
		}
		slices.Sort(p.pushdown)
	}
	return p, nil
}

// pushable reports whether the projection can be pushed to the tablet
// servers. They project each batch by position within the batch's own
// schema (apache/fluss v0.9.1 fluss-common FileLogProjection), and refuse
// a position the batch's schema does not have (error 34,
// INVALID_COLUMN_PROJECTION, "Projected fields [0, 3] is out of bound for
// schema with 3 fields", seen on 0.9.1). Columns are only ever added last
// (apache/fluss SchemaUpdate: ADD COLUMN ... LAST is the only column
// change, 0.9.1 and 1.0), so a position names the same column in every
// schema that has it, and every schema has the positions of the table's
// first schema (id 1): the projection is pushed when it stays within
// those. Otherwise the servers send whole rows, decoded by each batch's
// schema and projected here.
func (s *Scanner) pushable(ctx context.Context, t *meta.Table, columns []int) bool {
	if t.Info.SchemaID <= 1 {
		return true
	}
	first, err := s.md.Schema(ctx, t, 1)
	if err != nil {
		return false
	}
	for _, c := range columns {
		if c >= len(first.Columns) {
			return false
		}
	}
	return true
}

// project maps a decoded row onto the requested columns; a row whose
// columns are the requested ones, in order, is returned as it is.
func (p *plan) project(d *batchDecoder, row []domain.Datum) []domain.Datum {
	if d.identity && len(row) == len(d.mapping) {
		return row
	}
	out := make([]domain.Datum, len(d.mapping))
	for i, src := range d.mapping {
		if src < 0 || src >= len(row) {
			out[i] = domain.Datum{Null: true}
		} else {
			out[i] = row[src]
		}
	}
	return out
}

func (p *plan) decoder(ctx context.Context, s *Scanner, t *meta.Table, schemaID int32) (*batchDecoder, error) {
	if d, ok := p.decoders[schemaID]; ok {
		return d, nil
	}
	var src domain.Schema
	switch {
	case schemaID == t.Info.SchemaID:
		src = p.current
	case schemaID > t.Info.SchemaID:
		// Written after the schema this read was planned with (a column
		// was added since the metadata was cached): the wanted columns
		// may miss a new one. Reload the table, and let the caller plan
		// again with the new schema.
		if _, err := s.md.Reload(ctx, t.Path()); err != nil {
			return nil, meta.DomainError(err, fmt.Sprintf("table `%s`", t.Path()))
		}
		return nil, domain.NewStaleDefinition(&domain.StaleDefinitionError{Table: t.Path(),
			UsedTableID: t.ID(), TableID: t.ID(), UsedSchemaID: t.Info.SchemaID, SchemaID: schemaID})
	default:
		var err error
		if src, err = s.md.Schema(ctx, t, schemaID); err != nil {
			return nil, err
		}
	}
	cols := src.Columns
	if p.pushdown != nil {
		// The tablet server projects each batch by the pushed positions
		// within the batch's own schema, keeping those it has, in
		// ascending order (apache/fluss v0.9.1 fluss-common
		// FileLogProjection#createProjectionInfo): a batch of an older
		// schema lacks the columns added since. Columns are matched to
		// the wanted ones by id below.
		cols = make([]domain.Column, 0, len(p.pushdown))
		for _, c := range p.pushdown {
			if int(c) < len(src.Columns) {
				cols = append(cols, src.Columns[c])
			}
		}
	}
	d, err := newBatchDecoder(p.format, cols, s.opts.MaxBufferSize)
	if err != nil {
		return nil, err
	}
	d.mapping = columnMapping(cols, p.want)
	d.identity = true
	for i, src := range d.mapping {
		d.identity = d.identity && src == i
	}
	p.decoders[schemaID] = d
	return d, nil
}

// columnMapping gives, for each wanted column, its position among the
// decoded columns (by Fluss column id, or by name when a column has no id),
// or -1 when the batch does not have it (a column added later: null).
func columnMapping(decoded, want []domain.Column) []int {
	byID := true
	for _, cols := range [2][]domain.Column{decoded, want} {
		for _, c := range cols {
			if c.ID == domain.UnassignedFieldID {
				byID = false
			}
		}
	}
	out := make([]int, len(want))
	for i, w := range want {
		out[i] = slices.IndexFunc(decoded, func(d domain.Column) bool {
			if byID {
				return d.ID == w.ID
			}
			return d.Name == w.Name
		})
	}
	return out
}
