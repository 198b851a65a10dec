package http

import (
	"context"
	"sync"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/memory"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// dataClusters serves the memory clusters' catalogs with the given data
// ports; a nil port makes Session.Writer or Session.Lookup return nil.
type dataClusters struct {
	*memory.Clusters
	writer domain.RowWriter
	lookup domain.Lookup
}

func (d *dataClusters) Session(ctx context.Context, cluster string, p domain.Principal) (domain.Session, error) {
	s, err := d.Clusters.Session(ctx, cluster, p)
	if err != nil {
		return nil, err
	}
	return dataSession{Session: s, w: d.writer, l: d.lookup}, nil
}

type dataSession struct {
	domain.Session
	w domain.RowWriter
	l domain.Lookup
}

func (s dataSession) Writer() domain.RowWriter { return s.w }
func (s dataSession) Lookup() domain.Lookup    { return s.l }

// fakeWriter records every batch and answers with fn (every entry succeeds
// when fn is nil).
type fakeWriter struct {
	mu        sync.Mutex
	fn        func(ctx context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error)
	batches   []domain.WriteBatch
	deadlines []time.Time
}

func (f *fakeWriter) Write(ctx context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
	f.mu.Lock()
	dl, _ := ctx.Deadline()
	f.batches = append(f.batches, cloneBatch(b))
	f.deadlines = append(f.deadlines, dl)
	fn := f.fn
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx, b)
	}
	return make([]domain.EntryResult, b.Len()), nil
}

// WriteColumnRuns answers columnar rows run by run as the Fluss writer
// does (domain.ColumnarRunWriter): Write's verdicts, consecutive equal ones
// (at the next offset, for exact positions) as one run, so that the Arrow
// answers are built from runs of many rows.
func (f *fakeWriter) WriteColumnRuns(ctx context.Context, b *domain.WriteBatch) ([]domain.ResultRun, error) {
	results, err := f.Write(ctx, b)
	if err != nil {
		return nil, err
	}
	var runs []domain.ResultRun
	for _, r := range results {
		if k := len(runs) - 1; k >= 0 && continuesRun(runs[k], r) {
			runs[k].Rows++
			continue
		}
		runs = append(runs, domain.ResultRun{Rows: 1, Result: r})
	}
	return runs, nil
}

func continuesRun(run domain.ResultRun, r domain.EntryResult) bool {
	want := run.Result
	if want.At.Known && want.At.Exact {
		want.At.Offset += int64(run.Rows)
	}
	return want == r
}

func (f *fakeWriter) set(fn func(ctx context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fn = fn
}

func (f *fakeWriter) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.batches)
}

func (f *fakeWriter) last() (domain.WriteBatch, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.batches[len(f.batches)-1], f.deadlines[len(f.deadlines)-1]
}

// cloneBatch deep-copies a batch: rows may live in a pooled buffer that is
// reused once the request is answered.
func cloneBatch(b *domain.WriteBatch) domain.WriteBatch {
	out := *b
	out.PartialUpdateColumns = append([]int(nil), b.PartialUpdateColumns...)
	out.Entries = make([]domain.WriteEntry, len(b.Entries))
	for i, e := range b.Entries {
		out.Entries[i] = domain.WriteEntry{Op: e.Op, Row: cloneRow(e.Row)}
	}
	return out
}

func cloneRow(row []domain.Datum) []domain.Datum {
	if row == nil {
		return nil
	}
	out := make([]domain.Datum, len(row))
	for i, d := range row {
		out[i] = d
		out[i].Bytes = append([]byte(nil), d.Bytes...)
		out[i].Elems = cloneRow(d.Elems)
	}
	return out
}

// fakeLookup records every request and answers with the functions set
// (unsupported when nil).
type fakeLookup struct {
	mu       sync.Mutex
	lookupFn func(ctx context.Context, r *domain.LookupRequest) (*domain.LookupResponse, error)
	prefixFn func(ctx context.Context, r *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error)
	lookups  []*domain.LookupRequest
	prefixes []*domain.PrefixLookupRequest
}

func (f *fakeLookup) Lookup(ctx context.Context, r *domain.LookupRequest) (*domain.LookupResponse, error) {
	f.mu.Lock()
	f.lookups = append(f.lookups, r)
	fn := f.lookupFn
	f.mu.Unlock()
	if fn == nil {
		return nil, domain.Errorf(domain.KindUnsupported, "fake: no lookup")
	}
	return fn(ctx, r)
}

func (f *fakeLookup) PrefixLookup(ctx context.Context, r *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
	f.mu.Lock()
	f.prefixes = append(f.prefixes, r)
	fn := f.prefixFn
	f.mu.Unlock()
	if fn == nil {
		return nil, domain.Errorf(domain.KindUnsupported, "fake: no prefix lookup")
	}
	return fn(ctx, r)
}

func (f *fakeLookup) setLookup(fn func(ctx context.Context, r *domain.LookupRequest) (*domain.LookupResponse, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookupFn = fn
}

func (f *fakeLookup) setPrefix(fn func(ctx context.Context, r *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prefixFn = fn
}

func (f *fakeLookup) lastLookup() *domain.LookupRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lookups[len(f.lookups)-1]
}

func (f *fakeLookup) lastPrefix() *domain.PrefixLookupRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.prefixes[len(f.prefixes)-1]
}
