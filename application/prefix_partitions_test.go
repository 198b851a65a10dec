package application

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

type partsCatalog struct {
	domain.Catalog // unused methods panic
	parts          []domain.PartitionInfo
	err            error
}

func (c partsCatalog) ListPartitions(context.Context, domain.TablePath) ([]domain.PartitionInfo, error) {
	return c.parts, c.err
}

type partsSession struct{ cat partsCatalog }

func (s partsSession) Catalog() domain.Catalog  { return s.cat }
func (s partsSession) Writer() domain.RowWriter { return nil }
func (s partsSession) Lookup() domain.Lookup    { return nil }

// TestPrefixLookupAcrossPartitions: each partition is asked with its name,
// the rows merge partition after partition (name order) under the cap, a
// per-prefix error wins, a whole failure fails the lookup.
func TestPrefixLookupAcrossPartitions(t *testing.T) {
	t.Parallel()
	sess := partsSession{partsCatalog{parts: []domain.PartitionInfo{{ID: 3, Name: "p3"}, {ID: 1, Name: "p1"}, {ID: 2, Name: "p2"}}}}
	row := func(s string) []domain.Datum { return []domain.Datum{{Bytes: []byte(s)}} }
	var calls atomic.Int32
	port := &fakeLookupPort{prefix: func(_ context.Context, r *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
		calls.Add(1)
		out := &domain.PrefixLookupResponse{SchemaID: 4, Results: make([]domain.PrefixLookupResult, len(r.Prefixes))}
		// prefix 0: two rows per partition; prefix 1: a row in p2 only;
		// prefix 2: fails in p3.
		out.Results[0].Rows = [][]domain.Datum{row(r.Partition + "/a"), row(r.Partition + "/b")}
		if r.Partition == "p2" {
			out.Results[1].Rows = [][]domain.Datum{row("p2/x")}
		}
		if r.Partition == "p3" {
			out.Results[2].Err = domain.InvalidArgument("bad prefix")
		}
		return out, nil
	}}
	req := &domain.PrefixLookupRequest{Table: usersPath, PrefixColumns: []string{"region"}, Prefixes: make([][]domain.Datum, 3), MaxRowsPerPrefix: 5}
	resp, err := prefixLookupAcrossPartitions(context.Background(), sess, port, req)
	require.NoError(t, err)
	assert.EqualValues(t, 3, calls.Load())
	assert.Equal(t, int32(4), resp.SchemaID)
	var got []string
	for _, r := range resp.Results[0].Rows {
		got = append(got, string(r[0].Bytes))
	}
	assert.Equal(t, []string{"p1/a", "p1/b", "p2/a", "p2/b", "p3/a"}, got)
	assert.True(t, resp.Results[0].Truncated)
	require.Len(t, resp.Results[1].Rows, 1)
	assert.False(t, resp.Results[1].Truncated)
	require.NotNil(t, resp.Results[2].Err)
	assert.Empty(t, resp.Results[2].Rows)
	assert.Empty(t, req.Partition, "the caller's request is not changed")

	// No partition: no rows, no call.
	calls.Store(0)
	resp, err = prefixLookupAcrossPartitions(context.Background(), partsSession{}, port, req)
	require.NoError(t, err)
	assert.Zero(t, calls.Load())
	assert.Len(t, resp.Results, 3)

	// Listing fails, or a partition fails whole: the lookup fails.
	_, err = prefixLookupAcrossPartitions(context.Background(), partsSession{partsCatalog{err: errors.New("down")}}, port, req)
	assert.ErrorContains(t, err, "down")
	port.prefix = func(_ context.Context, r *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
		if r.Partition == "p2" {
			return nil, domain.Errorf(domain.KindUnavailable, "p2 down")
		}
		return &domain.PrefixLookupResponse{Results: make([]domain.PrefixLookupResult, len(r.Prefixes))}, nil
	}
	_, err = prefixLookupAcrossPartitions(context.Background(), sess, port, req)
	assert.ErrorContains(t, err, "p2 down")
}
