package application

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
	"github.com/fluss-gateway/fluss-gateway-go/internal/defaults"
)

// The Idempotency-Key extension: a keyed write lands at most once, whichever
// replica serves its retries. The ledger is a Fluss primary-key table with
// `table.merge-engine = first_row`: Fluss keeps the first row written for a
// primary key and ignores every later upsert of it (apache/fluss:
// fluss-server/.../kv/rowmerger/FirstRowRowMerger.java, merge returns the old
// row; the merger refuses deletes and partial updates, and on 0.9.1 and
// 1.0-SNAPSHOT a delete is acknowledged and ignored, TestFirstRowMergeEngine).
// That gives the gateway a write-once register per key without a
// coordination service:
//
//   - claim: upsert a `claim` row (claim id, body fingerprint, lease expiry),
//     then look the key up: the claim the table kept is the owner;
//   - answer: the owner writes the rows, then upserts one `answer` row (the
//     status and every verdict); first_row keeps the first answer, so an
//     answer recorded for a dead owner (below) can never be replaced.
//
// The ledger is auto-partitioned by time (HOUR or DAY, UTC) with a retention
// covering the key window, so Fluss's coordinator drops old keys; a key is
// looked up in every partition of its window. A claim goes to the current
// partition; two claims of one key in different partitions (a race across a
// partition boundary) make both claimants yield (see ledgerState.owner),
// which is safe and, rarely, ends as a dead attempt. Ledger rows are written
// Urgent (no linger): each is a request's critical path.

// IdempotencyKey is what a keyed write adds to WriteCommand: the client's key
// (1-255 visible ASCII characters; see ValidateIdempotencyKey) and the
// fingerprint of the request (a hash of its
// canonical body and of what changes its meaning, computed by the inbound
// adapter, which knows the wire format).
type IdempotencyKey struct {
	Key         string
	Fingerprint string
}

// MaxIdempotencyKeyLen is the longest Idempotency-Key accepted, in bytes.
const MaxIdempotencyKeyLen = 255

// ValidateIdempotencyKey checks a key: 1 to MaxIdempotencyKeyLen visible
// ASCII characters (0x21-0x7E). The message quotes at most 32 characters.
func ValidateIdempotencyKey(k string) error {
	if k == "" || len(k) > MaxIdempotencyKeyLen {
		return domain.InvalidArgument("Idempotency-Key: must be 1 to %d visible ASCII characters, got %d bytes", MaxIdempotencyKeyLen, len(k))
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x21 || c > 0x7E {
			return domain.InvalidArgument("Idempotency-Key: byte %d (0x%02x) is not a visible ASCII character (key %q)", i, c, cut(k, 32))
		}
	}
	return nil
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// KeyReusedError answers a keyed write whose key was used, in its scope,
// for a request with another fingerprint (HTTP 422 invalid_argument).
type KeyReusedError struct{ Key string }

func (e *KeyReusedError) Error() string {
	return fmt.Sprintf("Idempotency-Key %q was used for another request (a different body) on this table; nothing was written; use a new key for a new request", cut(e.Key, 32))
}

// KeyInFlightError answers a keyed write whose key is claimed by an attempt
// still in flight (on this or another gateway) that did not answer before
// this request's deadline (HTTP 409 with Retry-After).
type KeyInFlightError struct {
	Key string
	// RetryAfter is when a retry can expect the answer: the claim's lease
	// end, at least one second.
	RetryAfter time.Duration
}

func (e *KeyInFlightError) Error() string {
	return fmt.Sprintf("Idempotency-Key %q: an earlier request with this key is still in progress; nothing was written by this request; retry after %d s to get its answer",
		cut(e.Key, 32), retrySeconds(e.RetryAfter))
}

func retrySeconds(d time.Duration) int64 { return max(1, int64(math.Ceil(d.Seconds()))) }

// RetryAfterSeconds is the Retry-After value of the answer, in seconds (>= 1).
func (e *KeyInFlightError) RetryAfterSeconds() int64 { return retrySeconds(e.RetryAfter) }

// EntryCodeOutcomeUnknown is the entry code of the recorded answer of a
// keyed write whose owner died (or overran its lease) before it recorded its
// verdicts: each entry may or may not have landed (applied "unknown"), and
// the gateway will not write it again under this key.
const EntryCodeOutcomeUnknown = "outcome_unknown"

// IdempotencyOptions configure IdempotentWrites (`gateway.idempotency.*`).
type IdempotencyOptions struct {
	// Ledger is the ledger table; its database and table are created on
	// first use. Zero: DefaultIdempotencyLedger.
	Ledger domain.TablePath
	// Window is how long a key is remembered: at least Window, at most
	// Window plus one partition unit (an hour up to 6 h windows, a day
	// above), the ledger partitions being what is looked up and what
	// Fluss's retention drops. 0: DefaultIdempotencyWindow.
	Window time.Duration
	// Lease is how long a claim of a request without a deadline stays
	// valid; a request with a deadline holds its claim until that deadline
	// plus LeaseMargin. 0: DefaultIdempotencyLease.
	Lease time.Duration
	// Buckets is the ledger's bucket count when the gateway creates it; 0
	// takes the cluster default.
	Buckets int
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Metrics counts keyed writes by outcome; nil: none.
	Metrics IdempotencyMetrics
	// AfterWrite, when set, runs after the owner's write and before it
	// records the answer; an error aborts the request without recording
	// (tests simulate a gateway that dies there).
	AfterWrite func(ctx context.Context, key IdempotencyKey) error
}

// IdempotencyMetrics observes keyed writes; telemetry.GatewayMetrics
// implements it.
type IdempotencyMetrics interface {
	// RecordIdempotency counts one keyed write by outcome: claimed (this
	// request wrote), replayed, conflict (409 in flight), reused (422),
	// unknown (the answer of a dead attempt was recorded or replayed as
	// such), error (the ledger failed). waited is the time spent waiting
	// for another attempt's answer (0 when none).
	RecordIdempotency(ctx context.Context, table domain.TablePath, outcome string, waited time.Duration)
	// StartIdempotencySpan starts a span around one ledger step (claim,
	// wait, record); end sets its outcome.
	StartIdempotencySpan(ctx context.Context, step string) (context.Context, func(outcome string, err error))
}

// Outcomes of IdempotencyMetrics.RecordIdempotency.
const (
	IdemClaimed  = "claimed"
	IdemReplayed = "replayed"
	IdemConflict = "conflict"
	IdemReused   = "reused"
	IdemUnknown  = "unknown"
	IdemError    = "error"
)

// DefaultIdempotencyLedger is the default IdempotencyOptions.Ledger.
var DefaultIdempotencyLedger = domain.TablePath{Database: "fluss_gateway", Table: "idempotency_keys"}

// Defaults and bounds of IdempotencyOptions.
const (
	DefaultIdempotencyWindow = 24 * time.Hour
	DefaultIdempotencyLease  = time.Minute
	// LeaseMargin is added to a request's deadline for its claim's lease:
	// the time the owner has, after its deadline, to record its answer.
	LeaseMargin = 2 * time.Second
	// MinIdempotencyWindow and MaxIdempotencyWindow bound Window: a key is
	// looked up in every partition of its window (at most 8 with DAY units).
	MinIdempotencyWindow = time.Minute
	MaxIdempotencyWindow = 7 * 24 * time.Hour
	// recordTimeout bounds recording an answer after the write, which runs
	// even when the caller went away.
	recordTimeout = 5 * time.Second
)

// IdempotentWrites is the keyed-write use case: it wraps RecordService.Write
// with the ledger (reached through the session's RowWriter, Lookup and
// Catalog ports).
type IdempotentWrites struct {
	records *RecordService
	opts    IdempotencyOptions
	now     func() time.Time
	unit    time.Duration // the partition unit of a ledger it creates: an hour or a day
}

// NewIdempotentWrites returns the keyed-write use case over records.
func NewIdempotentWrites(records *RecordService, opts IdempotencyOptions) *IdempotentWrites {
	if opts.Ledger == (domain.TablePath{}) {
		opts.Ledger = DefaultIdempotencyLedger
	}
	opts.Window = defaults.Positive(opts.Window, DefaultIdempotencyWindow)
	opts.Window = min(max(opts.Window, MinIdempotencyWindow), MaxIdempotencyWindow)
	opts.Lease = defaults.Positive(opts.Lease, DefaultIdempotencyLease)
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	w := &IdempotentWrites{records: records, opts: opts, now: now, unit: 24 * time.Hour}
	if opts.Window <= 6*time.Hour {
		w.unit = time.Hour
	}
	return w
}

// IdempotentResult is the answer of a keyed write: the write's result, or
// the recorded error it answered (Err), and whether it was replayed from
// the ledger (nothing was written by this request).
type IdempotentResult struct {
	WriteResult
	Err      error
	Replayed bool
}

// Write answers a keyed write (see the package comment above):
//
//   - the key's recorded answer with Replayed, when the fingerprint matches
//     (nothing is written again);
//   - *KeyReusedError when the key was used with another fingerprint;
//   - *KeyInFlightError when another attempt holds the key past this
//     request's deadline;
//   - for an attempt that died before recording its answer (lease over),
//     an answer with every entry `outcome_unknown`, applied "unknown",
//     recorded so that every later retry gets the same one;
//   - otherwise the key is claimed, the write runs and its answer (verdicts
//     or whole-request error) is recorded before it is returned.
//
// The returned error is one of the two above, the hook's, or the ledger's
// own failure before the claim was won (this request wrote nothing). When
// only recording the answer fails, the write's answer is still returned;
// a retry then meets a claim without an answer: outcome_unknown after the
// lease.
func (w *IdempotentWrites) Write(ctx context.Context, scope Scope, cmd WriteCommand, key IdempotencyKey) (IdempotentResult, error) {
	res, outcome, waited, err := w.write(ctx, scope, cmd, key)
	if m := w.opts.Metrics; m != nil {
		if err != nil && outcome == "" {
			outcome = IdemError
		}
		m.RecordIdempotency(ctx, cmd.Path, outcome, waited)
	}
	return res, err
}

func (w *IdempotentWrites) write(ctx context.Context, scope Scope, cmd WriteCommand, key IdempotencyKey) (IdempotentResult, string, time.Duration, error) {
	if err := ValidateIdempotencyKey(key.Key); err != nil {
		return IdempotentResult{}, IdemError, 0, err
	}
	if err := validatePath(cmd.Path, false); err != nil {
		return IdempotentResult{}, IdemError, 0, err
	}
	session, err := w.records.clusters.Session(ctx, scope.Cluster, scope.Principal)
	if err != nil {
		return IdempotentResult{}, "", 0, err
	}
	l, err := w.ledger(ctx, scope, session)
	if err != nil {
		return IdempotentResult{}, "", 0, err
	}
	k := ledgerKey{hash: scopeHash(scope, cmd.Path, key.Key), fp: key.Fingerprint}
	start := w.now()
	st, err := l.read(ctx, k, start)
	if err != nil {
		return IdempotentResult{}, "", 0, err
	}
	if st.empty() {
		mine := claimRow{id: newClaimID(), fp: k.fp, part: partitionName(l.unit, start), created: start, lease: w.leaseEnd(ctx, start)}
		cctx, end := w.span(ctx, "claim")
		st, err = l.claim(cctx, k, mine, start)
		end(claimOutcome(st, mine.id), err)
		if err != nil {
			return IdempotentResult{}, "", 0, err
		}
		if owner, ok := st.owner(); ok && owner.id == mine.id {
			res, err := w.own(ctx, scope, cmd, key, l, k, mine)
			return res, IdemClaimed, 0, err
		}
	}
	return w.follow(ctx, scope, cmd, key, l, k, st, start)
}

func claimOutcome(st ledgerState, id string) string {
	if o, ok := st.owner(); ok && o.id == id {
		return "won"
	}
	return "lost"
}

// own runs the write of the key's owner and records its answer.
func (w *IdempotentWrites) own(ctx context.Context, scope Scope, cmd WriteCommand, key IdempotencyKey, l *ledger, k ledgerKey, mine claimRow) (IdempotentResult, error) {
	res, werr := w.records.Write(ctx, scope, cmd)
	if hook := w.opts.AfterWrite; hook != nil {
		if err := hook(ctx, key); err != nil {
			return IdempotentResult{}, err
		}
	}
	ans := answerOf(res, werr)
	// The answer is recorded even when the caller went away: a retry must
	// find it.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	rctx, end := w.span(rctx, "record")
	err := l.record(rctx, k, mine.part, mine.id, ans)
	end("recorded", err)
	// When recording failed the rows were still written (or not) as the
	// verdicts say: the caller gets them; a retry finds a claim without an
	// answer and, after its lease, the outcome_unknown answer.
	return IdempotentResult{WriteResult: res, Err: werr}, nil
}

// follow answers a request whose key another attempt holds: replay, 422,
// wait, 409, or the dead attempt's outcome_unknown answer.
func (w *IdempotentWrites) follow(ctx context.Context, scope Scope, cmd WriteCommand, key IdempotencyKey, l *ledger, k ledgerKey, st ledgerState, start time.Time) (IdempotentResult, string, time.Duration, error) {
	var waited time.Duration
	wctx, end := w.span(ctx, "wait")
	defer func() { end("done", nil) }()
	delay := 10 * time.Millisecond
	for {
		if c, ok := st.first(); ok && c.fp != k.fp {
			return IdempotentResult{}, IdemReused, waited, &KeyReusedError{Key: key.Key}
		}
		if a, ok := st.answer(); ok {
			res, err := a.replay()
			if err != nil {
				return IdempotentResult{}, "", waited, err
			}
			outcome := IdemReplayed
			if a.Unknown {
				outcome = IdemUnknown
			}
			return res, outcome, waited, nil
		}
		now := w.now()
		lease := st.leaseEnd()
		if !now.Before(lease) {
			// The holder's lease is over and it recorded nothing: record
			// the dead attempt's outcome (first_row keeps whichever answer
			// came first, the holder's own or this one) and replay it.
			ans, err := w.unknownAnswer(wctx, scope, cmd)
			if err != nil {
				return IdempotentResult{}, "", waited, err
			}
			c, _ := st.first()
			if err := l.record(wctx, k, c.part, c.id, ans); err != nil {
				return IdempotentResult{}, "", waited, err
			}
		} else {
			// Wait for the holder's answer up to this request's deadline
			// (less the time needed to answer).
			dl, ok := ctx.Deadline()
			if ok && now.Add(delay+AnswerMargin(dl.Sub(start))).After(dl) {
				return IdempotentResult{}, IdemConflict, waited, &KeyInFlightError{Key: key.Key, RetryAfter: lease.Sub(now)}
			}
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return IdempotentResult{}, IdemConflict, waited, &KeyInFlightError{Key: key.Key, RetryAfter: lease.Sub(now)}
			case <-t.C:
			}
			waited = w.now().Sub(start)
			delay = min(delay*2, 200*time.Millisecond)
		}
		var err error
		if st, err = l.read(wctx, k, w.now()); err != nil {
			return IdempotentResult{}, "", waited, err
		}
	}
}

// unknownAnswer is the answer recorded for an attempt that died: every
// entry of the request (decoded, not written) outcome_unknown, applied
// "unknown", not retryable; entries the body's own decoding rejects keep
// that verdict. A body that does not decode answers its decoding error
// (nothing could have been written from it), recorded too.
func (w *IdempotentWrites) unknownAnswer(ctx context.Context, scope Scope, cmd WriteCommand) (recordedAnswer, error) {
	s := w.records
	session, err := s.clusters.Session(ctx, scope.Cluster, scope.Principal)
	if err != nil {
		return recordedAnswer{}, err
	}
	t, err := s.definition(keyOf(scope, cmd.Path), session).current(ctx)
	if err != nil {
		return recordedAnswer{}, err
	}
	dw, derr := cmd.Decoder.DecodeWrite(t, s.limits.WriteMaxRows)
	ids := dw.IDs
	if derr != nil {
		return answerOf(WriteResult{}, derr), nil
	}
	results := make([]domain.EntryResult, len(ids))
	for i := range results {
		results[i] = domain.EntryResult{Code: EntryCodeOutcomeUnknown, Kind: "failed_precondition", Applied: domain.AppliedUnknown,
			Message: "an earlier request with this Idempotency-Key stopped (gateway failure or lease over) before recording its verdicts: " +
				"this entry may or may not have been written; the gateway will not write it again under this key; read the table to reconcile, or send it with a new key"}
	}
	ids, results = mergeRejected(ids, results, dw.Rejected)
	a := answerOf(WriteResult{IDs: ids, Results: results}, nil)
	a.Unknown = true
	return a, nil
}

func (w *IdempotentWrites) span(ctx context.Context, step string) (context.Context, func(string, error)) {
	if m := w.opts.Metrics; m != nil {
		return m.StartIdempotencySpan(ctx, step)
	}
	return ctx, func(string, error) {}
}

// leaseEnd is the lease of a claim made at now: the request's deadline
// plus LeaseMargin, or Lease without a deadline.
func (w *IdempotentWrites) leaseEnd(ctx context.Context, now time.Time) time.Time {
	if dl, ok := ctx.Deadline(); ok {
		return dl.Add(LeaseMargin)
	}
	return now.Add(w.opts.Lease)
}

// partitionName is the ledger partition value of t: UTC yyyyMMddHH for
// hourly units, yyyyMMdd for daily (apache/fluss: AutoPartitionTimeUnit
// formats).
func partitionName(unit time.Duration, t time.Time) string {
	if unit == time.Hour {
		return t.UTC().Format("2006010215")
	}
	return t.UTC().Format("20060102")
}

// partitions are the partitions a key claimed within the window before now
// may be in, oldest first, plus the next unit (a claim made by a replica
// whose clock is slightly ahead, or just across the boundary).
func partitions(unit, window time.Duration, now time.Time) []string {
	from := now.Add(-window).UTC().Truncate(unit)
	var out []string
	for t := from; !t.After(now.Add(unit)); t = t.Add(unit) {
		out = append(out, partitionName(unit, t))
	}
	return out
}

// retention is the ledger's table.auto-partition.num-retention: the units
// of the window, plus one.
func (w *IdempotentWrites) retention() int {
	return int((w.opts.Window+w.unit-1)/w.unit) + 1
}

// scopeHash names a key within its scope (principal, cluster, table): the
// SHA-256 of the length-prefixed parts, in hex.
func scopeHash(scope Scope, path domain.TablePath, key string) string {
	h := sha256.New()
	for _, s := range []string{scope.Principal.Name, scope.Principal.ActAs, scope.Cluster, path.Database, path.Table, key} {
		fmt.Fprintf(h, "%d:%s|", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func newClaimID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// recordedAnswer is the answer stored in the ledger (JSON in the answer
// row): the verdicts, or the whole-request error.
type recordedAnswer struct {
	IDs     []string        `json:"ids,omitempty"`
	Entries []recordedEntry `json:"entries,omitempty"`
	Error   *recordedError  `json:"error,omitempty"`
	// Unknown marks the answer recorded for a dead attempt.
	Unknown bool `json:"unknown,omitempty"`
}

type recordedEntry struct {
	Code         string `json:"c,omitempty"`
	Kind         string `json:"k,omitempty"`
	Message      string `json:"m,omitempty"`
	Retryable    bool   `json:"r,omitempty"`
	Applied      string `json:"a,omitempty"`
	RetryAfterMs int64  `json:"ra,omitempty"`
}

type recordedError struct {
	Kind             int    `json:"kind"`
	Resource         string `json:"resource,omitempty"`
	Message          string `json:"message"`
	Retryable        bool   `json:"retryable,omitempty"`
	RetryAfterMillis int64  `json:"retry_after_ms,omitempty"`
}

func answerOf(res WriteResult, err error) recordedAnswer {
	if err != nil {
		de := domain.AsError(err)
		if de == nil {
			de = &domain.Error{Kind: domain.KindInternal, Message: err.Error()}
		}
		return recordedAnswer{Error: &recordedError{Kind: int(de.Kind), Resource: string(de.Resource), Message: de.Error(),
			Retryable: de.Retryable, RetryAfterMillis: de.RetryAfterMillis}}
	}
	a := recordedAnswer{IDs: res.IDs, Entries: make([]recordedEntry, len(res.Results))}
	for i, r := range res.Results {
		a.Entries[i] = recordedEntry{Code: r.Code, Kind: string(r.Kind), Message: r.Message, Retryable: r.Retryable, Applied: string(r.Applied),
			RetryAfterMs: r.RetryAfter.Milliseconds()}
	}
	return a
}

func (a recordedAnswer) replay() (IdempotentResult, error) {
	if a.Error != nil {
		e := a.Error
		return IdempotentResult{Replayed: true, Err: &domain.Error{Kind: domain.Kind(e.Kind), Resource: domain.Resource(e.Resource),
			Message: e.Message, Retryable: e.Retryable, RetryAfterMillis: e.RetryAfterMillis}}, nil
	}
	if len(a.IDs) != len(a.Entries) {
		return IdempotentResult{}, domain.Errorf(domain.KindInternal, "idempotency ledger: a recorded answer has %d ids for %d verdicts", len(a.IDs), len(a.Entries))
	}
	results := make([]domain.EntryResult, len(a.Entries))
	for i, e := range a.Entries {
		results[i] = domain.EntryResult{Code: e.Code, Kind: domain.EntryKind(e.Kind), Message: e.Message, Retryable: e.Retryable, Applied: domain.Applied(e.Applied),
			RetryAfter: time.Duration(e.RetryAfterMs) * time.Millisecond}
	}
	return IdempotentResult{Replayed: true, WriteResult: WriteResult{IDs: a.IDs, Results: results, Summary: summarize(results)}}, nil
}

// ledgerKey is a key's ledger identity: its scope hash, and the
// fingerprint of this request.
type ledgerKey struct{ hash, fp string }

type claimRow struct {
	id, fp, part   string
	created, lease time.Time
}

type answerRow struct {
	part, claimID string
	recordedAnswer
}

// ledgerState is what the ledger holds for a key in the partitions read:
// per partition, the claim and the answer first_row kept.
type ledgerState struct {
	claims  []claimRow  // oldest partition first; at most one per partition
	answers []answerRow // oldest partition first
}

func (s ledgerState) empty() bool { return len(s.claims) == 0 && len(s.answers) == 0 }

// first is the claim in the oldest partition (the one a dead attempt's
// answer is recorded against).
func (s ledgerState) first() (claimRow, bool) {
	if len(s.claims) == 0 {
		return claimRow{}, false
	}
	return s.claims[0], true
}

// owner is the claim that may write: the only claim of the key. Two claims
// in different partitions (a race across a partition boundary) make every
// claimant yield: a claimant that saw only its own claim may already be
// writing, and one that sees both cannot tell, so none of them may start.
func (s ledgerState) owner() (claimRow, bool) {
	if len(s.claims) != 1 {
		return claimRow{}, false
	}
	return s.claims[0], true
}

// answer is the recorded answer: the one in the oldest partition.
func (s ledgerState) answer() (answerRow, bool) {
	if len(s.answers) == 0 {
		return answerRow{}, false
	}
	return s.answers[0], true
}

// leaseEnd is the latest lease among the claims.
func (s ledgerState) leaseEnd() time.Time {
	var t time.Time
	for _, c := range s.claims {
		if c.lease.After(t) {
			t = c.lease
		}
	}
	return t
}

// Ledger row kinds and columns.
const (
	kindClaim  = "claim"
	kindAnswer = "answer"

	colKey         = "key_hash"
	colKind        = "kind"
	colPartition   = "p"
	colClaimID     = "claim_id"
	colFingerprint = "fingerprint"
	colCreated     = "created_ms"
	colLease       = "lease_ms"
	colAnswer      = "answer"
	ledgerColumns  = 8
)

// LedgerDescriptor is the ledger table's definition for a window: a
// first_row primary-key table, auto-partitioned by HOUR or DAY in UTC with a
// retention covering the window.
func (w *IdempotentWrites) LedgerDescriptor() domain.TableDescriptor {
	str := func(nullable bool) domain.DataType {
		return domain.DataType{Root: domain.TypeString, Nullable: nullable}
	}
	big := domain.DataType{Root: domain.TypeBigInt, Nullable: true}
	unit := domain.UnitDay
	if w.unit == time.Hour {
		unit = domain.UnitHour
	}
	return domain.TableDescriptor{
		Schema: domain.Schema{
			Columns: []domain.Column{
				{Name: colKey, Type: str(false), ID: -1}, {Name: colKind, Type: str(false), ID: -1}, {Name: colPartition, Type: str(false), ID: -1},
				{Name: colClaimID, Type: str(true), ID: -1}, {Name: colFingerprint, Type: str(true), ID: -1},
				{Name: colCreated, Type: big, ID: -1}, {Name: colLease, Type: big, ID: -1}, {Name: colAnswer, Type: str(true), ID: -1},
			},
			PrimaryKey: []string{colKey, colKind, colPartition},
		},
		Comment:       "fluss-gateway Idempotency-Key ledger (first_row: the first claim and the first answer of a key win)",
		PartitionKeys: []string{colPartition},
		BucketCount:   w.opts.Buckets,
		Properties: map[string]string{
			"table.merge-engine":             "first_row",
			domain.OptAutoPartitionEnabled:   "true",
			domain.OptAutoPartitionTimeUnit:  string(unit),
			domain.OptAutoPartitionTimeZone:  "UTC",
			domain.OptAutoPartitionRetention: fmt.Sprint(w.retention()),
		},
	}
}

// ledger is the ledger table of one session.
type ledger struct {
	w *IdempotentWrites
	// unit is the ledger's partition unit (an hour or a day), read from
	// the table: an existing ledger keeps its own.
	unit    time.Duration
	path    domain.TablePath
	defs    domain.TableDefinitions
	writer  domain.RowWriter
	lookups domain.Lookup
}

// ledger returns the session's ledger, creating its database and table on
// first use. A principal that may not create them gets a 403 naming the
// table and the way out.
func (w *IdempotentWrites) ledger(ctx context.Context, scope Scope, session domain.Session) (*ledger, error) {
	l := &ledger{w: w, path: w.opts.Ledger, defs: definitionsOf(session), writer: session.Writer(), lookups: session.Lookup()}
	if l.writer == nil || l.lookups == nil || session.Catalog() == nil {
		return nil, unsupported(scope.Cluster, "Idempotency-Key (it needs writes, lookups and a catalog)")
	}
	// The definition comes from the session's metadata cache: cheap after
	// the first request, and a ledger dropped meanwhile is created again.
	if _, err := l.defs.Table(ctx, l.path); err == nil {
		return l, nil
	} else if !isTableNotFound(err) {
		return nil, ledgerError(l.path, "read", err)
	}
	cat := session.Catalog()
	if err := cat.CreateDatabase(ctx, l.path.Database, domain.DatabaseDescriptor{Comment: "fluss-gateway state"}, true); err != nil {
		return nil, ledgerError(l.path, "create the database of", err)
	}
	if err := cat.CreateTable(ctx, l.path, w.LedgerDescriptor(), true); err != nil {
		return nil, ledgerError(l.path, "create", err)
	}
	if _, err := l.defs.Refresh(ctx, l.path); err != nil {
		return nil, ledgerError(l.path, "read", err)
	}
	return l, nil
}

func ledgerError(path domain.TablePath, what string, err error) error {
	de := domain.AsError(err)
	if de == nil {
		return err
	}
	out := *de
	out.Message = fmt.Sprintf("Idempotency-Key: cannot %s the idempotency ledger table `%s` (gateway.idempotency.database/table): %s", what, path, de.Error())
	if de.Kind == domain.KindUnauthorized {
		out.Message += "; create it ahead with a principal that may (docs/idempotency.md) and grant this principal READ and WRITE on it"
	}
	out.Cause = err
	return &out
}

func (l *ledger) table(ctx context.Context) (domain.TableInfo, error) {
	info, err := l.defs.Table(ctx, l.path)
	if err != nil {
		return info, ledgerError(l.path, "read", err)
	}
	props := info.Descriptor.Properties
	if len(info.Descriptor.Schema.Columns) < ledgerColumns || props["table.merge-engine"] != "first_row" {
		return info, domain.Errorf(domain.KindFailedPrecondition, "Idempotency-Key: table `%s` is not an idempotency ledger (it needs the first_row merge engine and the ledger's columns)", l.path)
	}
	switch domain.AutoPartitionUnit(strings.ToUpper(props[domain.OptAutoPartitionTimeUnit])) {
	case domain.UnitHour:
		l.unit = time.Hour
	case domain.UnitDay:
		l.unit = 24 * time.Hour
	default:
		return info, domain.Errorf(domain.KindFailedPrecondition, "Idempotency-Key: the ledger table `%s` must be auto-partitioned by HOUR or DAY (table.auto-partition.time-unit is %q)", l.path, props[domain.OptAutoPartitionTimeUnit])
	}
	if r, err := strconv.Atoi(props[domain.OptAutoPartitionRetention]); err == nil && r >= 0 && time.Duration(r)*l.unit < l.w.opts.Window {
		return info, domain.Errorf(domain.KindFailedPrecondition, "Idempotency-Key: the ledger table `%s` keeps %d partitions of %s, less than the key window %s (gateway.idempotency.window): raise its table.auto-partition.num-retention or use another table",
			l.path, r, l.unit, l.w.opts.Window)
	}
	return info, nil
}

// claim upserts mine and reads the key back until a claim is visible in
// mine's partition (Fluss answers a PutKv once it is replicated; the read is
// retried briefly in case the lookup does not show it yet).
func (l *ledger) claim(ctx context.Context, k ledgerKey, mine claimRow, now time.Time) (ledgerState, error) {
	row := []domain.Datum{str(k.hash), str(kindClaim), str(mine.part), str(mine.id), str(k.fp),
		{I64: mine.created.UnixMilli()}, {I64: mine.lease.UnixMilli()}, {Null: true}}
	if err := l.upsert(ctx, row); err != nil {
		return ledgerState{}, err
	}
	for attempt := 0; ; attempt++ {
		st, err := l.read(ctx, k, now)
		if err != nil {
			return st, err
		}
		for _, c := range st.claims {
			if c.part == mine.part {
				return st, nil
			}
		}
		if attempt >= 20 {
			return st, domain.Errorf(domain.KindUnavailable, "Idempotency-Key: the ledger did not show the claim just written to `%s`; nothing was written; retry", l.path)
		}
		if !backoff.Sleep(ctx, 5*time.Millisecond) {
			return st, &domain.Error{Kind: domain.KindTimeout, Retryable: true, Message: "the request deadline passed while claiming its Idempotency-Key; nothing was written", Cause: ctx.Err()}
		}
	}
}

// record upserts the answer row of the claim id in part.
func (l *ledger) record(ctx context.Context, k ledgerKey, part, claimID string, a recordedAnswer) error {
	b, err := json.Marshal(a)
	if err != nil {
		return domain.Errorf(domain.KindInternal, "idempotency ledger: %v", err)
	}
	now := l.w.now().UnixMilli()
	row := []domain.Datum{str(k.hash), str(kindAnswer), str(part), str(claimID), str(k.fp), {I64: now}, {Null: true}, {Bytes: b}}
	return l.upsert(ctx, row)
}

func str(s string) domain.Datum { return domain.Datum{Bytes: []byte(s)} }

func (l *ledger) upsert(ctx context.Context, row []domain.Datum) error {
	info, err := l.table(ctx)
	if err != nil {
		return err
	}
	res, err := l.writer.Write(ctx, &domain.WriteBatch{Table: l.path, TableID: info.TableID, SchemaID: info.SchemaID,
		Entries: []domain.WriteEntry{{Op: domain.OpUpsert, Row: padRow(row, len(info.Descriptor.Schema.Columns))}}, Urgent: true})
	if err != nil {
		return ledgerError(l.path, "write", err)
	}
	if len(res) != 1 {
		return domain.Errorf(domain.KindInternal, "idempotency ledger: %d verdicts for one row", len(res))
	}
	if r := res[0]; !r.OK() {
		kind := domain.KindUnavailable
		if r.Code == codeUnauthorized {
			kind = domain.KindUnauthorized
		}
		return ledgerError(l.path, "write", &domain.Error{Kind: kind, Retryable: r.Retryable, Message: r.Code + ": " + r.Message})
	}
	return nil
}

const codeUnauthorized = "unauthorized"

// padRow fills columns added to the ledger after the gateway's with nulls.
func padRow(row []domain.Datum, n int) []domain.Datum {
	for len(row) < n {
		row = append(row, domain.Datum{Null: true})
	}
	return row
}

// read looks the key's claim and answer rows up in every partition of
// parts (one lookup request; keys in partitions that do not exist are not
// found). A key lives as long as its partition is among those of the window
// (see partitions): at least Window, at most Window plus one unit; a claim
// is never reused within its partition (first_row would ignore a new one).
func (l *ledger) read(ctx context.Context, k ledgerKey, now time.Time) (ledgerState, error) {
	info, err := l.table(ctx)
	if err != nil {
		return ledgerState{}, err
	}
	parts := partitions(l.unit, l.w.opts.Window, now)
	keys := make([][]domain.Datum, 0, 2*len(parts))
	for _, p := range parts {
		keys = append(keys, []domain.Datum{str(k.hash), str(kindClaim), str(p)}, []domain.Datum{str(k.hash), str(kindAnswer), str(p)})
	}
	resp, err := l.lookups.Lookup(ctx, &domain.LookupRequest{Table: l.path, TableID: info.TableID, SchemaID: info.SchemaID, Keys: keys})
	if err != nil {
		return ledgerState{}, ledgerError(l.path, "read", err)
	}
	if len(resp.Results) != len(keys) {
		return ledgerState{}, domain.Errorf(domain.KindInternal, "idempotency ledger: %d lookup results for %d keys", len(resp.Results), len(keys))
	}
	var st ledgerState
	for i, r := range resp.Results {
		if r.Err != nil {
			return ledgerState{}, ledgerError(l.path, "read", r.Err)
		}
		row := r.Row
		if row == nil {
			continue
		}
		if len(row) < ledgerColumns {
			return ledgerState{}, domain.Errorf(domain.KindInternal, "idempotency ledger: a row of %d columns", len(row))
		}
		part := parts[i/2]
		if i%2 == 0 {
			st.claims = append(st.claims, claimRow{part: part, id: string(row[3].Bytes), fp: string(row[4].Bytes),
				created: time.UnixMilli(row[5].I64), lease: time.UnixMilli(row[6].I64)})
			continue
		}
		a := answerRow{part: part, claimID: string(row[3].Bytes)}
		if err := json.Unmarshal(row[7].Bytes, &a.recordedAnswer); err != nil {
			return ledgerState{}, domain.Errorf(domain.KindInternal, "idempotency ledger: an answer row does not decode: %v", err)
		}
		st.answers = append(st.answers, a)
	}
	return st, nil
}
