package arrowlog

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// flatColumns are the positions of allTypes without ARRAY, MAP or ROW.
func flatColumns() []int {
	var out []int
	for i, t := range allTypes() {
		switch t.Root {
		case domain.TypeArray, domain.TypeMap, domain.TypeRow:
		default:
			out = append(out, i)
		}
	}
	return out
}

// flatRows projects allTypesRows onto the flat columns and repeats them,
// with values nulled at random (never in NOT NULL columns), to n rows.
func flatRows(types []domain.DataType, pos []int, n int, rng *rand.Rand) [][]domain.Datum {
	base := allTypesRows()
	out := make([][]domain.Datum, n)
	for r := range out {
		src := base[r%len(base)]
		row := make([]domain.Datum, len(pos))
		for i, p := range pos {
			row[i] = src[p]
			if types[i].Nullable && rng.IntN(5) == 0 {
				row[i] = null()
			}
		}
		out[r] = row
	}
	return out
}

// TestFlatWriterMatchesArrowGoPath: for every flat type, the flat column
// writer (encoded rows) and the arrow-go builders produce byte-identical
// messages, whatever the codec, row count (bitmap boundaries) and nulls,
// also when AppendTo is called mid-way and rows are added after it.
func TestFlatWriterMatchesArrowGoPath(t *testing.T) {
	all := allTypes()
	pos := flatColumns()
	types := make([]domain.DataType, len(pos))
	for i, p := range pos {
		types[i] = all[p]
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, codec := range codecs {
		for _, n := range []int{1, 7, 8, 9, 64, 1000} {
			flat, err := newBuilderMode(types, nil, codec, DefaultZstdLevel, true)
			require.NoError(t, err)
			require.NotNil(t, flat.RowEncoder())
			ref, err := newBuilderMode(types, nil, codec, DefaultZstdLevel, false)
			require.NoError(t, err)
			require.Nil(t, ref.RowEncoder())
			rows := flatRows(types, pos, n, rng)
			for pass := range 2 { // the second pass reuses the builders' memory
				var mid []byte
				for i, rw := range rows {
					require.NoError(t, flat.Append(rw))
					require.NoError(t, ref.Append(rw))
					if i == n/2 {
						a, err := flat.AppendTo(nil)
						require.NoError(t, err)
						b, err := ref.AppendTo(nil)
						require.NoError(t, err)
						require.True(t, bytes.Equal(a, b), "%s, %d rows, pass %d: AppendTo after %d rows differs", codec, n, pass, i+1)
						mid = a
					}
				}
				require.NotEmpty(t, mid)
				assert.Equal(t, ref.RecordCount(), flat.RecordCount())
				assert.Equal(t, ref.EstimatedSizeInBytes(), flat.EstimatedSizeInBytes())
				a, na, err := flat.Build(nil)
				require.NoError(t, err)
				b, nb, err := ref.Build(nil)
				require.NoError(t, err)
				require.Equal(t, nb, na)
				require.True(t, bytes.Equal(a, b), "%s, %d rows, pass %d: messages differ", codec, n, pass)
			}
		}
	}
}

// TestRowEncoderChecksLikeAppend: the encoder refuses what Append refuses,
// with the column named, and a refused row leaves the builder unchanged.
func TestRowEncoderChecksLikeAppend(t *testing.T) {
	types := []domain.DataType{notNull(typ(domain.TypeInteger)), typ(domain.TypeTinyInt), binaryT(2), decimalT(4, 2),
		precT(domain.TypeTimestampNTZ, 9), typ(domain.TypeBoolean)}
	enc, err := NewRowEncoder(types)
	require.NoError(t, err)
	good := row(i64(1), i64(2), raw(1, 2), i64(9999), ts(1, 5), i64(1))
	for _, tc := range []struct {
		name string
		col  int
		d    domain.Datum
		want string
	}{
		{"null in NOT NULL", 0, null(), "column 0: null value"},
		{"INT range", 0, i64(1 << 40), "column 0: value"},
		{"TINYINT range", 1, i64(300), "column 1: value 300"},
		{"BINARY length", 2, raw(1), "column 2: BINARY(2)"},
		{"DECIMAL digits", 3, i64(10000), "column 3: DECIMAL value has more than 4 digits"},
		{"nanos", 4, ts(1, 1_000_000), "column 4: timestamp nano-of-millisecond"},
		{"timestamp overflow", 4, ts(1<<62, 0), "column 4: TIMESTAMP"},
		{"BOOLEAN", 5, i64(2), "column 5: BOOLEAN value 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rw := append([]domain.Datum(nil), good...)
			rw[tc.col] = tc.d
			out, err := enc.AppendRow([]byte{7}, rw)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, []byte{7}, out)

			b, err := NewBuilderFromTypes(types, CompressionNone, DefaultZstdLevel)
			require.NoError(t, err)
			require.NoError(t, b.Append(good))
			before, err := b.AppendTo(nil)
			require.NoError(t, err)
			require.Error(t, b.Append(rw))
			after, err := b.AppendTo(nil)
			require.NoError(t, err)
			assert.Equal(t, before, after)
		})
	}
	_, err = enc.AppendRow(nil, good[:2])
	assert.ErrorContains(t, err, "row has 2 values, want 6")
	_, err = NewRowEncoder([]domain.DataType{arrayT(typ(domain.TypeInteger))})
	assert.ErrorContains(t, err, "nested columns")
}

// TestAppendEncodedRefusesMalformedRows: truncated or overlong encoded rows
// are refused whole.
func TestAppendEncodedRefusesMalformedRows(t *testing.T) {
	types := []domain.DataType{typ(domain.TypeInteger), typ(domain.TypeString)}
	b, err := NewBuilderFromTypes(types, CompressionNone, DefaultZstdLevel)
	require.NoError(t, err)
	enc, err := b.RowEncoder().AppendRow(nil, row(i64(5), str("abc")))
	require.NoError(t, err)
	for _, bad := range [][]byte{nil, enc[:3], enc[:len(enc)-1], append(append([]byte(nil), enc...), 0)} {
		require.Error(t, b.AppendEncoded(bad))
		assert.Equal(t, 0, b.RecordCount())
	}
	require.NoError(t, b.AppendEncoded(enc))
	assert.Equal(t, 1, b.RecordCount())
}
