package scan

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record/arrowlog"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// evoMD is a table at schema 2: testColumns plus `note` (id 3), added last.
type evoMD struct {
	*fakeMD
	reloads int
}

var noteColumn = domain.Column{Name: "note", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: 3}

func newEvoMD() *evoMD {
	m := newFakeMD()
	m.t.Info.SchemaID = 2
	m.t.Info.Descriptor.Schema = domain.Schema{Columns: append(append([]domain.Column{}, testColumns...), noteColumn)}
	return &evoMD{fakeMD: m}
}

func (m *evoMD) Schema(_ context.Context, _ *meta.Table, id int32) (domain.Schema, error) {
	switch id {
	case 1:
		return domain.Schema{Columns: testColumns}, nil
	case 2:
		return m.t.Info.Descriptor.Schema, nil
	}
	return domain.Schema{}, fmt.Errorf("no schema %d", id)
}

func (m *evoMD) Reload(context.Context, domain.TablePath) (*meta.Table, error) {
	m.reloads++
	return m.t, nil
}

// schemaBatch is an append-only ARROW batch of schema id schemaID.
func schemaBatch(t testing.TB, schemaID int32, cols []domain.Column, base int64, rows ...[]domain.Datum) []byte {
	t.Helper()
	b, err := arrowlog.NewBuilder(cols, arrowlog.CompressionZstd, 3)
	require.NoError(t, err)
	for _, r := range rows {
		require.NoError(t, b.Append(r))
	}
	msg, n, err := b.Build(nil)
	require.NoError(t, err)
	out, err := record.AppendLogBatch(nil, record.LogBatchParams{SchemaID: schemaID, Attributes: record.AttrAppendOnly, WriterID: -1, BatchSequence: -1, RecordCount: int32(n)}, msg)
	require.NoError(t, err)
	binary.LittleEndian.PutUint64(out, uint64(base))
	return out
}

// TestDecodeAcrossSchemas: batches written before and after a column was
// added decode into the wanted columns by id, whole or as the servers
// project them (by position within each batch's schema); a projection
// that names the added column is not pushed down; a batch of a schema
// newer than the plan's is a stale definition after a reload.
func TestDecodeAcrossSchemas(t *testing.T) {
	ctx := context.Background()
	md := newEvoMD()
	s := New(nil, md, Options{})
	tb := md.t
	old := schemaBatch(t, 1, testColumns, 0, row(1, "a", 10))
	newer := schemaBatch(t, 2, tb.Info.Descriptor.Schema.Columns, 1, append(row(2, "b", 20), domain.Datum{Bytes: []byte("n2")}))

	// [note, id]: not pushable (schema 1 has no position 3): whole rows.
	assert.False(t, s.pushable(ctx, tb, []int{3, 0}))
	p, err := s.newPlan(ctx, tb, []int{3, 0})
	require.NoError(t, err)
	assert.Nil(t, p.pushdown)
	fb := &domain.FetchedBucket{}
	require.NoError(t, s.decodeBucket(ctx, tb, p, fb, append(append([]byte{}, old...), newer...), -1, nil))
	require.Len(t, fb.Records, 2)
	assert.Equal(t, []domain.Datum{{Null: true}, {I64: 1}}, fb.Records[0].Row)
	assert.Equal(t, []domain.Datum{{Bytes: []byte("n2")}, {I64: 2}}, fb.Records[1].Row)

	// [msg, id]: pushed down as [0, 1]; the servers project both schemas.
	assert.True(t, s.pushable(ctx, tb, []int{1, 0}))
	p, err = s.newPlan(ctx, tb, []int{1, 0})
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 1}, p.pushdown)
	proj := []domain.Column{testColumns[0], testColumns[1]}
	oldP := schemaBatch(t, 1, proj, 0, []domain.Datum{{I64: 1}, {Bytes: []byte("a")}})
	newP := schemaBatch(t, 2, proj, 1, []domain.Datum{{I64: 2}, {Bytes: []byte("b")}})
	fb = &domain.FetchedBucket{}
	require.NoError(t, s.decodeBucket(ctx, tb, p, fb, append(append([]byte{}, oldP...), newP...), -1, nil))
	require.Len(t, fb.Records, 2)
	assert.Equal(t, []domain.Datum{{Bytes: []byte("a")}, {I64: 1}}, fb.Records[0].Row)
	assert.Equal(t, []domain.Datum{{Bytes: []byte("b")}, {I64: 2}}, fb.Records[1].Row)

	// A batch of schema 3 while the metadata says 2: reload, stale.
	future := schemaBatch(t, 3, testColumns, 2, row(3, "c", 30))
	err = s.decodeBucket(ctx, tb, p, &domain.FetchedBucket{NextOffset: 2}, future, -1, nil)
	require.Error(t, err)
	assert.True(t, domain.IsStaleDefinition(err), "%v", err)
	assert.Equal(t, 1, md.reloads)
}

// FuzzDecodeAcrossSchemas: arbitrary bytes decoded with a projection over a
// table whose schema changed (batches of schema 1 and 2, projected by the
// servers or whole) never panic; records come in offset order with the
// wanted columns.
func FuzzDecodeAcrossSchemas(f *testing.F) {
	f.Add(schemaBatch(f, 1, []domain.Column{testColumns[0], testColumns[1]}, 0, []domain.Datum{{I64: 1}, {Bytes: []byte("a")}}), true)
	f.Add(schemaBatch(f, 1, testColumns, 0, row(1, "a", 10)), false)
	f.Add(schemaBatch(f, 3, testColumns, 0, row(1, "a", 10)), false)
	f.Add([]byte{}, true)
	f.Fuzz(func(t *testing.T, data []byte, pushed bool) {
		md := newEvoMD()
		s := New(nil, md, Options{MaxBufferSize: 1 << 20})
		cols := []int{3, 0} // not pushable
		if pushed {
			cols = []int{1, 0}
		}
		p, err := s.newPlan(context.Background(), md.t, cols)
		require.NoError(t, err)
		fb := &domain.FetchedBucket{}
		if err := s.decodeBucket(context.Background(), md.t, p, fb, data, -1, nil); err != nil {
			return
		}
		prev := int64(-1)
		for _, r := range fb.Records {
			require.Greater(t, r.Offset, prev)
			require.Len(t, r.Row, 2)
			prev = r.Offset
		}
	})
}
