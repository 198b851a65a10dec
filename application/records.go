package application

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
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

// Defaults of RecordLimits, those of the official gateway; bootstrap/config
// uses them as the defaults of the keys.
const (
	DefaultWriteMaxRows                 = 10_000
	DefaultLookupMaxKeys                = 128
	DefaultLookupMaxKeyBytes            = 1 << 20
	DefaultPrefixLookupMaxPrefixes      = 16
	DefaultPrefixLookupMaxRowsPerPrefix = 1000
)

func (l RecordLimits) withDefaults() RecordLimits {
	if l.WriteMaxRows <= 0 {
		l.WriteMaxRows = DefaultWriteMaxRows
	}
	if l.LookupMaxKeys <= 0 {
		l.LookupMaxKeys = DefaultLookupMaxKeys
	}
	if l.LookupMaxKeyBytes <= 0 {
		l.LookupMaxKeyBytes = DefaultLookupMaxKeyBytes
	}
	if l.PrefixLookupMaxPrefixes <= 0 {
		l.PrefixLookupMaxPrefixes = DefaultPrefixLookupMaxPrefixes
	}
	if l.PrefixLookupMaxRowsPerPrefix <= 0 {
		l.PrefixLookupMaxRowsPerPrefix = DefaultPrefixLookupMaxRowsPerPrefix
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
	// SchemaCacheSize bounds the remembered definition snapshots (and their
	// compiled codecs); 0 takes DefaultSnapshotCacheSize. Definitions
	// themselves come from the session's domain.TableDefinitions (the
	// adapter's one metadata cache) on every request.
	SchemaCacheSize int
	// SchemaRefetchInterval is how old a definition must be before a
	// request that fails to decode against it makes the service refresh the
	// definition (and decode once more): often enough to pick up a column
	// another client added a moment ago, rarely enough that a stream of
	// invalid requests does not turn into a stream of metadata calls. The
	// gateway's own DDL needs no refresh: it invalidates the definition. 0
	// means DefaultSchemaRefetchInterval.
	SchemaRefetchInterval time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Tokens seals prefix-lookup continuations (the one *sealed.Sealer of
	// bootstrap/sealer.go); nil: a random key of this process.
	Tokens *sealed.Sealer
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

// RejectingDecoder is a WriteDecoder that may answer invalid entries one by
// one instead of failing the request (the `X-Fluss-Invalid-Entries: report`
// extension): its DecodeWrite then returns the valid entries only, and
// Rejected the invalid ones of its last DecodeWrite.
type RejectingDecoder interface {
	WriteDecoder
	Rejected() []RejectedEntry
}

// RejectedEntry is an invalid entry answered on its own: its position in the
// request, its id and the message naming it and its column path.
type RejectedEntry struct {
	Index   int
	ID      string
	Message string
	// UnknownColumn tells that the entry names a column the definition it
	// was decoded against lacks: the write refreshes the definition once
	// and decodes again before answering it (as for a whole-request
	// refusal, domain.ErrUnknownColumn).
	UnknownColumn bool
}

// mergeRejected puts the verdicts of rejected entries (invalid_argument,
// never applied) back among the written entries' ids and results, in input
// order.
func mergeRejected(ids []string, results []domain.EntryResult, rejected []RejectedEntry) ([]string, []domain.EntryResult) {
	if len(rejected) == 0 {
		return ids, results
	}
	n := len(ids) + len(rejected)
	outIDs, out := make([]string, 0, n), make([]domain.EntryResult, 0, n)
	w, r := 0, 0
	for i := range n {
		if r < len(rejected) && rejected[r].Index == i {
			outIDs = append(outIDs, rejected[r].ID)
			out = append(out, domain.EntryResult{Code: "invalid_argument", Message: rejected[r].Message, Applied: domain.AppliedNo})
			r++
			continue
		}
		if w < len(ids) {
			outIDs, out = append(outIDs, ids[w]), append(out, results[w])
			w++
		}
	}
	return outIDs, out
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
	// NextPageTokens has, per prefix, the token that continues a truncated
	// answer ("" when it is complete); see PagedPrefixDecoder.
	NextPageTokens []string
}

// PagedPrefixDecoder is a PrefixDecoder whose request may continue a
// truncated prefix lookup: PageToken (after DecodePrefixes) is the
// `page_token` extension of the body, "" for a first page. A token is only
// valid for the one prefix it was issued for, on the same table.
type PagedPrefixDecoder interface {
	PrefixDecoder
	PageToken() string
}

// RecordService implements the data-plane use cases: writes, primary-key
// lookups and prefix lookups.
type RecordService struct {
	clusters domain.Clusters
	opts     RecordOptions
	limits   RecordLimits
	snaps    *snapshots
	refetch  time.Duration
	now      func() time.Time
	tokens   *sealed.Sealer
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
		snaps:    newSnapshots(opts.SchemaCacheSize, now),
		refetch:  opts.SchemaRefetchInterval,
		now:      now,
		tokens:   opts.Tokens,
	}
	if s.tokens == nil {
		s.tokens = sealed.NewRandom()
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
	res, err := s.write(ctx, scope, cmd, start)
	err = s.explainNotFound(ctx, scope, cmd.Path, err)
	return res, explainTimeout(ctx, start, err, "nothing was written: the deadline passed before any entry was submitted")
}

func (s *RecordService) write(ctx context.Context, scope Scope, cmd WriteCommand, start time.Time) (WriteResult, error) {
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
		if batch.Len() > s.limits.WriteMaxRows {
			return batch, nil, &domain.Error{Kind: domain.KindLimitExceeded,
				Message: fmt.Sprintf("entries: %d entries exceed the limit of %d", batch.Len(), s.limits.WriteMaxRows)}
		}
		if len(ids) != batch.Len() {
			return batch, nil, domain.Errorf(domain.KindInternal, "write decoder returned %d ids for %d entries", len(ids), batch.Len())
		}
		if err := checkWritePartitions(t.Info, &batch, ids); err != nil {
			return batch, nil, err
		}
		// A delete under partial_update_columns is a partial delete, as the
		// official gateway documents it: Fluss clears the targeted non-key
		// columns and removes the row once all its non-key columns are null.
		batch.Table, batch.TableID, batch.SchemaID = cmd.Path, t.Info.TableID, t.Info.SchemaID
		return batch, ids, nil
	}
	deliveryCtx, cancel := s.deliveryContext(ctx, start)
	defer cancel()
	var sent time.Time
	run := func(_ *Table, batch domain.WriteBatch) ([]domain.EntryResult, error) {
		if deliveryCtx.Err() != nil {
			return nil, notSubmitted(ctx, deliveryCtx)
		}
		sent = s.now()
		results, err := writer.Write(deliveryCtx, &batch)
		if err == nil && len(results) != batch.Len() {
			return nil, domain.Errorf(domain.KindInternal, "writer returned %d verdicts for %d entries", len(results), batch.Len())
		}
		if err != nil && deliveryCtx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
			return nil, notSubmitted(ctx, deliveryCtx)
		}
		if err == nil {
			if gone := tableGone(results); gone != nil {
				return nil, gone
			}
		}
		return results, err
	}
	var lastIDs []string
	// Entries rejected one by one (X-Fluss-Invalid-Entries: report) for a
	// column the definition lacks: the first decode asks withDefinition
	// for one refresh, as a whole-request refusal would.
	askRefresh := true
	decodeIDs := func(t *Table) (domain.WriteBatch, []string, error) {
		batch, ids, err := decode(t)
		lastIDs = ids
		if err == nil && askRefresh {
			askRefresh = false
			if rd, ok := cmd.Decoder.(RejectingDecoder); ok && rejectedUnknownColumn(rd.Rejected()) {
				return batch, nil, errRejectedUnknownColumn
			}
		}
		return batch, ids, err
	}
	def := s.definition(key, session)
	t, ids, results, err := withDefinition(ctx, def, s.refetch, s.now, decodeIDs, run)
	if errors.Is(err, errRejectedUnknownColumn) {
		// The refresh showed the same definition: answer the entries as
		// decoded against it.
		t, ids, results, err = withDefinition(ctx, def, s.refetch, s.now, decodeIDs, run)
	}
	var gone *tableGoneError
	if errors.As(err, &gone) {
		// The refresh did not show the table dropped or re-created (or the
		// resend met the same): the verdicts are the entries' own.
		ids, results, err = lastIDs, gone.results, nil
	}
	if err != nil {
		if sent.IsZero() {
			err = nothingWritten(err)
		}
		return WriteResult{}, err
	}
	if rd, ok := cmd.Decoder.(RejectingDecoder); ok {
		ids, results = mergeRejected(ids, results, rd.Rejected())
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

// definition resolves key's table through the session's definitions.
func (s *RecordService) definition(key tableKey, session domain.Session) definition {
	return definition{key: key, defs: definitionsOf(session), snaps: s.snaps}
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
// errRejectedUnknownColumn asks withDefinition for one refresh when entries
// were rejected one by one for a column the definition lacks.
var errRejectedUnknownColumn = domain.UnknownColumn("entries name a column the cached definition lacks")

func rejectedUnknownColumn(rs []RejectedEntry) bool {
	for _, r := range rs {
		if r.UnknownColumn {
			return true
		}
	}
	return false
}

// nothingWritten adds "nothing was written" to an unavailable error of a
// write none of whose entries reached the writer (a metadata read that met
// DDL in progress elsewhere, an unreachable coordinator), so that a client
// knows the retry is safe. Other errors are returned as they are.
func nothingWritten(err error) error {
	de := domain.AsError(err)
	if de == nil || de.Kind != domain.KindUnavailable || strings.Contains(de.Message, "nothing was") {
		return err
	}
	cp := *de
	cp.Message += "; nothing was written"
	cp.Retryable = true
	return &cp
}

func notSubmitted(ctx, delivery context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &domain.Error{Kind: domain.KindCancelled, Message: "the request was cancelled before any entry was submitted", Cause: ctx.Err()}
	}
	return &domain.Error{Kind: domain.KindTimeout, Retryable: true,
		Message: "the request deadline passed before any entry was submitted; nothing was written", Cause: delivery.Err()}
}

// tableGone returns a *tableGoneError when any entry failed with
// table_not_found: the writer found that the table id the batch was built
// for no longer exists on a bucket (the table was dropped, perhaps
// re-created, by someone else; Fluss deletes a dropped table's replicas
// bucket by bucket, so other entries of the batch may have been accepted
// into the dropped table a moment before). That is a fact about the
// request, not about its entries: withDefinition refreshes the definition
// and either resends every entry to the re-created table (what the dropped
// table accepted went with it, so this is at-least-once delivery, not a
// duplicate) or answers table_not_found for the request. When the refresh
// shows the same table id, Write falls back to the verdicts.
func tableGone(results []domain.EntryResult) error {
	for i, r := range results {
		if r.Code == "table_not_found" {
			return &tableGoneError{err: &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable, Message: results[i].Message}, results: results}
		}
	}
	return nil
}

// tableGoneError is a table_not_found *domain.Error (see isTableNotFound)
// that keeps the writer's verdicts.
type tableGoneError struct {
	err     *domain.Error
	results []domain.EntryResult
}

func (e *tableGoneError) Error() string { return e.err.Error() }
func (e *tableGoneError) Unwrap() error { return e.err }

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
	start := s.now()
	res, err := s.lookup(ctx, scope, path, dec)
	err = s.explainNotFound(ctx, scope, path, err)
	if m, ok := s.opts.Metrics.(lookupMetrics); ok && err == nil && res.Response != nil {
		var found, missed, failed int
		for _, r := range res.Response.Results {
			switch {
			case r.Err != nil:
				failed++
			case r.Row != nil:
				found++
			default:
				missed++
			}
		}
		m.RecordLookups(ctx, path, "lookup", found, missed, failed)
	}
	return res, explainTimeout(ctx, start, err, "a lookup writes nothing")
}

// lookupMetrics is implemented by RecordOptions.Metrics that count lookup
// keys by outcome (telemetry.GatewayMetrics): kind "lookup" or
// "prefix_lookup"; found, missed (no row) and failed keys or prefixes.
type lookupMetrics interface {
	RecordLookups(ctx context.Context, table domain.TablePath, kind string, found, missed, failed int)
}

func (s *RecordService) lookup(ctx context.Context, scope Scope, path domain.TablePath, dec KeyDecoder) (LookupResult, error) {
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
	def := s.definition(key, session)
	run := func(t *Table, req *domain.LookupRequest) (LookupResult, error) {
		// Each distinct key is fetched once: 128 copies of one key cost one
		// row from the cluster, answered 128 times.
		uniq, index := collapseKeys(req.Keys)
		sent := req
		if len(uniq) < len(req.Keys) {
			r := *req
			r.Keys = uniq
			sent = &r
		}
		resp, err := port.Lookup(ctx, sent)
		if err != nil {
			return LookupResult{}, err
		}
		if resp == nil || len(resp.Results) != len(sent.Keys) {
			return LookupResult{}, domain.Errorf(domain.KindInternal, "lookup returned a response that does not match its %d keys", len(sent.Keys))
		}
		if sent != req {
			results := make([]domain.LookupResult, len(req.Keys))
			for i, j := range index {
				results[i] = resp.Results[j]
			}
			resp = &domain.LookupResponse{SchemaID: resp.SchemaID, Results: results}
		}
		rt, err := renderTable(ctx, def, t, resp.SchemaID)
		return LookupResult{Table: rt, Response: resp}, err
	}
	_, _, res, err := withDefinition(ctx, def, s.refetch, s.now, decode, run)
	return res, err
}

// PrefixLookup returns, for each prefix, the rows whose bucket key (plus
// partition columns) equals it, at most PrefixLookupMaxRowsPerPrefix each.
func (s *RecordService) PrefixLookup(ctx context.Context, scope Scope, path domain.TablePath, dec PrefixDecoder) (PrefixLookupResult, error) {
	start := s.now()
	res, err := s.prefixLookup(ctx, scope, path, dec)
	err = s.explainNotFound(ctx, scope, path, err)
	if m, ok := s.opts.Metrics.(lookupMetrics); ok && err == nil && res.Response != nil {
		var found, missed, failed int
		for _, r := range res.Response.Results {
			switch {
			case r.Err != nil:
				failed++
			case len(r.Rows) > 0:
				found++
			default:
				missed++
			}
		}
		m.RecordLookups(ctx, path, "prefix_lookup", found, missed, failed)
	}
	return res, explainTimeout(ctx, start, err, "a prefix lookup writes nothing")
}

func (s *RecordService) prefixLookup(ctx context.Context, scope Scope, path domain.TablePath, dec PrefixDecoder) (PrefixLookupResult, error) {
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
	offset := 0 // rows of the prefix's answer already returned (page_token)
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
		offset = 0
		if pd, ok := dec.(PagedPrefixDecoder); ok && pd.PageToken() != "" {
			if len(prefixes) != 1 {
				return nil, nil, domain.InvalidArgument("page_token: continues the answer of one prefix; the request has %d prefixes", len(prefixes))
			}
			if offset, err = openPrefixToken(s.tokens, prefixScope(scope, path, cols, prefixes[0]), pd.PageToken()); err != nil {
				return nil, nil, err
			}
		}
		return &domain.PrefixLookupRequest{
			Table: path, TableID: t.Info.TableID, SchemaID: t.Info.SchemaID,
			PrefixColumns: cols, Prefixes: prefixes, MaxRowsPerPrefix: offset + s.limits.PrefixLookupMaxRowsPerPrefix,
		}, nil, nil
	}
	def := s.definition(key, session)
	run := func(t *Table, req *domain.PrefixLookupRequest) (PrefixLookupResult, error) {
		var resp *domain.PrefixLookupResponse
		var err error
		if acrossPartitions(t.Info, req.PrefixColumns) {
			resp, err = prefixLookupAcrossPartitions(ctx, session, port, req)
		} else {
			resp, err = port.PrefixLookup(ctx, req)
		}
		if err != nil {
			return PrefixLookupResult{}, err
		}
		if resp == nil || len(resp.Results) != len(req.Prefixes) {
			return PrefixLookupResult{}, domain.Errorf(domain.KindInternal, "prefix lookup returned a response that does not match its %d prefixes", len(req.Prefixes))
		}
		for i := range resp.Results {
			if n := len(resp.Results[i].Rows); n > req.MaxRowsPerPrefix {
				resp.Results[i].Rows = resp.Results[i].Rows[:req.MaxRowsPerPrefix]
				resp.Results[i].Truncated = true
			}
		}
		tokens := make([]string, len(resp.Results))
		for i := range resp.Results {
			r := &resp.Results[i]
			if r.Err != nil {
				continue
			}
			r.Rows = r.Rows[min(offset, len(r.Rows)):]
			if r.Truncated {
				if next := offset + len(r.Rows); next <= maxPrefixOffset {
					tokens[i] = sealPrefixToken(s.tokens, prefixScope(scope, path, req.PrefixColumns, req.Prefixes[i]), next)
				}
			}
		}
		rt, err := renderTable(ctx, def, t, resp.SchemaID)
		return PrefixLookupResult{Table: rt, Response: resp, NextPageTokens: tokens}, err
	}
	_, _, res, err := withDefinition(ctx, def, s.refetch, s.now, decode, run)
	return res, err
}

func (s *RecordService) checkKeyBytes(n int, what string) error {
	if int64(n) > s.limits.LookupMaxKeyBytes {
		return &domain.Error{Kind: domain.KindLimitExceeded,
			Message: fmt.Sprintf("the %s request is %d bytes, above the limit of %d bytes for keys", what, n, s.limits.LookupMaxKeyBytes)}
	}
	return nil
}

// renderTable returns the definition rows in schema id schemaID are
// rendered with: the one the request used, or the refreshed one when the
// port answered in another (newer) schema. When even the refreshed
// definition is at another schema, the answer is a stale-definition error.
func renderTable(ctx context.Context, d definition, used *Table, schemaID int32) (*Table, error) {
	if schemaID == 0 || schemaID == used.Info.SchemaID {
		return used, nil
	}
	fresh, err := d.refresh(ctx)
	if err != nil {
		return nil, err
	}
	if fresh.Info.SchemaID != schemaID {
		return nil, domain.NewStaleDefinition(&domain.StaleDefinitionError{Table: d.key.path,
			UsedTableID: fresh.Info.TableID, TableID: fresh.Info.TableID, UsedSchemaID: schemaID, SchemaID: fresh.Info.SchemaID})
	}
	return fresh, nil
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
	if !acrossPartitions(info, cols) {
		for _, p := range d.PartitionKeys {
			if !slices.Contains(cols, p) {
				return domain.InvalidArgument("prefix_columns: must include the partition column `%s`, or leave out every partition column to look up across all partitions", p)
			}
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

// acrossPartitions reports whether prefix columns of a partitioned table
// leave out every partition column: the prefixes are then looked up in
// every partition (an extension, issue 23).
func acrossPartitions(info domain.TableInfo, cols []string) bool {
	keys := info.Descriptor.PartitionKeys
	return len(keys) > 0 && !slices.ContainsFunc(cols, func(c string) bool { return slices.Contains(keys, c) })
}

// prefixFanOut bounds the partitions looked up at once by one prefix
// lookup across partitions.
const prefixFanOut = 4

// prefixLookupAcrossPartitions looks req's prefixes up in every partition
// of the table (listed now, in name order), at most prefixFanOut partitions
// at a time, and merges the answers: each prefix's rows partition after
// partition, cut at req.MaxRowsPerPrefix (then Truncated), as one lookup
// would answer them; a prefix that failed in any partition carries that
// partition's error. Each partition answers at most MaxRowsPerPrefix rows
// per prefix, so the rows held before the cut are bounded by the
// partitions times that.
func prefixLookupAcrossPartitions(ctx context.Context, session domain.Session, port domain.Lookup, req *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
	parts, err := session.Catalog().ListPartitions(ctx, req.Table)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(parts, func(a, b domain.PartitionInfo) int { return strings.Compare(a.Name, b.Name) })
	answers := make([]*domain.PrefixLookupResponse, len(parts))
	errs := make([]error, len(parts))
	sem := make(chan struct{}, prefixFanOut)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := *req
			r.Partition = parts[i].Name
			answers[i], errs[i] = port.PrefixLookup(ctx, &r)
			if errs[i] == nil && (answers[i] == nil || len(answers[i].Results) != len(req.Prefixes)) {
				errs[i] = domain.Errorf(domain.KindInternal, "prefix lookup in partition `%s` returned a response that does not match its %d prefixes", parts[i].Name, len(req.Prefixes))
			}
		}()
	}
	wg.Wait()
	out := &domain.PrefixLookupResponse{SchemaID: req.SchemaID, Results: make([]domain.PrefixLookupResult, len(req.Prefixes))}
	for i, a := range answers {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if i == 0 {
			out.SchemaID = a.SchemaID
		} else if a.SchemaID != out.SchemaID {
			// The schema changed between two partitions' answers: ask again.
			return nil, &domain.Error{Kind: domain.KindUnavailable, Retryable: true,
				Message: fmt.Sprintf("the schema of table `%s` changed during the lookup; retry", req.Table)}
		}
		for j := range a.Results {
			got, m := &a.Results[j], &out.Results[j]
			if m.Err != nil {
				continue
			}
			if got.Err != nil {
				m.Rows, m.Truncated, m.Err = nil, false, got.Err
				continue
			}
			room := len(got.Rows)
			if req.MaxRowsPerPrefix > 0 {
				room = min(room, req.MaxRowsPerPrefix-len(m.Rows))
			}
			m.Rows = append(m.Rows, got.Rows[:room]...)
			if got.Truncated || room < len(got.Rows) {
				m.Truncated = true
			}
		}
	}
	return out, nil
}

func unsupported(cluster, what string) error {
	return domain.Errorf(domain.KindUnsupported, "cluster `%s` does not support %s yet", cluster, what)
}

// MinWorkableDeadline is the shortest request deadline with which a data
// request can get through when the gateway has not served the table or the
// cluster recently: the fixed costs of resolving the table's definition and
// metadata (two round trips to the cluster) and, on first use, opening a
// connection to the coordinator and a tablet server. On a local cluster a
// write to a table the gateway had not served got through with 30 ms and not
// with 10 ms (TestGatewayDeadlineMessages); the bound leaves room for a
// loaded machine, and remote clusters add their round trip times.
const MinWorkableDeadline = 100 * time.Millisecond

// explainTimeout rewrites a whole-request timeout so that it says what
// happened (what, e.g. that nothing was written) instead of which internal
// call was running, and, when the caller's deadline was below
// MinWorkableDeadline, says so. Other errors are returned as they are.
func explainTimeout(ctx context.Context, start time.Time, err error, what string) error {
	de := domain.AsError(err)
	if de == nil || de.Kind != domain.KindTimeout {
		return err
	}
	msg := "the request deadline passed before the gateway finished; " + what
	if dl, ok := ctx.Deadline(); ok {
		budget := dl.Sub(start)
		msg = fmt.Sprintf("the request deadline (%s) passed before the gateway finished; %s", budget.Round(time.Millisecond), what)
		if budget < MinWorkableDeadline {
			msg += fmt.Sprintf("; a deadline below %s may be shorter than the fixed costs of a request "+
				"(the table's metadata and a connection to the cluster, on first use): ask for at least %s", MinWorkableDeadline, MinWorkableDeadline)
		}
	}
	out := *de
	out.Message = msg
	if out.Cause == nil {
		out.Cause = de
	}
	return &out
}

// explainNotFound adds, to a table_not_found answer, that the table's
// database is what is missing, when it is: Fluss answers both with
// TABLE_NOT_EXIST, and the official contract keeps the code
// `table_not_found` for the records routes. One DatabaseExists call, on
// this error path only; when it fails the error is returned as it is.
func (s *RecordService) explainNotFound(ctx context.Context, scope Scope, path domain.TablePath, err error) error {
	de := domain.AsError(err)
	if de == nil || de.Kind != domain.KindNotFound || de.Resource != domain.ResourceTable || path.Database == "" {
		return err
	}
	session, serr := s.clusters.Session(ctx, scope.Cluster, scope.Principal)
	if serr != nil || session.Catalog() == nil {
		return err
	}
	exists, derr := session.Catalog().DatabaseExists(ctx, path.Database)
	if derr != nil || exists {
		return err
	}
	out := *de
	out.Message = fmt.Sprintf("table `%s` does not exist: database `%s` does not exist", path, path.Database)
	return &out
}

// collapseKeys returns the distinct keys of keys in first-seen order and,
// for each key, the position of its copy among them (nil when all are
// distinct). Keys are compared datum by datum (null flag, integer, nanos,
// float bits, bytes).
func collapseKeys(keys [][]domain.Datum) (uniq [][]domain.Datum, index []int) {
	if len(keys) < 2 {
		return keys, nil
	}
	seen := make(map[string]int, len(keys))
	index = make([]int, len(keys))
	var b []byte
	for i, k := range keys {
		b = appendKeyIdentity(b[:0], k)
		j, ok := seen[string(b)]
		if !ok {
			j = len(uniq)
			seen[string(b)] = j
			uniq = append(uniq, k)
		}
		index[i] = j
	}
	if len(uniq) == len(keys) {
		return keys, nil
	}
	return uniq, index
}

// appendKeyIdentity appends an unambiguous encoding of the datums of a key.
func appendKeyIdentity(b []byte, key []domain.Datum) []byte {
	for _, d := range key {
		if d.Null {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = binary.LittleEndian.AppendUint64(b, uint64(d.I64))
		b = binary.LittleEndian.AppendUint32(b, uint32(d.Nanos))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(d.F64))
		b = binary.LittleEndian.AppendUint64(b, uint64(len(d.Bytes)))
		b = append(b, d.Bytes...)
		b = binary.LittleEndian.AppendUint64(b, uint64(len(d.Elems)))
		b = appendKeyIdentity(b, d.Elems)
	}
	return b
}
