package http

import (
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestColumnOf: the columnar conversion of the Arrow fast path gives the
// Fluss Arrow layout (units converted as the row path rounds them, slices
// at an offset) and refuses what the row path refuses, naming the row.
func TestColumnOf(t *testing.T) {
	t.Parallel()
	mem := memory.DefaultAllocator
	le := binary.LittleEndian
	build := func(dt arrow.DataType, fill func(b array.Builder)) arrow.Array {
		b := array.NewBuilder(mem, dt)
		defer b.Release()
		fill(b)
		return b.NewArray()
	}
	t.Run("timestamp[us] into TIMESTAMP(3) floors like the row path", func(t *testing.T) {
		arr := build(&arrow.TimestampType{Unit: arrow.Microsecond}, func(b array.Builder) {
			b.(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1_500, -1_500, 0}, []bool{true, true, false})
		})
		cv, err := columnOf(arr, &domain.DataType{Root: domain.TypeTimestampNTZ, Precision: 3, Nullable: true})
		require.NoError(t, err)
		assert.Equal(t, int64(1), int64(le.Uint64(cv.Values[0:])))
		assert.Equal(t, int64(-2), int64(le.Uint64(cv.Values[8:])), "floor, as epochMillis")
		assert.Equal(t, byte(0b011), cv.Validity[0]&0b111)
	})
	t.Run("timestamp[ms] into TIMESTAMP(0) truncates toward zero like Java", func(t *testing.T) {
		arr := build(&arrow.TimestampType{Unit: arrow.Millisecond}, func(b array.Builder) {
			b.(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{-1_500}, nil)
		})
		cv, err := columnOf(arr, &domain.DataType{Root: domain.TypeTimestampNTZ, Precision: 0, Nullable: true})
		require.NoError(t, err)
		assert.Equal(t, int64(-1), int64(le.Uint64(cv.Values)))
		assert.Nil(t, cv.Validity)
	})
	t.Run("time32[s] into TIME(6)", func(t *testing.T) {
		arr := build(arrow.FixedWidthTypes.Time32s, func(b array.Builder) { b.(*array.Time32Builder).Append(2) })
		cv, err := columnOf(arr, &domain.DataType{Root: domain.TypeTime, Precision: 6, Nullable: true})
		require.NoError(t, err)
		assert.Equal(t, uint64(2_000_000), le.Uint64(cv.Values))
	})
	t.Run("a slice keeps its offset: bools and utf8", func(t *testing.T) {
		arr := build(arrow.FixedWidthTypes.Boolean, func(b array.Builder) {
			b.(*array.BooleanBuilder).AppendValues([]bool{false, true, false, true}, []bool{true, true, false, true})
		})
		sl := array.NewSlice(arr, 1, 4)
		cv, err := columnOf(sl, &domain.DataType{Root: domain.TypeBoolean, Nullable: true})
		require.NoError(t, err)
		assert.Equal(t, byte(0b101), cv.Values[0]&0b111)
		assert.Equal(t, byte(0b101), cv.Validity[0]&0b111)
		s := build(arrow.BinaryTypes.String, func(b array.Builder) { b.(*array.StringBuilder).AppendValues([]string{"ab", "cde", "f"}, nil) })
		cv, err = columnOf(array.NewSlice(s, 1, 3), &domain.DataType{Root: domain.TypeString, Nullable: true})
		require.NoError(t, err)
		assert.Equal(t, "cde", string(cv.Data[le.Uint32(cv.Offsets):le.Uint32(cv.Offsets[4:])]))
		assert.Equal(t, "f", string(cv.Data[le.Uint32(cv.Offsets[4:]):le.Uint32(cv.Offsets[8:])]))
		for _, dt := range []arrow.DataType{arrow.BinaryTypes.LargeString, arrow.BinaryTypes.LargeBinary} {
			ls := build(dt, func(b array.Builder) {
				for _, v := range []string{"ab", "cde", "f"} {
					switch b := b.(type) {
					case *array.LargeStringBuilder:
						b.Append(v)
					case *array.BinaryBuilder:
						b.Append([]byte(v))
					}
				}
			})
			cv, err = columnOf(array.NewSlice(ls, 1, 3), &domain.DataType{Root: domain.TypeBytes, Nullable: true})
			require.NoError(t, err, "%s", dt)
			assert.Equal(t, "cde", string(cv.Data[le.Uint32(cv.Offsets):le.Uint32(cv.Offsets[4:])]), "%s", dt)
			assert.Equal(t, "f", string(cv.Data[le.Uint32(cv.Offsets[4:]):le.Uint32(cv.Offsets[8:])]), "%s", dt)
		}
	})
	t.Run("binary packed into BINARY(2)", func(t *testing.T) {
		arr := build(arrow.BinaryTypes.Binary, func(b array.Builder) {
			b.(*array.BinaryBuilder).AppendValues([][]byte{{1, 2}, nil, {3, 4}}, []bool{true, false, true})
		})
		cv, err := columnOf(arr, &domain.DataType{Root: domain.TypeBinary, Length: 2, Nullable: true})
		require.NoError(t, err)
		assert.Equal(t, []byte{1, 2, 0, 0, 3, 4}, cv.Values)
	})
	for _, tc := range []struct {
		name string
		arr  arrow.Array
		t    domain.DataType
		msg  string
	}{
		{"null in a NOT NULL column", build(arrow.PrimitiveTypes.Int64, func(b array.Builder) {
			b.(*array.Int64Builder).AppendValues([]int64{1, 0}, []bool{true, false})
		}), domain.DataType{Root: domain.TypeBigInt}, "row 1: null value for a NOT NULL column"},
		{"CHAR too long", build(arrow.BinaryTypes.String, func(b array.Builder) {
			b.(*array.StringBuilder).AppendValues([]string{"ab", "abc"}, nil)
		}), domain.DataType{Root: domain.TypeChar, Length: 2, Nullable: true}, "row 1: 3 characters exceed CHAR(2)"},
		{"BINARY of another length", build(arrow.BinaryTypes.Binary, func(b array.Builder) {
			b.(*array.BinaryBuilder).AppendValues([][]byte{{1}}, nil)
		}), domain.DataType{Root: domain.TypeBinary, Length: 2, Nullable: true}, "row 0: 1 bytes, BINARY(2) takes exactly 2"},
		{"DECIMAL over its precision", build(&arrow.Decimal128Type{Precision: 3, Scale: 0}, func(b array.Builder) {
			b.(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(5), decimal128.FromI64(1234)}, nil)
		}), domain.DataType{Root: domain.TypeDecimal, Precision: 3, Nullable: true}, "row 1: value 1234 does not fit DECIMAL(3, 0)"},
		{"TIME beyond a day", build(arrow.FixedWidthTypes.Time32s, func(b array.Builder) {
			b.(*array.Time32Builder).Append(86_400)
		}), domain.DataType{Root: domain.TypeTime, Precision: 3, Nullable: true}, "row 0: time 86400000 ms is not within a day"},
		{"timestamp overflowing the column's unit", build(&arrow.TimestampType{Unit: arrow.Second}, func(b array.Builder) {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(1 << 50))
		}), domain.DataType{Root: domain.TypeTimestampNTZ, Precision: 9, Nullable: true}, "row 0: timestamp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := columnOf(tc.arr, &tc.t)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}
