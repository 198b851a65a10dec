package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
	"github.com/fluss-gateway/fluss-gateway-go/internal/defaults"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

// Defaults of ScanLimits; bootstrap/config's defaults of
// `gateway.rest.scan.*` are these constants.
const (
	DefaultScanMaxRows     = 10_000
	DefaultScanDefaultRows = 500
	DefaultScanMaxWait     = 30 * time.Second
	DefaultScanMaxBytes    = 8 << 20
)

// ScanLimits bound log scans (`gateway.rest.scan.*`).
type ScanLimits struct {
	// MaxRows caps a scan's max_rows (DefaultScanMaxRows).
	MaxRows int
	// DefaultRows is max_rows when a request leaves it out
	// (DefaultScanDefaultRows, at most MaxRows).
	DefaultRows int
	// MaxWait caps max_wait_ms, the long poll (DefaultScanMaxWait).
	MaxWait time.Duration
	// MaxBytes bounds the record bytes fetched from Fluss for one answer
	// (DefaultScanMaxBytes); the rendered answer is of the same order.
	MaxBytes int
}

func (l ScanLimits) withDefaults() ScanLimits {
	l.MaxRows = defaults.Positive(l.MaxRows, DefaultScanMaxRows)
	l.DefaultRows = defaults.Positive(l.DefaultRows, min(DefaultScanDefaultRows, l.MaxRows))
	l.MaxWait = defaults.Positive(l.MaxWait, DefaultScanMaxWait)
	l.MaxBytes = defaults.Positive(l.MaxBytes, DefaultScanMaxBytes)
	return l
}

// ScanOptions configure the ScanService.
type ScanOptions struct {
	Limits ScanLimits
	// SchemaCacheSize as in RecordOptions.
	SchemaCacheSize int
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Metrics counts scans; nil: none.
	Metrics ScanMetrics
}

// ScanMetrics is implemented by metrics that count scans (telemetry.GatewayMetrics).
type ScanMetrics interface {
	// RecordScan counts one scan answer: its records, whether every bucket
	// was caught up, and its outcome code ("ok" or the error code).
	RecordScan(ctx context.Context, table domain.TablePath, records int, caughtUp bool, outcome string)
}

// OnOutOfRange says what a scan does with a bucket whose position fell
// below the log start (retention) or past the end.
type OnOutOfRange uint8

// Out-of-range policies (`on_out_of_range`).
const (
	OutOfRangeError OnOutOfRange = iota
	OutOfRangeEarliest
	OutOfRangeLatest
)

// ScanRequest is a decoded scan request: exactly one of Start and Cursor.
type ScanRequest struct {
	Start *ScanStart
	// Cursor is a cursor from an earlier answer ("" when Start is set).
	Cursor string
	// MaxRows is the row bound (0: the default).
	MaxRows int
	// MaxWait is the long poll (0: answer at once).
	MaxWait time.Duration
	// Columns are column names (nil: all).
	Columns []string
	// Partitions are partition names (nil: all, including later ones).
	Partitions []string
	// Buckets (nil: all).
	Buckets    []int32
	OutOfRange OnOutOfRange
}

// ScanStart is where a scan without cursor starts, per bucket.
type ScanStart struct {
	Position domain.OffsetPosition
	// Timestamp in milliseconds since the epoch (OffsetTimestamp).
	Timestamp int64
	// Offsets, when not empty, are explicit start offsets of some buckets
	// (`"position": "offsets"`, an extension: the positions a write answered
	// with X-Fluss-Write-Positions); every other selected bucket starts at
	// Position (latest).
	Offsets []StartOffset
}

// StartOffset is an explicit start offset of one bucket.
type StartOffset struct {
	Partition string // "" for a non-partitioned table
	Bucket    int32
	Offset    int64
}

// ScanRecord is one record of an answer.
type ScanRecord struct {
	domain.LogRecord
	Partition string // "" when the table is not partitioned
	Bucket    int32
}

// ScanResult is a scan's answer.
type ScanResult struct {
	// Table is the definition the rows are rendered with; Columns the
	// rendered columns, in order.
	Table   *Table
	Columns []domain.Column
	Records []ScanRecord
	Cursor  string
	// CaughtUp is true when every scanned bucket was read up to its high
	// watermark.
	CaughtUp bool

	// What CursorAfter needs: the sealer, the cursor, and per bucket its
	// records' span in Records, its start and its final position.
	sealer *sealed.Sealer
	cur    *scanCursor
	spans  []recordSpan
}

// recordSpan is one bucket's part of ScanResult.Records.
type recordSpan struct {
	first, end int   // Records[first:end] are the bucket's
	start      int64 // the offset the bucket was read from
}

// CursorAfter returns the cursor that resumes after the first n records
// (Cursor when n covers them all): a bucket whose records were all among
// them resumes where Cursor does, one cut short after its last record
// given, one with none of its records given where it was read from. An
// answer cut at its byte cap (the HTTP adapter) ends with it.
func (r *ScanResult) CursorAfter(n int) string {
	if n >= len(r.Records) || r.cur == nil {
		return r.Cursor
	}
	c := *r.cur
	c.Positions = slices.Clone(r.cur.Positions)
	for i, sp := range r.spans {
		switch {
		case sp.first == sp.end || sp.end <= n:
			// no records, or all given: Cursor's position
		case sp.first >= n:
			c.Positions[i].Offset = sp.start
		default:
			c.Positions[i].Offset = r.Records[n-1].Offset + 1
		}
	}
	return sealCursor(r.sealer, &c)
}

// OffsetsResult is the answer of Offsets: one offset per bucket.
type OffsetsResult struct {
	Offsets []domain.BucketOffset
}

// pollInterval is the pause between two reads of a long poll that found
// nothing. The wait is not left to the tablet server (FetchLog's
// max_wait_ms): a Fluss server handles the requests of one connection in
// order, so a fetch parked on the server would hold up every write and
// lookup the gateway sends on the same connection; measured on 0.9.1, a
// write behind a parked fetch waited out the whole max_wait_ms.
const pollInterval = 100 * time.Millisecond

// ScanService reads tables' logs (and primary-key tables' changelogs)
// statelessly through domain.LogScanner, with sealed cursors.
type ScanService struct {
	clusters domain.Clusters
	sealer   *sealed.Sealer
	limits   ScanLimits
	snaps    *snapshots
	now      func() time.Time
	metrics  ScanMetrics
}

// NewScanService returns the scan use cases; sealer seals the cursors.
func NewScanService(clusters domain.Clusters, sealer *sealed.Sealer, opts ScanOptions) *ScanService {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &ScanService{clusters: clusters, sealer: sealer, limits: opts.Limits.withDefaults(),
		snaps: newSnapshots(opts.SchemaCacheSize, now), now: now, metrics: opts.Metrics}
}

// Limits returns the effective limits.
func (s *ScanService) Limits() ScanLimits { return s.limits }

func (s *ScanService) port(ctx context.Context, scope Scope, path domain.TablePath) (domain.LogScanner, definition, error) {
	if err := validatePath(path, false); err != nil {
		return nil, definition{}, err
	}
	session, err := s.clusters.Session(ctx, scope.Cluster, scope.Principal)
	if err != nil {
		return nil, definition{}, err
	}
	ss, ok := session.(domain.ScanSession)
	if !ok || ss.LogScanner() == nil {
		return nil, definition{}, unsupported(scope.Cluster, "log scans")
	}
	return ss.LogScanner(), definition{key: keyOf(scope, path), defs: definitionsOf(session), snaps: s.snaps}, nil
}

// Offsets returns one offset per bucket of the table (of the named
// partitions, or every partition): the log start (earliest), the high
// watermark (latest), or the first record at or after a time (timestamp).
func (s *ScanService) Offsets(ctx context.Context, scope Scope, path domain.TablePath, start ScanStart, partitions []string, buckets []int32) (OffsetsResult, error) {
	port, def, err := s.port(ctx, scope, path)
	if err != nil {
		return OffsetsResult{}, err
	}
	t, err := def.current(ctx)
	if err != nil {
		return OffsetsResult{}, err
	}
	bs, err := port.Buckets(ctx, &domain.LogBucketsRequest{Table: path, TableID: t.Info.TableID, Partitions: partitions, Buckets: buckets})
	if err != nil {
		return OffsetsResult{}, err
	}
	resp, err := port.ListOffsets(ctx, &domain.ListOffsetsRequest{Table: path, TableID: t.Info.TableID, Buckets: bs,
		Position: start.Position, Timestamp: start.Timestamp})
	if err != nil {
		return OffsetsResult{}, err
	}
	return OffsetsResult{Offsets: resp.Offsets}, nil
}

// Scan reads the records after the cursor (or from the start position) of
// every selected bucket: at most MaxRows, waiting up to MaxWait for a first
// one. See issue 23 for the contract.
func (s *ScanService) Scan(ctx context.Context, scope Scope, path domain.TablePath, req ScanRequest) (ScanResult, error) {
	res, err := s.scan(ctx, scope, path, req)
	if s.metrics != nil {
		outcome := "ok"
		if de := domain.AsError(err); de != nil {
			outcome = de.Code()
		} else if err != nil {
			outcome = "internal"
		}
		s.metrics.RecordScan(ctx, path, len(res.Records), res.CaughtUp, outcome)
	}
	return res, err
}

func (s *ScanService) scan(ctx context.Context, scope Scope, path domain.TablePath, req ScanRequest) (ScanResult, error) {
	if (req.Start == nil) == (req.Cursor == "") {
		return ScanResult{}, domain.InvalidArgument("give exactly one of `start` and `cursor`")
	}
	maxRows := req.MaxRows
	switch {
	case maxRows < 0:
		return ScanResult{}, domain.InvalidArgument("max_rows: %d is negative", maxRows)
	case maxRows == 0:
		maxRows = s.limits.DefaultRows
	case maxRows > s.limits.MaxRows:
		return ScanResult{}, &domain.Error{Kind: domain.KindLimitExceeded,
			Message: fmt.Sprintf("max_rows: %d exceeds the limit of %d", maxRows, s.limits.MaxRows)}
	}
	if req.MaxWait < 0 {
		return ScanResult{}, domain.InvalidArgument("max_wait_ms: negative")
	}
	wait := min(req.MaxWait, s.limits.MaxWait)
	if err := checkSelection(req.Partitions, req.Buckets); err != nil {
		return ScanResult{}, err
	}
	port, def, err := s.port(ctx, scope, path)
	if err != nil {
		return ScanResult{}, err
	}

	var cur *scanCursor
	if req.Cursor != "" {
		if cur, err = openCursor(s.sealer, req.Cursor, scope, path); err != nil {
			return ScanResult{}, err
		}
		if req.Columns != nil && !sameColumns(req.Columns, cur.Columns) {
			return ScanResult{}, domain.InvalidArgument("cursor: issued for another projection (columns) than this request's")
		}
		if req.Partitions != nil && !slices.Equal(req.Partitions, cur.Partitions) {
			return ScanResult{}, domain.InvalidArgument("cursor: issued for other partitions than this request's")
		}
		if req.Buckets != nil && !slices.Equal(req.Buckets, cur.Buckets) {
			return ScanResult{}, domain.InvalidArgument("cursor: issued for other buckets than this request's")
		}
	} else {
		cur = &scanCursor{Cluster: scope.Cluster, Principal: scope.Principal.Name, ActAs: scope.Principal.ActAs,
			Path: path, Columns: req.Columns, AllPartitions: req.Partitions == nil, Partitions: req.Partitions, Buckets: req.Buckets}
	}

	t, err := def.current(ctx)
	if err != nil {
		return ScanResult{}, err
	}
	if req.Cursor != "" && t.Info.TableID != cur.TableID {
		if t, err = def.refresh(ctx); err != nil {
			return ScanResult{}, err
		}
		if t.Info.TableID != cur.TableID {
			return ScanResult{}, domain.InvalidArgument("cursor: table `%s` was dropped and re-created since the cursor was issued (table id %d, now %d); start again",
				path, cur.TableID, t.Info.TableID)
		}
	}
	cur.TableID = t.Info.TableID
	cols, positions, err := projectColumns(t, cur.Columns)
	if err != nil && domain.KindOf(err) == domain.KindInvalidArgument {
		// A column added since the definition was cached: look again.
		if fresh, rerr := def.refresh(ctx); rerr == nil && fresh.Info.TableID == t.Info.TableID && fresh.Info.SchemaID != t.Info.SchemaID {
			t = fresh
			cols, positions, err = projectColumns(t, cur.Columns)
		}
	}
	if err != nil {
		return ScanResult{}, err
	}

	var parts []string
	if !cur.AllPartitions {
		parts = cur.Partitions
		if parts == nil {
			parts = []string{}
		}
	}
	buckets, err := port.Buckets(ctx, &domain.LogBucketsRequest{Table: path, TableID: t.Info.TableID, Partitions: parts, Buckets: cur.Buckets})
	if err != nil {
		return ScanResult{}, err
	}

	// Positions: from the cursor, then the start (or earliest, for buckets
	// the cursor does not know: partitions created since).
	known := map[[2]int64]int64{}
	for _, p := range cur.Positions {
		known[[2]int64{p.PartitionID, int64(p.Bucket)}] = p.Offset
	}
	if req.Start != nil && len(req.Start.Offsets) > 0 {
		if err := startOffsets(known, buckets, req.Start.Offsets, path); err != nil {
			return ScanResult{}, err
		}
	}
	pos := make([]domain.BucketOffset, len(buckets))
	var missing []int
	for i, b := range buckets {
		pos[i].LogBucket = b
		if off, ok := known[[2]int64{b.PartitionID, int64(b.Bucket)}]; ok {
			pos[i].Offset = off
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		start := ScanStart{Position: domain.OffsetEarliest}
		if req.Start != nil {
			start = *req.Start
		}
		if err := s.listInto(ctx, port, path, t.Info.TableID, pos, missing, start); err != nil {
			return ScanResult{}, err
		}
	}

	deadline := s.now().Add(wait)
	if dl, ok := ctx.Deadline(); ok {
		if d := dl.Add(-AnswerMargin(time.Until(dl))); d.Before(deadline) {
			deadline = d
		}
	}
	var fetched *domain.FetchLogResponse
	resets, replans := 0, 0
	for {
		fetched, err = port.Fetch(ctx, &domain.FetchLogRequest{Table: path, TableID: t.Info.TableID, Columns: positions,
			Positions: pos, MaxBytes: s.limits.MaxBytes, MaxRecords: maxRows})
		var stale *domain.StaleDefinitionError
		newer := err == nil && fetched.SchemaID > t.Info.SchemaID // rows of columns the definition lacks
		if (newer || errors.As(err, &stale) && stale.TableID == t.Info.TableID) && replans < 2 {
			// A batch of a schema newer than the definition (a column was
			// added): render with the new schema, read again.
			replans++
			fresh, rerr := def.refresh(ctx)
			if rerr != nil {
				return ScanResult{}, rerr
			}
			if fresh.Info.TableID == t.Info.TableID {
				t = fresh
				if cols, positions, err = projectColumns(t, cur.Columns); err != nil {
					return ScanResult{}, err
				}
				continue
			}
			if err == nil {
				return ScanResult{}, domain.InvalidArgument("cursor: table `%s` was dropped and re-created while scanning; start again", path)
			}
		}
		if err != nil {
			if domain.IsStaleDefinition(err) {
				return ScanResult{}, domain.InvalidArgument("cursor: table `%s` was dropped and re-created while scanning; start again", path)
			}
			return ScanResult{}, err
		}
		n, reset, err := s.settle(fetched, req.OutOfRange, path)
		if err != nil {
			return ScanResult{}, err
		}
		if len(reset) > 0 {
			// Move out-of-range buckets to their earliest or latest offset
			// and read again.
			start := ScanStart{Position: domain.OffsetEarliest}
			if req.OutOfRange == OutOfRangeLatest {
				start.Position = domain.OffsetLatest
			}
			if err := s.listInto(ctx, port, path, t.Info.TableID, pos, reset, start); err != nil {
				return ScanResult{}, err
			}
			for _, i := range reset {
				fetched.Buckets[i].NextOffset = pos[i].Offset
			}
		}
		for i := range fetched.Buckets {
			pos[i].Offset = fetched.Buckets[i].NextOffset
		}
		if n > 0 || ctx.Err() != nil {
			break
		}
		if len(reset) > 0 && resets < 2 {
			resets++ // read the moved buckets at once
			continue
		}
		if !s.now().Before(deadline) || !backoff.Sleep(ctx, min(pollInterval, deadline.Sub(s.now()))) {
			break
		}
	}

	res := ScanResult{Table: t, Columns: cols, CaughtUp: true}
	res.spans = make([]recordSpan, len(fetched.Buckets))
	total := 0
	for i := range fetched.Buckets {
		total += len(fetched.Buckets[i].Records)
	}
	res.Records = make([]ScanRecord, 0, total)
	for i := range fetched.Buckets {
		fb := &fetched.Buckets[i]
		if fb.Err != nil || fb.HighWatermark < 0 || fb.NextOffset < fb.HighWatermark {
			res.CaughtUp = false
		}
		res.spans[i] = recordSpan{first: len(res.Records), start: fb.FetchOffset}
		for _, r := range fb.Records {
			res.Records = append(res.Records, ScanRecord{LogRecord: r, Partition: fb.Partition, Bucket: fb.Bucket})
		}
		res.spans[i].end = len(res.Records)
	}
	cur.Positions = cur.Positions[:0]
	for _, p := range pos {
		cur.Positions = append(cur.Positions, cursorPosition{PartitionID: p.PartitionID, Bucket: p.Bucket, Offset: p.Offset})
	}
	res.Cursor = sealCursor(s.sealer, cur)
	res.sealer, res.cur = s.sealer, cur
	return res, nil
}

// startOffsets puts explicit start offsets into known, keyed by partition
// id and bucket; each must name one of the selected buckets, once.
func startOffsets(known map[[2]int64]int64, buckets []domain.LogBucket, offsets []StartOffset, path domain.TablePath) error {
	for i, o := range offsets {
		if o.Offset < 0 {
			return domain.InvalidArgument("start.offsets[%d]: offset %d is negative", i, o.Offset)
		}
		j := slices.IndexFunc(buckets, func(b domain.LogBucket) bool { return b.Partition == o.Partition && b.Bucket == o.Bucket })
		if j < 0 {
			where := fmt.Sprintf("bucket %d", o.Bucket)
			if o.Partition != "" {
				where += fmt.Sprintf(" of partition `%s`", cut(o.Partition, 64))
			}
			return domain.InvalidArgument("start.offsets[%d]: %s is not among the scanned buckets of table `%s`", i, where, path)
		}
		k := [2]int64{buckets[j].PartitionID, int64(buckets[j].Bucket)}
		if _, dup := known[k]; dup {
			return domain.InvalidArgument("start.offsets[%d]: the bucket is named twice", i)
		}
		known[k] = o.Offset
	}
	return nil
}

// settle counts the records of a fetch and applies the out-of-range
// policy: it returns the buckets to move (earliest/latest) or the error. A
// bucket's error that a retry cannot mend fails the whole scan; a retryable
// one (the leader moved) leaves the bucket's position for the next round.
func (s *ScanService) settle(f *domain.FetchLogResponse, policy OnOutOfRange, path domain.TablePath) (int, []int, error) {
	n := 0
	var reset []int
	for i := range f.Buckets {
		fb := &f.Buckets[i]
		n += len(fb.Records)
		if fb.Err != nil && !fb.OutOfRange && !fb.Err.Retryable {
			return 0, nil, fb.Err // tiered storage, an unreadable batch, no permission, ...
		}
		if !fb.OutOfRange {
			continue // a retryable bucket error: read again next round
		}
		if policy == OutOfRangeError {
			where := fmt.Sprintf("bucket %d", fb.Bucket)
			if fb.Partition != "" {
				where += fmt.Sprintf(" of partition `%s`", fb.Partition)
			}
			return 0, nil, &domain.Error{Kind: domain.KindFailedPrecondition, Message: fmt.Sprintf(
				"offset %d of %s of table `%s` is out of range (log start %d, high watermark %d): records were removed by retention; "+
					"scan again with \"on_out_of_range\": \"earliest\" or \"latest\", or a new start", fb.FetchOffset, where, path, fb.LogStartOffset, fb.HighWatermark)}
		}
		fb.Err = nil
		reset = append(reset, i)
	}
	return n, reset, nil
}

// listInto sets pos[i].Offset for each i in idx from ListOffsets.
func (s *ScanService) listInto(ctx context.Context, port domain.LogScanner, path domain.TablePath, tableID int64, pos []domain.BucketOffset, idx []int, start ScanStart) error {
	bs := make([]domain.LogBucket, len(idx))
	for j, i := range idx {
		bs[j] = pos[i].LogBucket
	}
	resp, err := port.ListOffsets(ctx, &domain.ListOffsetsRequest{Table: path, TableID: tableID, Buckets: bs, Position: start.Position, Timestamp: start.Timestamp})
	if err != nil {
		return err
	}
	if len(resp.Offsets) != len(idx) {
		return domain.Errorf(domain.KindInternal, "ListOffsets answered %d offsets for %d buckets", len(resp.Offsets), len(idx))
	}
	for j, i := range idx {
		pos[i].Offset = resp.Offsets[j].Offset
	}
	return nil
}

// checkSelection refuses an empty or repeating `partitions` or `buckets`
// (a repeated bucket would be read twice).
func checkSelection(partitions []string, buckets []int32) error {
	if partitions != nil && len(partitions) == 0 {
		return domain.InvalidArgument("partitions: empty; leave it out for every partition")
	}
	if buckets != nil && len(buckets) == 0 {
		return domain.InvalidArgument("buckets: empty; leave it out for every bucket")
	}
	seen := map[string]bool{}
	for i, p := range partitions {
		if seen[p] {
			return domain.InvalidArgument("partitions[%d]: `%s` is named twice", i, cut(p, 64))
		}
		seen[p] = true
	}
	seenB := map[int32]bool{}
	for i, b := range buckets {
		if seenB[b] {
			return domain.InvalidArgument("buckets[%d]: bucket %d is named twice", i, b)
		}
		seenB[b] = true
	}
	return nil
}

// projectColumns resolves column names to positions (nil: every column).
func projectColumns(t *Table, names []string) ([]domain.Column, []int, error) {
	all := t.Columns()
	if names == nil {
		return all, nil, nil
	}
	if len(names) == 0 {
		return nil, nil, domain.InvalidArgument("columns: empty; leave it out for every column")
	}
	cols := make([]domain.Column, 0, len(names))
	pos := make([]int, 0, len(names))
	for i, n := range names {
		j := slices.IndexFunc(all, func(c domain.Column) bool { return c.Name == n })
		if j < 0 {
			return nil, nil, domain.InvalidArgument("columns[%d]: table `%s` has no column `%s`", i, t.Info.Path, cut(n, 64))
		}
		if slices.Contains(pos, j) {
			return nil, nil, domain.InvalidArgument("columns[%d]: column `%s` is named twice", i, cut(n, 64))
		}
		cols = append(cols, all[j])
		pos = append(pos, j)
	}
	return cols, pos, nil
}
