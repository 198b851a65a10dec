package arrowlog

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// columnsOf returns the rows of a flat builder as columnar rows (its column
// buffers are the Fluss Arrow layout), with the validity bitmap dropped for
// columns without null when dropValidity is set.
func columnsOf(b *Builder, dropValidity bool) *domain.ColumnarRows {
	out := &domain.ColumnarRows{Rows: b.rows, Columns: make([]domain.ColumnValues, len(b.flat))}
	for i := range b.flat {
		c := &b.flat[i]
		cv := domain.ColumnValues{Validity: bytes.Clone(c.valid), Values: bytes.Clone(c.vals)}
		if c.nulls == 0 && dropValidity {
			cv.Validity = nil
		}
		if c.n.kind == kUtf8 || c.n.kind == kBinary {
			cv.Values = nil
			// Offsets not starting at 0, as a slice of a larger array has.
			cv.Offsets = make([]byte, 0, len(c.offs))
			for p := 0; p+4 <= len(c.offs); p += 4 {
				o := uint32(c.offs[p]) | uint32(c.offs[p+1])<<8 | uint32(c.offs[p+2])<<16 | uint32(c.offs[p+3])<<24
				o += 3
				cv.Offsets = append(cv.Offsets, byte(o), byte(o>>8), byte(o>>16), byte(o>>24))
			}
			cv.Data = append([]byte("xyz"), c.data...)
		}
		out.Columns[i] = cv
	}
	return out
}

// TestAppendColumnsMatchesEncodedRows: the same rows appended column-wise,
// in chunks of every alignment, to a builder that may already hold
// encoded rows, give byte-identical messages for every flat type and codec.
func TestAppendColumnsMatchesEncodedRows(t *testing.T) {
	all := allTypes()
	pos := flatColumns()
	types := make([]domain.DataType, len(pos))
	for i, p := range pos {
		types[i] = all[p]
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, codec := range codecs {
		for _, n := range []int{1, 7, 8, 9, 64, 333} {
			for _, dropValidity := range []bool{false, true} {
				rows := flatRows(types, pos, n, rng)
				src, err := newBuilderMode(types, nil, codec, DefaultZstdLevel, true)
				require.NoError(t, err)
				for _, rw := range rows {
					require.NoError(t, src.Append(rw))
				}
				cols := columnsOf(src, dropValidity)
				require.NoError(t, src.RowEncoder().CheckColumns(cols))

				for _, lead := range []int{0, 3} { // encoded rows before the columns
					ref, err := newBuilderMode(types, nil, codec, DefaultZstdLevel, true)
					require.NoError(t, err)
					got, err := newBuilderMode(types, nil, codec, DefaultZstdLevel, true)
					require.NoError(t, err)
					for _, rw := range rows[:min(lead, n)] {
						require.NoError(t, ref.Append(rw))
						require.NoError(t, got.Append(rw))
					}
					for _, rw := range rows {
						require.NoError(t, ref.Append(rw))
					}
					for from := 0; from < n; {
						to := min(n, from+1+rng.IntN(11))
						require.NoError(t, got.AppendColumns(cols, from, to))
						from = to
					}
					require.Equal(t, ref.RecordCount(), got.RecordCount())
					want, err := ref.AppendTo(nil)
					require.NoError(t, err)
					have, err := got.AppendTo(nil)
					require.NoError(t, err)
					require.True(t, bytes.Equal(want, have), "%s, %d rows, lead %d, no validity %v", codec, n, lead, dropValidity)
				}
			}
		}
	}
}

func TestCheckColumnsRefusesShortBuffers(t *testing.T) {
	t.Parallel()
	types := []domain.DataType{{Root: domain.TypeBigInt, Nullable: true}, {Root: domain.TypeString, Nullable: true}}
	enc, err := NewRowEncoder(types)
	require.NoError(t, err)
	good := func() *domain.ColumnarRows {
		return &domain.ColumnarRows{Rows: 2, Columns: []domain.ColumnValues{
			{Values: make([]byte, 16)},
			{Offsets: []byte{0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0}, Data: []byte("ab")},
		}}
	}
	require.NoError(t, enc.CheckColumns(good()))
	tests := []struct {
		name string
		edit func(c *domain.ColumnarRows)
		msg  string
	}{
		{"a column short", func(c *domain.ColumnarRows) { c.Columns = c.Columns[:1] }, "1 columns, want 2"},
		{"short values", func(c *domain.ColumnarRows) { c.Columns[0].Values = c.Columns[0].Values[:15] }, "column 0: 15 value bytes"},
		{"short validity", func(c *domain.ColumnarRows) { c.Columns[0].Validity = []byte{} }, "column 0: validity bitmap"},
		{"offset past the data", func(c *domain.ColumnarRows) { c.Columns[1].Data = c.Columns[1].Data[:1] }, "column 1: row 1: offset 2"},
		{"decreasing offsets", func(c *domain.ColumnarRows) { c.Columns[1].Offsets[8] = 0 }, "column 1: row 1"},
		{"short offsets", func(c *domain.ColumnarRows) { c.Columns[1].Offsets = c.Columns[1].Offsets[:8] }, "column 1: 8 offset bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := good()
			tc.edit(c)
			err := enc.CheckColumns(c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// FuzzAppendBits: appendBits and countOnes agree with a bit-by-bit copy
// for any bitmap, offsets and lengths.
func FuzzAppendBits(f *testing.F) {
	f.Add([]byte{0xA5, 0x3C, 0xFF}, []byte{0x01}, uint8(3), uint8(5), uint8(13))
	f.Add([]byte{0xFF, 0xFF}, []byte{}, uint8(0), uint8(0), uint8(16))
	f.Fuzz(func(t *testing.T, src, dst []byte, haveBits, from, n uint8) {
		have := min(int(haveBits), 8*len(dst))
		// The builders' bitmaps: ceil(have/8) bytes, bits beyond have unset.
		dst = bytes.Clone(dst[:(have+7)/8])
		if r := have & 7; r != 0 {
			dst[len(dst)-1] &= byte(1<<r - 1)
		}
		if int(from)+int(n) > 8*len(src) {
			return
		}
		bit := func(b []byte, i int) bool { return b[i>>3]&(1<<(i&7)) != 0 }
		want := make([]bool, 0, have+int(n))
		for i := range have {
			want = append(want, bit(dst, i))
		}
		ones := 0
		for i := range int(n) {
			want = append(want, bit(src, int(from)+i))
			if bit(src, int(from)+i) {
				ones++
			}
		}
		got := appendBits(bytes.Clone(dst), have, src, int(from), int(n))
		require.Len(t, got, (len(want)+7)/8)
		for i, w := range want {
			require.Equal(t, w, bit(got, i), "bit %d", i)
		}
		for i := len(want); i < 8*len(got); i++ {
			require.False(t, bit(got, i), "bit %d beyond the length is set", i)
		}
		require.Equal(t, ones, countOnes(got, have, int(n)))
		all := appendOnes(bytes.Clone(dst), have, int(n))
		require.Equal(t, int(n), countOnes(all, have, int(n)))
	})
}
