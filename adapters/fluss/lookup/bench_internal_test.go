package lookup

import (
	"context"
	"fmt"
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func benchCodec(b *testing.B) (*codec, [][]domain.Datum, [][]byte) {
	b.Helper()
	d := BenchDescriptor()
	s := d.Schema
	t := &meta.Table{
		Info:       domain.TableInfo{Path: domain.TablePath{Database: "db", Table: "t"}, TableID: 1, SchemaID: 1, Descriptor: d},
		NumBuckets: 16,
	}
	cd, err := newCodec(t, 1, s)
	if err != nil {
		b.Fatal(err)
	}
	types := domain.ColumnTypes(s.Columns)
	enc, err := record.NewCompactedRowEncoder(types)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([][]domain.Datum, 128)
	values := make([][]byte, 128)
	for i := range keys {
		n := int64(i)
		r := []domain.Datum{{I64: n}, {Bytes: []byte(fmt.Sprintf("user-%06d", i))}, {F64: float64(n) / 3},
			{Bytes: []byte(fmt.Sprintf("note for %d", i))}, {I64: 1_700_000_000_000 + n}, {I64: n * 7}, {I64: n % 2}, {I64: n * 101}}
		keys[i] = r[:2]
		rb, err := enc.AppendRow(nil, r)
		if err != nil {
			b.Fatal(err)
		}
		values[i] = record.AppendValue(nil, 1, rb)
	}
	return cd, keys, values
}

// BenchmarkEncode128 encodes 128 composite primary keys and computes their
// buckets (the CPU part of routing; leaders and grouping need metadata).
func BenchmarkEncode128(b *testing.B) {
	cd, keys, _ := benchCodec(b)
	l := &Lookuper{opts: Options{}.withDefaults()}
	b.ReportAllocs()
	for b.Loop() {
		x := newExchange(l, cd, false, len(keys))
		x.encodeAll(&cd.pk, keys)
		if x.out[0].err != nil {
			b.Fatal(x.out[0].err)
		}
	}
}

// BenchmarkDecode128 decodes 128 stored values of 8 columns into one slab,
// as Lookup does.
func BenchmarkDecode128(b *testing.B) {
	cd, _, values := benchCodec(b)
	ctx := context.Background()
	width := len(cd.types)
	b.ReportAllocs()
	for b.Loop() {
		slab := make([]domain.Datum, len(values)*width)
		var tmp []domain.Datum
		for _, v := range values {
			row := slab[:width:width]
			slab = slab[width:]
			var err error
			if _, tmp, err = cd.decodeValue(ctx, nil, row, tmp, v); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchDescriptor is the table of the lookup benchmarks (here and in
// bench_test.go): eight columns of common types, a two-column primary key,
// 16 buckets.
func BenchDescriptor() domain.TableDescriptor {
	c := func(name string, t domain.DataType, id int32) domain.Column {
		return domain.Column{Name: name, Type: t, ID: id}
	}
	return domain.TableDescriptor{
		Schema: domain.Schema{
			Columns: []domain.Column{
				c("id", domain.DataType{Root: domain.TypeBigInt}, 0),
				c("name", domain.DataType{Root: domain.TypeString}, 1),
				c("score", domain.DataType{Root: domain.TypeDouble, Nullable: true}, 2),
				c("note", domain.DataType{Root: domain.TypeString, Nullable: true}, 3),
				c("ts", domain.DataType{Root: domain.TypeTimestampNTZ, Precision: 3, Nullable: true}, 4),
				c("qty", domain.DataType{Root: domain.TypeInteger, Nullable: true}, 5),
				c("flag", domain.DataType{Root: domain.TypeBoolean, Nullable: true}, 6),
				c("amount", domain.DataType{Root: domain.TypeDecimal, Precision: 10, Scale: 2, Nullable: true}, 7),
			},
			PrimaryKey: []string{"id", "name"}, HighestFieldID: 7,
		},
		BucketCount: 16,
	}
}
