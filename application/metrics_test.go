package application

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// recordedMetrics is a RecordMetrics that keeps what it was told.
type recordedMetrics struct {
	mu      sync.Mutex
	entries [][]domain.EntryResult
	lookups []string
}

func (m *recordedMetrics) RecordEntries(_ context.Context, _ domain.TablePath, results []domain.EntryResult) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = append(m.entries, results)
}

func (m *recordedMetrics) RecordLookups(_ context.Context, _ domain.TablePath, kind string, found, missed, failed int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lookups = append(m.lookups, kind+":"+string(rune('0'+found))+string(rune('0'+missed))+string(rune('0'+failed)))
}

// TestMetricsDecorator: the metrics decorator counts every write that has
// verdicts (a throttled one too, though Write answers it with an error
// only), no write that failed as a whole, and lookups by key outcome.
func TestMetricsDecorator(t *testing.T) {
	t.Parallel()
	vc := &versionedCatalog{tableID: 1, schemaID: 1}
	verdicts := []domain.EntryResult{{}, {Code: "timeout", Applied: domain.AppliedUnknown, Retryable: true}}
	lk := &fakeLookupPort{}
	dc := &dataClusters{catalog: vc.catalog(), lookup: lk, writer: writerFunc(func(context.Context, *domain.WriteBatch) ([]domain.EntryResult, error) {
		return verdicts, nil
	})}
	m := &recordedMetrics{}
	s := NewRecordService(dc, RecordOptions{Metrics: m})
	scope := Scope{Cluster: "c1"}

	res, err := s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: rowsDecoder(2)})
	require.NoError(t, err)
	assert.Len(t, res.Results, 2)
	_, err = s.Write(context.Background(), scope, WriteCommand{Path: domain.TablePath{Database: "d", Table: "nope"}, Decoder: rowsDecoder(2)})
	require.Error(t, err)
	throttledVerdicts := []domain.EntryResult{{Code: EntryCodeStorageBackpressure, Retryable: true, Applied: domain.AppliedNo}}
	verdicts = throttledVerdicts
	res, err = s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: rowsDecoder(1)})
	require.Error(t, err, "every entry throttled: a whole-request error")
	assert.Empty(t, res.Results, "the verdicts are the metrics' only")
	assert.Equal(t, [][]domain.EntryResult{
		{{}, {Code: "timeout", Applied: domain.AppliedUnknown, Retryable: true}},
		throttledVerdicts,
	}, m.entries)

	keys := decoderFunc{size: 1, keys: func(*Table, int) ([][]domain.Datum, error) {
		return [][]domain.Datum{{{I64: 1}}, {{I64: 2}}, {{I64: 3}}}, nil
	}}
	lk.lookup = func(_ context.Context, r *domain.LookupRequest) (*domain.LookupResponse, error) {
		return &domain.LookupResponse{SchemaID: r.SchemaID, Results: []domain.LookupResult{
			{Row: []domain.Datum{{I64: 1}}}, {}, {Err: &domain.Error{Kind: domain.KindUnavailable, Message: "bucket failed"}}}}, nil
	}
	_, err = s.Lookup(context.Background(), scope, usersPath, keys)
	require.NoError(t, err)
	lk.lookup = func(context.Context, *domain.LookupRequest) (*domain.LookupResponse, error) {
		return nil, errors.New("down")
	}
	_, err = s.Lookup(context.Background(), scope, usersPath, keys)
	require.Error(t, err)
	assert.Equal(t, []string{"lookup:111"}, m.lookups, "a failed lookup is not counted")
}

// runsWriter answers columnar rows run by run (domain.ColumnarRunWriter)
// and entries one by one.
type runsWriter struct {
	runs  []domain.ResultRun
	calls []string
}

func (w *runsWriter) Write(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
	w.calls = append(w.calls, "Write")
	return domain.ExpandRuns(nil, w.runs), nil
}

func (w *runsWriter) WriteColumnRuns(context.Context, *domain.WriteBatch) ([]domain.ResultRun, error) {
	w.calls = append(w.calls, "WriteColumnRuns")
	return w.runs, nil
}

// runMetrics also counts verdicts run by run.
type runMetrics struct {
	recordedMetrics
	runs [][]domain.ResultRun
}

func (m *runMetrics) RecordEntryRuns(_ context.Context, _ domain.TablePath, runs []domain.ResultRun) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs = append(m.runs, runs)
}

// TestWriteRuns: a write of columnar rows whose caller takes runs
// (WriteCommand.Runs) is answered with the writer's runs, summarized by
// rows, counted by metrics that take runs (expanded for the others); a
// caller that does not take runs gets one verdict per row; a write every
// row of which was throttled is a 429 as for per-row verdicts.
func TestWriteRuns(t *testing.T) {
	t.Parallel()
	vc := &versionedCatalog{tableID: 1, schemaID: 1}
	timeout := domain.EntryResult{Code: "timeout", Applied: domain.AppliedUnknown, Retryable: true}
	w := &runsWriter{runs: []domain.ResultRun{
		{Rows: 3, Result: domain.EntryResult{At: domain.WrittenAt{Known: true, Exact: true, Offset: 10}}},
		{Rows: 2, Result: timeout},
	}}
	columns := decoderFunc{write: func(*Table, int) (domain.WriteBatch, []string, error) {
		return domain.WriteBatch{Columns: &domain.ColumnarRows{Rows: 5}}, make([]string, 5), nil
	}}
	scope := Scope{Cluster: "c1"}
	for _, byRun := range []bool{true, false} {
		var m RecordMetrics = &recordedMetrics{}
		if byRun {
			m = &runMetrics{}
		}
		s := NewRecordService(&dataClusters{catalog: vc.catalog(), writer: w}, RecordOptions{Metrics: m})
		w.calls = nil
		res, err := s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: columns, Runs: true})
		require.NoError(t, err)
		assert.Equal(t, []string{"WriteColumnRuns"}, w.calls)
		assert.Nil(t, res.Results)
		assert.Equal(t, w.runs, res.Runs)
		assert.Equal(t, 5, res.Summary.Rows)
		assert.Equal(t, 3, res.Summary.Succeeded)
		assert.Equal(t, 2, res.Summary.Failed)
		assert.Equal(t, 2, res.Summary.AppliedUnknown)
		assert.Equal(t, map[string]int{"timeout": 2}, res.Summary.FailedByCode)
		expanded := res.Verdicts()
		require.Len(t, expanded, 5)
		assert.Equal(t, int64(12), expanded[2].At.Offset)
		assert.Equal(t, timeout, expanded[4])
		if rm, ok := m.(*runMetrics); ok {
			assert.Equal(t, [][]domain.ResultRun{w.runs}, rm.runs)
			assert.Empty(t, rm.entries)
		} else {
			assert.Equal(t, [][]domain.EntryResult{expanded}, m.(*recordedMetrics).entries)
		}

		w.calls = nil
		res, err = s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: columns})
		require.NoError(t, err)
		assert.Equal(t, []string{"Write"}, w.calls, "a caller that takes no runs")
		assert.Nil(t, res.Runs)
		assert.Equal(t, expanded, res.Results)
	}

	w.runs = []domain.ResultRun{{Rows: 5, Result: domain.EntryResult{Code: EntryCodeStorageBackpressure, Retryable: true,
		Applied: domain.AppliedNo, RetryAfter: 1500 * time.Millisecond}}}
	s := NewRecordService(&dataClusters{catalog: vc.catalog(), writer: w}, RecordOptions{})
	_, err := s.Write(context.Background(), scope, WriteCommand{Path: usersPath, Decoder: columns, Runs: true})
	de := domain.AsError(err)
	require.NotNil(t, de, "%v", err)
	assert.Equal(t, domain.KindResourceExhausted, de.Kind)
	assert.Equal(t, int64(1500), de.RetryAfterMillis)
	assert.Contains(t, de.Message, "all 5 entries")
}
