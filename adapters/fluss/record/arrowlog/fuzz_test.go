package arrowlog

import (
	"os"
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// fuzzTypes is the schema FuzzReadLogBatch decodes with: every type, nested
// ones included.
var fuzzTypes = allTypes()

// FuzzReadLogBatch feeds arbitrary bytes to the reader: it must never panic
// or allocate without bound, and what it accepts must be consistent.
//
//	go test -run '^$' -fuzz FuzzReadLogBatch -fuzztime 20s ./adapters/fluss/record/arrowlog/
func FuzzReadLogBatch(f *testing.F) {
	for _, codec := range codecs {
		b, err := NewBuilderFromTypes(fuzzTypes, codec, DefaultZstdLevel)
		if err != nil {
			f.Fatal(err)
		}
		for _, rw := range allTypesRows() {
			if err := b.Append(rw); err != nil {
				f.Fatal(err)
			}
		}
		batch, _, err := b.BuildLogBatch(nil, 1, 5, 6)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(batch)
		// A one-row batch keeps the seed small for the mutator.
		if err := b.Append(allTypesRows()[0]); err != nil {
			f.Fatal(err)
		}
		batch, _, err = b.BuildLogBatch(nil, 1, -1, -1)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(batch)
	}
	empty, err := BuildLogBatch(nil, nil, 0, 1, -1, -1)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(empty)
	// Batches of the Fluss Java writer.
	for _, codec := range codecs {
		java, err := os.ReadFile(javaFile("all", codec))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(java)
	}

	r, err := NewReaderFromTypes(fuzzTypes)
	if err != nil {
		f.Fatal(err)
	}
	r.SetMaxBufferSize(1 << 20)
	f.Fuzz(func(t *testing.T, data []byte) {
		// The log batch CRC would reject almost every mutation; fix it up so
		// that the fuzzer reaches the Arrow decoder.
		if len(data) >= record.LogBatchHeaderSizeV0 && data[12] == record.LogMagicV0 {
			data = append([]byte(nil), data...)
			record.PutInt32LE(data[21:], int32(record.CRC32C(data[25:])))
		}
		lb, _, err := r.ReadLogBatch(data)
		if err != nil {
			return
		}
		if len(lb.Rows) != int(lb.Header.RecordCount) {
			t.Fatalf("%d rows, header says %d", len(lb.Rows), lb.Header.RecordCount)
		}
		for _, rw := range lb.Rows {
			if len(rw) != len(fuzzTypes) {
				t.Fatalf("row of %d values", len(rw))
			}
		}
		if lb.Message != nil && lb.Message.Size != len(lb.Header.Records)-len(lb.ChangeTypes) {
			t.Fatalf("message of %d bytes in a %d-byte records area", lb.Message.Size, len(lb.Header.Records))
		}
		// Whatever decodes must re-encode (the reader only returns values
		// the writer accepts, except for the fields of null rows).
		if lb.Header.AppendOnly() && len(lb.Rows) > 0 {
			b, err := NewBuilderFromTypes(fuzzTypes, CompressionNone, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i, rw := range lb.Rows {
				if err := b.Append(rw); err != nil {
					t.Fatalf("row %d decodes but does not re-encode: %v", i, err)
				}
			}
		}
	})
}

// FuzzReadRecords targets the Arrow message decoder directly with a small
// nested schema.
func FuzzReadRecords(f *testing.F) {
	types := []domain.DataType{
		typ(domain.TypeInteger), typ(domain.TypeString), decimalT(20, 2),
		arrayT(mapT(typ(domain.TypeString), typ(domain.TypeBigInt))), rowT(typ(domain.TypeBoolean), binaryT(3)),
	}
	rows := [][]domain.Datum{
		row(i64(1), str("a"), bigDec(12345), elems(elems(str("k"), i64(1)), null()), elems(i64(1), raw(1, 2, 3))),
		row(null(), null(), null(), null(), null()),
		row(i64(-7), str(""), bigDec(-1), elems(), elems(null(), raw(0, 0, 0))),
	}
	for _, codec := range codecs {
		b, err := NewBuilderFromTypes(types, codec, DefaultZstdLevel)
		if err != nil {
			f.Fatal(err)
		}
		for _, rw := range rows {
			if err := b.Append(rw); err != nil {
				f.Fatal(err)
			}
		}
		msg, _, err := b.Build(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(msg)
	}
	r, err := NewReaderFromTypes(types)
	if err != nil {
		f.Fatal(err)
	}
	r.SetMaxBufferSize(1 << 20)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, got, err := r.ReadRecords(data)
		if err != nil {
			return
		}
		if int64(len(got)) != m.Length {
			t.Fatalf("%d rows, message says %d", len(got), m.Length)
		}
	})
}
