package application

// This file holds the write use case (RecordService.Write): decoding
// against the table definition, the delivery deadline, the per-entry
// verdicts and the entries rejected one by one.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// WriteDecoder turns a write request's body into a batch for one table
// definition. The inbound adapter implements it (the application knows no
// wire format); it may be called more than once, with a newer definition,
// when the first one turned out to be stale.
type WriteDecoder interface {
	// DecodeWrite decodes every entry against t, or fails naming the entry
	// and column (KindInvalidArgument), or with KindLimitExceeded when the
	// request has more than maxRows entries.
	DecodeWrite(t *Table, maxRows int) (DecodedWrite, error)
}

// DecodedWrite is what a WriteDecoder makes of a request.
type DecodedWrite struct {
	Batch domain.WriteBatch
	// IDs are the ids of Batch's entries, in input order, one per entry.
	IDs []string
	// Rejected are the invalid entries a decoder answers one by one instead
	// of failing the request (the `X-Fluss-Invalid-Entries: report`
	// extension), in input order; Batch then holds the valid entries only.
	Rejected []RejectedEntry
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

// WriteCommand is the input of RecordService.Write.
type WriteCommand struct {
	Path    domain.TablePath
	Decoder WriteDecoder
	// Runs: the caller takes the verdicts of columnar rows as runs
	// (WriteResult.Runs) when the cluster's writer gives them
	// (domain.ColumnarRunWriter).
	Runs bool
}

// WriteResult is the outcome of a write whose entries all have a verdict.
type WriteResult struct {
	// Table is the definition the entries were decoded against.
	Table *Table
	// IDs and Results are parallel, in input order.
	IDs     []string
	Results []domain.EntryResult
	// Runs, when not nil, holds the verdicts instead of Results, run by
	// run in input order (WriteCommand.Runs; domain.ResultRun); Results is
	// then nil.
	Runs    []domain.ResultRun
	Summary WriteSummary
}

// expandRuns returns one verdict per entry of runs.
func expandRuns(runs []domain.ResultRun) []domain.EntryResult {
	return domain.ExpandRuns(make([]domain.EntryResult, 0, domain.RunRows(runs)), runs)
}

// Verdicts returns one verdict per entry: Results, or Runs expanded.
func (r WriteResult) Verdicts() []domain.EntryResult {
	if r.Runs != nil {
		return expandRuns(r.Runs)
	}
	return r.Results
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
	res, err := s.uc.write(ctx, scope, cmd, start)
	if err != nil {
		res = WriteResult{} // a throttled write's verdicts are for the metrics only
	}
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
	var rejected []RejectedEntry // those of the last decode
	decode := func(t *Table) (domain.WriteBatch, []string, error) {
		dw, err := cmd.Decoder.DecodeWrite(t, s.limits.WriteMaxRows)
		batch, ids := dw.Batch, dw.IDs
		rejected = dw.Rejected
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
	// The summary of the verdicts run returned last (summedOf), taken in
	// the one pass over them that also tells whether any entry met a
	// dropped table: a 500-entry answer is read once here instead of once
	// for that question and once more for the summary.
	var summed WriteSummary
	var summedOf []domain.EntryResult
	// runs holds the verdicts of the last call when the writer answered
	// run by run (cmd.Runs; that call's results are then nil).
	var runs []domain.ResultRun
	runWriter, _ := writer.(domain.ColumnarRunWriter)
	run := func(_ *Table, batch domain.WriteBatch) ([]domain.EntryResult, error) {
		runs = nil
		if deliveryCtx.Err() != nil {
			return nil, notSubmitted(ctx, deliveryCtx)
		}
		sent = s.now()
		if cmd.Runs && batch.Columns != nil && runWriter != nil {
			return s.writeRuns(ctx, deliveryCtx, runWriter, &batch, &runs, &summed)
		}
		results, err := writer.Write(deliveryCtx, &batch)
		if err == nil && len(results) != batch.Len() {
			return nil, domain.Errorf(domain.KindInternal, "writer returned %d verdicts for %d entries", len(results), batch.Len())
		}
		if err != nil && deliveryCtx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
			return nil, notSubmitted(ctx, deliveryCtx)
		}
		if err == nil {
			summed, summedOf = summarize(results), results
			if summed.FailedByCode[codeTableNotFound] > 0 {
				if gone := tableGone(results); gone != nil {
					return nil, gone
				}
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
			if rejectedUnknownColumn(rejected) {
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
	if runs != nil && gone == nil {
		if len(rejected) == 0 {
			res := WriteResult{Table: t, IDs: ids, Runs: runs, Summary: summed}
			res.Summary.Delivery = s.now().Sub(sent)
			return res, throttledRuns(runs)
		}
		results = expandRuns(runs)
	}
	ids, results = mergeRejected(ids, results, rejected)
	if !sameResults(results, summedOf) {
		summed = summarize(results)
	}
	res := WriteResult{Table: t, IDs: ids, Results: results, Summary: summed}
	res.Summary.Delivery = s.now().Sub(sent)
	// A write none of whose entries got past storage backpressure answers
	// an error; its verdicts still come back, for the metrics (Write drops
	// them).
	return res, throttled(results)
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
		if !throttledVerdict(r) {
			return nil
		}
		wait = max(wait, r.RetryAfter)
	}
	return throttledError(len(results), wait)
}

// throttledRuns is throttled for verdicts run by run.
func throttledRuns(runs []domain.ResultRun) error {
	var wait time.Duration
	for _, run := range runs {
		if !throttledVerdict(run.Result) {
			return nil
		}
		wait = max(wait, run.Result.RetryAfter)
	}
	return throttledError(domain.RunRows(runs), wait)
}

func throttledVerdict(r domain.EntryResult) bool {
	return !r.OK() && r.Code == EntryCodeStorageBackpressure && r.Applied == domain.AppliedNo && r.Retryable
}

func throttledError(entries int, wait time.Duration) error {
	if entries == 0 {
		return nil
	}
	ms := max(int64((wait+time.Millisecond-1)/time.Millisecond), 1)
	return &domain.Error{Kind: domain.KindResourceExhausted, Retryable: true, RetryAfterMillis: ms,
		Message: fmt.Sprintf("KV storage backpressure: the tablet servers' throttle keeps all %d entries from being written before the deadline; "+
			"nothing was written; the throttle ends in %d ms", entries, ms)}
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
		if r.Code == codeTableNotFound {
			return &tableGoneError{err: &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable, Message: results[i].Message}, results: results}
		}
	}
	return nil
}

// codeTableNotFound is the entry code of a row whose table the writer
// found dropped (see tableGone).
const codeTableNotFound = "table_not_found"

// sameResults reports whether a and b are the same verdicts: one slice, not
// two with equal contents.
func sameResults(a, b []domain.EntryResult) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
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
	var sum WriteSummary
	for i := range results {
		sum.add(&results[i], 1)
	}
	return sum
}

// summarizeRuns is summarize for verdicts run by run.
func summarizeRuns(runs []domain.ResultRun) WriteSummary {
	var sum WriteSummary
	for i := range runs {
		sum.add(&runs[i].Result, runs[i].Rows)
	}
	return sum
}

// add counts verdict r for rows entries.
func (sum *WriteSummary) add(r *domain.EntryResult, rows int) {
	sum.Rows += rows
	if r.OK() {
		sum.Succeeded += rows
		return
	}
	sum.Failed += rows
	if sum.FailedByCode == nil {
		sum.FailedByCode = map[string]int{}
	}
	sum.FailedByCode[r.Code] += rows
	if r.Applied != domain.AppliedNo {
		sum.AppliedUnknown += rows
	}
}

// writeRuns is the writer call of Write for columnar rows answered run by
// run (cmd.Runs): the runs go to *runs and their summary to *summed; a
// table_not_found verdict becomes a *tableGoneError with the verdicts
// expanded, as for Write's per-entry verdicts. The results it returns are
// always nil.
func (s *RecordService) writeRuns(ctx, deliveryCtx context.Context, w domain.ColumnarRunWriter, batch *domain.WriteBatch,
	runs *[]domain.ResultRun, summed *WriteSummary) ([]domain.EntryResult, error) {
	got, err := w.WriteColumnRuns(deliveryCtx, batch)
	if err != nil {
		if deliveryCtx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
			return nil, notSubmitted(ctx, deliveryCtx)
		}
		return nil, err
	}
	if n := domain.RunRows(got); n != batch.Len() {
		return nil, domain.Errorf(domain.KindInternal, "writer returned verdicts for %d entries of %d", n, batch.Len())
	}
	*summed = summarizeRuns(got)
	if summed.FailedByCode[codeTableNotFound] > 0 {
		if gone := tableGone(expandRuns(got)); gone != nil {
			return nil, gone
		}
	}
	if got == nil {
		got = []domain.ResultRun{} // an empty batch: no runs, still answered run by run
	}
	*runs = got
	return nil, nil
}
