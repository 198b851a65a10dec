package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// RecordLimits bound the data-plane requests (`gateway.rest.write.*`,
// `gateway.rest.lookup.*`, `gateway.rest.prefix-lookup.*`). A zero field
// takes the default of the official gateway.
type RecordLimits struct {
	// WriteMaxRows bounds the entries of one write.
	WriteMaxRows int
	// LookupMaxKeys bounds the keys of one lookup.
	LookupMaxKeys int
	// LookupMaxKeyBytes bounds the encoded size of a lookup or prefix-lookup
	// request (its keys or prefixes), in bytes.
	LookupMaxKeyBytes int64
	// PrefixLookupMaxPrefixes bounds the prefixes of one prefix lookup.
	PrefixLookupMaxPrefixes int
	// PrefixLookupMaxRowsPerPrefix bounds the rows returned per prefix.
	PrefixLookupMaxRowsPerPrefix int
}

func (l RecordLimits) withDefaults() RecordLimits {
	if l.WriteMaxRows <= 0 {
		l.WriteMaxRows = 10_000
	}
	if l.LookupMaxKeys <= 0 {
		l.LookupMaxKeys = 128
	}
	if l.LookupMaxKeyBytes <= 0 {
		l.LookupMaxKeyBytes = 1 << 20
	}
	if l.PrefixLookupMaxPrefixes <= 0 {
		l.PrefixLookupMaxPrefixes = 16
	}
	if l.PrefixLookupMaxRowsPerPrefix <= 0 {
		l.PrefixLookupMaxRowsPerPrefix = 1000
	}
	return l
}

// RecordOptions configure the RecordService.
type RecordOptions struct {
	Limits RecordLimits
	// MaxDeliveryTime bounds how long the writer may spend delivering one
	// write, from the start of the use case (`gateway.rest.write.max-delivery-time`).
	// Whatever its value, delivery also ends AnswerMargin before the
	// request's own deadline, leaving time to answer. 0: only that bound.
	MaxDeliveryTime time.Duration
	// SchemaCacheTTL and SchemaCacheSize tune the cache of table
	// definitions; zero values take DefaultSchemaCacheTTL and
	// DefaultSchemaCacheSize.
	SchemaCacheTTL  time.Duration
	SchemaCacheSize int
	// SchemaRefetchInterval is how old a cached definition must be before a
	// request that fails to decode against it makes the service fetch the
	// definition again (and decode once more): often enough to pick up a
	// column added a moment ago, rarely enough that a stream of invalid
	// requests does not turn into a stream of catalog calls. 0 means
	// DefaultSchemaRefetchInterval.
	SchemaRefetchInterval time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Metrics counts the verdicts of every write; nil: none.
	Metrics interface {
		RecordEntries(ctx context.Context, table domain.TablePath, results []domain.EntryResult)
	}
}

// DefaultSchemaRefetchInterval is the default RecordOptions.SchemaRefetchInterval.
const DefaultSchemaRefetchInterval = time.Second

// MaxAnswerMargin is the longest time reserved at the end of a write's
// deadline for answering once delivery has ended.
const MaxAnswerMargin = 500 * time.Millisecond

// AnswerMargin is the time reserved for answering a request that has
// remaining time left: a quarter of it, at most MaxAnswerMargin.
func AnswerMargin(remaining time.Duration) time.Duration {
	return max(0, min(MaxAnswerMargin, remaining/4))
}

// WriteDecoder turns a write request's body into a batch for one table
// definition. The inbound adapter implements it (the application knows no
// wire format); it may be called more than once, with a newer definition,
// when the first one turned out to be stale.
type WriteDecoder interface {
	// DecodeWrite decodes every entry against t, or fails naming the entry
	// and column (KindInvalidArgument), or with KindLimitExceeded when the
	// request has more than maxRows entries. ids are the entry ids in input
	// order, one per entry.
	DecodeWrite(t *Table, maxRows int) (batch domain.WriteBatch, ids []string, err error)
}

// KeyDecoder turns a lookup request's body into primary keys.
type KeyDecoder interface {
	// Size is the encoded size of the request, checked against
	// RecordLimits.LookupMaxKeyBytes before decoding.
	Size() int
	// DecodeKeys decodes the keys against t, one Datum per primary-key
	// column in primary-key order; more than maxKeys is KindLimitExceeded.
	DecodeKeys(t *Table, maxKeys int) ([][]domain.Datum, error)
}

// PrefixDecoder turns a prefix-lookup request's body into prefixes.
type PrefixDecoder interface {
	Size() int
	// DecodePrefixes decodes the prefix column names and the prefixes,
	// one Datum per prefix column; more than maxPrefixes is
	// KindLimitExceeded.
	DecodePrefixes(t *Table, maxPrefixes int) (columns []string, prefixes [][]domain.Datum, err error)
}

// WriteCommand is the input of RecordService.Write.
type WriteCommand struct {
	Path    domain.TablePath
	Decoder WriteDecoder
}

// WriteResult is the outcome of a write whose entries all have a verdict.
type WriteResult struct {
	// Table is the definition the entries were decoded against.
	Table *Table
	// IDs and Results are parallel, in input order.
	IDs     []string
	Results []domain.EntryResult
	Summary WriteSummary
}

// WriteSummary condenses a write's verdicts for logs and metrics.
type WriteSummary struct {
	Rows      int
	Succeeded int
	Failed    int
	// FailedByCode counts failures by entry error code; nil without
	// failures.
	FailedByCode map[string]int
	// AppliedUnknown counts failures whose effect is unknown.
	AppliedUnknown int
	// Delivery is the time the writer took.
	Delivery time.Duration
}

// LookupResult is the outcome of a primary-key lookup.
type LookupResult struct {
	// Table is the definition rows are rendered with; its schema id is the
	// response's.
	Table    *Table
	Response *domain.LookupResponse
}

// PrefixLookupResult is the outcome of a prefix lookup.
type PrefixLookupResult struct {
	Table    *Table
	Response *domain.PrefixLookupResponse
}

// RecordService implements the data-plane use cases: writes, primary-key
// lookups and prefix lookups.
type RecordService struct {
	clusters domain.Clusters
	opts     RecordOptions
	limits   RecordLimits
	tables   *tableCache
	refetch  time.Duration
	now      func() time.Time
}

// NewRecordService returns the data-plane use cases over clusters.
func NewRecordService(clusters domain.Clusters, opts RecordOptions) *RecordService {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s := &RecordService{
		clusters: clusters,
		opts:     opts,
		limits:   opts.Limits.withDefaults(),
		tables:   newTableCache(opts.SchemaCacheTTL, opts.SchemaCacheSize, now),
		refetch:  opts.SchemaRefetchInterval,
		now:      now,
	}
	if s.refetch <= 0 {
		s.refetch = DefaultSchemaRefetchInterval
	}
	return s
}

// Limits returns the effective limits.
func (s *RecordService) Limits() RecordLimits { return s.limits }

// Write decodes every entry of a write request against the table's schema,
// refusing the whole request when any entry is invalid (nothing is
// written), then hands the batch to the cluster's writer under the delivery
// deadline and returns one verdict per entry in input order.
//
// A whole-request error means nothing can be said per entry: invalid or
// oversized input, unknown table, no writer for the cluster (unsupported),
// or a deadline that passed before anything was submitted (KindTimeout).
func (s *RecordService) Write(ctx context.Context, scope Scope, cmd WriteCommand) (WriteResult, error) {
	start := s.now()
	if err := validatePath(cmd.Path, false); err != nil {
		return WriteResult{}, err
	}
	session, err := s.clusters.Session(ctx, scope.Cluster, scope.Principal)
	if err != nil {
		return WriteResult{}, err
	}
	writer := session.Writer()
	if writer == nil {
		return WriteResult{}, unsupported(scope.Cluster, "writes")
	}
	key := keyOf(scope, cmd.Path)
	decode := func(t *Table) (domain.WriteBatch, []string, error) {
		batch, ids, err := cmd.Decoder.DecodeWrite(t, s.limits.WriteMaxRows)
		if err != nil {
			return batch, nil, err
		}
		if len(batch.Entries) > s.limits.WriteMaxRows {
			return batch, nil, &domain.Error{Kind: domain.KindLimitExceeded,
				Message: fmt.Sprintf("entries: %d entries exceed the limit of %d", len(batch.Entries), s.limits.WriteMaxRows)}
		}
		if len(ids) != len(batch.Entries) {
			return batch, nil, domain.Errorf(domain.KindInternal, "write decoder returned %d ids for %d entries", len(ids), len(batch.Entries))
		}
		if err := checkWritePartitions(t.Info, &batch, ids); err != nil {
			return batch, nil, err
		}
		if batch.PartialUpdateColumns != nil {
			// Fluss applies a delete under target columns as a partial
			// delete (it only nulls those columns while others are set),
			// which is not what a `delete` entry says: refuse the mix.
			for i := range batch.Entries {
				if batch.Entries[i].Op == domain.OpDelete {
					return batch, nil, domain.InvalidArgument("entry `%s`: delete cannot be combined with partial_update_columns; "+
						"send deletes in a request without partial_update_columns", ids[i])
				}
			}
		}
		batch.Table, batch.TableID, batch.SchemaID = cmd.Path, t.Info.TableID, t.Info.SchemaID
		return batch, ids, nil
	}
	t, batch, ids, err := withFreshSchema(ctx, s, key, session.Catalog(), decode)
	if err != nil {
		return WriteResult{}, err
	}

	deliveryCtx, cancel := s.deliveryContext(ctx, start)
	defer cancel()
	var results []domain.EntryResult
	for attempt := 0; ; attempt++ {
		if deliveryCtx.Err() != nil {
			return WriteResult{}, notSubmitted(ctx, deliveryCtx)
		}
		sent := s.now()
		results, err = writer.Write(deliveryCtx, &batch)
		if err == nil {
			if len(results) != len(batch.Entries) {
				return WriteResult{}, domain.Errorf(domain.KindInternal, "writer returned %d verdicts for %d entries", len(results), len(batch.Entries))
			}
			res := WriteResult{Table: t, IDs: ids, Results: results, Summary: summarize(results)}
			res.Summary.Delivery = s.now().Sub(sent)
			if s.opts.Metrics != nil {
				s.opts.Metrics.RecordEntries(ctx, cmd.Path, results)
			}
			if err := throttled(results); err != nil {
				return WriteResult{}, err
			}
			return res, nil
		}
		if ctxErr := deliveryCtx.Err(); ctxErr != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
			return WriteResult{}, notSubmitted(ctx, deliveryCtx)
		}
		if !staleDefinition(err) {
			return WriteResult{}, err
		}
		// The writer saw another table id or a newer schema than the one
		// the entries were decoded against: nothing was sent. Decode again
		// against the current definition, once.
		s.tables.invalidate(key)
		if attempt > 0 {
			return WriteResult{}, err
		}
		fresh, ferr := s.tables.fetch(ctx, key, session.Catalog())
		if ferr != nil {
			return WriteResult{}, ferr
		}
		if fresh.sameVersion(t) {
			return WriteResult{}, err
		}
		if batch, ids, err = decode(fresh); err != nil {
			return WriteResult{}, err
		}
		t = fresh
	}
}

// EntryCodeStorageBackpressure is the entry code of a row the tablet server's
// KV storage backpressure (Fluss 1.0) kept from being written in time.
const EntryCodeStorageBackpressure = "storage_backpressure"

// throttled returns the whole-request error of a write none of whose entries
// could be delivered before the deadline because the writer throttled their
// buckets on KV storage backpressure (every entry storage_backpressure,
// retryable, applied "no"): 429 resource_exhausted, with RetryAfterMillis the
// longest remaining throttle of the request's buckets (EntryResult.RetryAfter,
// the writer's throttle state), so a client retrying after it does not meet
// the same throttle. Nothing was written, so no per-entry verdict is lost. A
// write with any other verdict keeps its per-entry answer.
func throttled(results []domain.EntryResult) error {
	var wait time.Duration
	for _, r := range results {
		if r.OK() || r.Code != EntryCodeStorageBackpressure || r.Applied != domain.AppliedNo || !r.Retryable {
			return nil
		}
		wait = max(wait, r.RetryAfter)
	}
	if len(results) == 0 {
		return nil
	}
	ms := max(int64((wait+time.Millisecond-1)/time.Millisecond), 1)
	return &domain.Error{Kind: domain.KindResourceExhausted, Retryable: true, RetryAfterMillis: ms,
		Message: fmt.Sprintf("KV storage backpressure: the tablet servers' throttle keeps all %d entries from being written before the deadline; "+
			"nothing was written; the throttle ends in %d ms", len(results), ms)}
}

// deliveryContext bounds the writer: MaxDeliveryTime after start, and
// AnswerMargin before the request's deadline.
func (s *RecordService) deliveryContext(ctx context.Context, start time.Time) (context.Context, context.CancelFunc) {
	var deadline time.Time
	if s.opts.MaxDeliveryTime > 0 {
		deadline = start.Add(s.opts.MaxDeliveryTime)
	}
	if dl, ok := ctx.Deadline(); ok {
		answerBy := dl.Add(-AnswerMargin(dl.Sub(start)))
		if deadline.IsZero() || answerBy.Before(deadline) {
			deadline = answerBy
		}
	}
	if deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline)
}

// notSubmitted is the error of a write whose deadline passed (or whose
// caller went away) before the writer took any entry.
func notSubmitted(ctx, delivery context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &domain.Error{Kind: domain.KindCancelled, Message: "the request was cancelled before any entry was submitted", Cause: ctx.Err()}
	}
	return &domain.Error{Kind: domain.KindTimeout, Retryable: true,
		Message: "the request deadline passed before any entry was submitted; nothing was written", Cause: delivery.Err()}
}

// staleDefinition reports whether a whole-request error of a writer or lookup
// says the request was built for an outdated table definition (the table was
// re-created, or its schema is newer than the one used).
func staleDefinition(err error) bool {
	e := domain.AsError(err)
	return e != nil && e.Kind == domain.KindFailedPrecondition && e.Retryable
}

func summarize(results []domain.EntryResult) WriteSummary {
	sum := WriteSummary{Rows: len(results)}
	for _, r := range results {
		if r.OK() {
			sum.Succeeded++
			continue
		}
		sum.Failed++
		if sum.FailedByCode == nil {
			sum.FailedByCode = map[string]int{}
		}
		sum.FailedByCode[r.Code]++
		if r.Applied != domain.AppliedNo {
			sum.AppliedUnknown++
		}
	}
	return sum
}

// Lookup looks up rows by primary key. Keys are decoded against the table's
// schema first; any invalid key fails the whole request naming its index
// and column.
func (s *RecordService) Lookup(ctx context.Context, scope Scope, path domain.TablePath, dec KeyDecoder) (LookupResult, error) {
	if err := validatePath(path, false); err != nil {
		return LookupResult{}, err
	}
	if err := s.checkKeyBytes(dec.Size(), "lookup"); err != nil {
		return LookupResult{}, err
	}
	session, err := s.clusters.Session(ctx, scope.Cluster, scope.Principal)
	if err != nil {
		return LookupResult{}, err
	}
	port := session.Lookup()
	if port == nil {
		return LookupResult{}, unsupported(scope.Cluster, "lookups")
	}
	key := keyOf(scope, path)
	decode := func(t *Table) (*domain.LookupRequest, []string, error) {
		if len(t.Info.Descriptor.Schema.PrimaryKey) == 0 {
			return nil, nil, domain.InvalidArgument("table `%s` has no primary key; lookups need a primary-key table", path)
		}
		keys, err := dec.DecodeKeys(t, s.limits.LookupMaxKeys)
		if err != nil {
			return nil, nil, err
		}
		if len(keys) > s.limits.LookupMaxKeys {
			return nil, nil, &domain.Error{Kind: domain.KindLimitExceeded,
				Message: fmt.Sprintf("keys: %d keys exceed the limit of %d", len(keys), s.limits.LookupMaxKeys)}
		}
		if err := checkKeyPartitions(t.Info, t.Info.Descriptor.Schema.PrimaryKey, keys, "keys"); err != nil {
			return nil, nil, err
		}
		return &domain.LookupRequest{Table: path, TableID: t.Info.TableID, SchemaID: t.Info.SchemaID, Keys: keys}, nil, nil
	}
	t, req, _, err := withFreshSchema(ctx, s, key, session.Catalog(), decode)
	if err != nil {
		return LookupResult{}, err
	}
	for attempt := 0; ; attempt++ {
		resp, err := port.Lookup(ctx, req)
		if err == nil {
			if resp == nil || len(resp.Results) != len(req.Keys) {
				return LookupResult{}, domain.Errorf(domain.KindInternal, "lookup returned a response that does not match its %d keys", len(req.Keys))
			}
			rt, err := s.renderTable(ctx, key, session.Catalog(), t, resp.SchemaID)
			return LookupResult{Table: rt, Response: resp}, err
		}
		if !staleDefinition(err) || attempt > 0 {
			if staleDefinition(err) {
				s.tables.invalidate(key)
			}
			return LookupResult{}, err
		}
		s.tables.invalidate(key)
		fresh, ferr := s.tables.fetch(ctx, key, session.Catalog())
		if ferr != nil {
			return LookupResult{}, ferr
		}
		if fresh.sameVersion(t) {
			return LookupResult{}, err
		}
		if req, _, err = decode(fresh); err != nil {
			return LookupResult{}, err
		}
		t = fresh
	}
}

// PrefixLookup returns, for each prefix, the rows whose bucket key (plus
// partition columns) equals it, at most PrefixLookupMaxRowsPerPrefix each.
func (s *RecordService) PrefixLookup(ctx context.Context, scope Scope, path domain.TablePath, dec PrefixDecoder) (PrefixLookupResult, error) {
	if err := validatePath(path, false); err != nil {
		return PrefixLookupResult{}, err
	}
	if err := s.checkKeyBytes(dec.Size(), "prefix lookup"); err != nil {
		return PrefixLookupResult{}, err
	}
	session, err := s.clusters.Session(ctx, scope.Cluster, scope.Principal)
	if err != nil {
		return PrefixLookupResult{}, err
	}
	port := session.Lookup()
	if port == nil {
		return PrefixLookupResult{}, unsupported(scope.Cluster, "prefix lookups")
	}
	key := keyOf(scope, path)
	decode := func(t *Table) (*domain.PrefixLookupRequest, []string, error) {
		if len(t.Info.Descriptor.Schema.PrimaryKey) == 0 {
			return nil, nil, domain.InvalidArgument("table `%s` has no primary key; prefix lookups need a primary-key table", path)
		}
		cols, prefixes, err := dec.DecodePrefixes(t, s.limits.PrefixLookupMaxPrefixes)
		if err != nil {
			return nil, nil, err
		}
		if len(prefixes) > s.limits.PrefixLookupMaxPrefixes {
			return nil, nil, &domain.Error{Kind: domain.KindLimitExceeded,
				Message: fmt.Sprintf("prefixes: %d prefixes exceed the limit of %d", len(prefixes), s.limits.PrefixLookupMaxPrefixes)}
		}
		if err := validatePrefixColumns(t.Info, cols); err != nil {
			return nil, nil, err
		}
		if err := checkKeyPartitions(t.Info, cols, prefixes, "prefixes"); err != nil {
			return nil, nil, err
		}
		return &domain.PrefixLookupRequest{
			Table: path, TableID: t.Info.TableID, SchemaID: t.Info.SchemaID,
			PrefixColumns: cols, Prefixes: prefixes, MaxRowsPerPrefix: s.limits.PrefixLookupMaxRowsPerPrefix,
		}, nil, nil
	}
	t, req, _, err := withFreshSchema(ctx, s, key, session.Catalog(), decode)
	if err != nil {
		return PrefixLookupResult{}, err
	}
	for attempt := 0; ; attempt++ {
		resp, err := port.PrefixLookup(ctx, req)
		if err == nil {
			if resp == nil || len(resp.Results) != len(req.Prefixes) {
				return PrefixLookupResult{}, domain.Errorf(domain.KindInternal, "prefix lookup returned a response that does not match its %d prefixes", len(req.Prefixes))
			}
			for i := range resp.Results {
				if n := len(resp.Results[i].Rows); n > req.MaxRowsPerPrefix {
					resp.Results[i].Rows = resp.Results[i].Rows[:req.MaxRowsPerPrefix]
					resp.Results[i].Truncated = true
				}
			}
			rt, err := s.renderTable(ctx, key, session.Catalog(), t, resp.SchemaID)
			return PrefixLookupResult{Table: rt, Response: resp}, err
		}
		if !staleDefinition(err) || attempt > 0 {
			if staleDefinition(err) {
				s.tables.invalidate(key)
			}
			return PrefixLookupResult{}, err
		}
		s.tables.invalidate(key)
		fresh, ferr := s.tables.fetch(ctx, key, session.Catalog())
		if ferr != nil {
			return PrefixLookupResult{}, ferr
		}
		if fresh.sameVersion(t) {
			return PrefixLookupResult{}, err
		}
		if req, _, err = decode(fresh); err != nil {
			return PrefixLookupResult{}, err
		}
		t = fresh
	}
}

func (s *RecordService) checkKeyBytes(n int, what string) error {
	if int64(n) > s.limits.LookupMaxKeyBytes {
		return &domain.Error{Kind: domain.KindLimitExceeded,
			Message: fmt.Sprintf("the %s request is %d bytes, above the limit of %d bytes for keys", what, n, s.limits.LookupMaxKeyBytes)}
	}
	return nil
}

// renderTable returns the definition rows in schema id schemaID are
// rendered with: the one the request used, or a freshly fetched one when the
// port answered in another (newer) schema.
func (s *RecordService) renderTable(ctx context.Context, key tableKey, cat domain.Catalog, used *Table, schemaID int32) (*Table, error) {
	if schemaID == 0 || schemaID == used.Info.SchemaID {
		return used, nil
	}
	s.tables.invalidate(key)
	fresh, err := s.tables.fetch(ctx, key, cat)
	if err != nil {
		return nil, err
	}
	if fresh.Info.SchemaID != schemaID {
		return nil, &domain.Error{Kind: domain.KindFailedPrecondition, Retryable: true,
			Message: fmt.Sprintf("table `%s` changed during the lookup (rows in schema %d, catalog at schema %d); retry", key.path, schemaID, fresh.Info.SchemaID)}
	}
	return fresh, nil
}

// withFreshSchema resolves the table definition and decodes the request
// against it. When decoding fails against a cached definition older than
// the refetch interval, the definition is fetched again and, if it changed
// (a column was just added, say), the request is decoded once more, so a
// stale cache does not keep rejecting a valid request.
func withFreshSchema[R any](ctx context.Context, s *RecordService, key tableKey, cat domain.Catalog,
	decode func(*Table) (R, []string, error)) (*Table, R, []string, error) {
	var zero R
	t, cached, err := s.tables.get(ctx, key, cat)
	if err != nil {
		return nil, zero, nil, err
	}
	out, ids, err := decode(t)
	if err == nil || !cached || domain.KindOf(err) != domain.KindInvalidArgument || s.now().Sub(t.fetched) < s.refetch {
		return t, out, ids, err
	}
	fresh, ferr := s.tables.fetch(ctx, key, cat)
	if ferr != nil || fresh.sameVersion(t) {
		return t, out, ids, err
	}
	out, ids, err = decode(fresh)
	return fresh, out, ids, err
}

// validatePrefixColumns checks that prefix columns name what Fluss can look
// up by prefix: the bucket key, in order, plus every partition column, where
// the bucket key is a proper prefix of the primary key without the
// partition columns.
func validatePrefixColumns(info domain.TableInfo, cols []string) error {
	d := info.Descriptor
	pk := d.Schema.PrimaryKey
	physPK := slices.DeleteFunc(slices.Clone(pk), func(c string) bool { return slices.Contains(d.PartitionKeys, c) })
	bucket := d.BucketKeys
	if len(bucket) == 0 {
		bucket = domain.DefaultBucketKeys(pk, d.PartitionKeys)
	}
	if len(bucket) >= len(physPK) || !slices.Equal(bucket, physPK[:len(bucket)]) {
		return domain.InvalidArgument("table `%s` does not support prefix lookups: its bucket key %v is not a proper prefix of its primary key %v (without partition columns)",
			info.Path, bucket, physPK)
	}
	for _, p := range d.PartitionKeys {
		if !slices.Contains(cols, p) {
			return domain.InvalidArgument("prefix_columns: must include the partition column `%s`", p)
		}
	}
	phys := slices.DeleteFunc(slices.Clone(cols), func(c string) bool { return slices.Contains(d.PartitionKeys, c) })
	if !slices.Equal(phys, bucket) {
		if len(d.PartitionKeys) > 0 {
			return domain.InvalidArgument("prefix_columns: %v must be the bucket key %v in this order, plus the partition columns %v",
				cols, bucket, d.PartitionKeys)
		}
		return domain.InvalidArgument("prefix_columns: %v must be the bucket key %v in this order", cols, bucket)
	}
	return nil
}

func unsupported(cluster, what string) error {
	return domain.Errorf(domain.KindUnsupported, "cluster `%s` does not support %s yet", cluster, what)
}
