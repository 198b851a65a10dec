package application

import (
	"context"
	"errors"
	"sync"
	"testing"

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
