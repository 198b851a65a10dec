package arrowlog

import (
	"math/rand"
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
)

// TestReaderSurvivesMutations is a deterministic companion of the fuzz
// targets: random corruptions of real batches (bytes, 32/64-bit fields set
// to boundary values, truncations) with the CRC fixed up must be rejected or
// decode into rows that re-encode.
func TestReaderSurvivesMutations(t *testing.T) {
	var seeds [][]byte
	for _, codec := range codecs {
		b, err := NewBuilderFromTypes(fuzzTypes, codec, DefaultZstdLevel)
		if err != nil {
			t.Fatal(err)
		}
		for i, rw := range append(allTypesRows(), allTypesRows()[0]) {
			if err := b.Append(rw); err != nil {
				t.Fatal(err)
			}
			if i == 3 || i == 4 {
				s, _, err := b.BuildLogBatch(nil, 1, 5, 6)
				if err != nil {
					t.Fatal(err)
				}
				seeds = append(seeds, s)
			}
		}
	}
	r, err := NewReaderFromTypes(fuzzTypes)
	if err != nil {
		t.Fatal(err)
	}
	r.SetMaxBufferSize(1 << 20)
	rng := rand.New(rand.NewSource(2))
	iterations := 50000
	if testing.Short() {
		iterations = 5000
	}
	accepted := 0
	for i := 0; i < iterations; i++ {
		data := append([]byte(nil), seeds[rng.Intn(len(seeds))]...)
		for k := 0; k < 1+rng.Intn(6); k++ {
			switch rng.Intn(4) {
			case 0:
				data[48+rng.Intn(len(data)-48)] = byte(rng.Intn(256))
			case 1:
				p := 48 + rng.Intn(len(data)-56)
				v := []uint64{0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0xFFFFFFFFFFFFFFFF, 1 << 20, 255, 1 << 31}[rng.Intn(8)]
				for j := 0; j < 4+4*rng.Intn(2); j++ {
					data[p+j] = byte(v >> (8 * j))
				}
			case 2:
				data = data[:48+rng.Intn(len(data)-48)]
				if len(data) < 64 {
					data = append([]byte(nil), seeds[0]...)
				}
			case 3:
				data[48+rng.Intn(len(data)-48)] ^= 1 << rng.Intn(8)
			}
		}
		record.PutInt32LE(data[8:], int32(len(data)-record.LogOverhead))
		record.PutInt32LE(data[21:], int32(record.CRC32C(data[25:])))
		lb, _, err := r.ReadLogBatch(data)
		if err != nil {
			continue
		}
		accepted++
		b, err := NewBuilderFromTypes(fuzzTypes, CompressionNone, 0)
		if err != nil {
			t.Fatal(err)
		}
		for j, rw := range lb.Rows {
			if err := b.Append(rw); err != nil {
				t.Fatalf("iteration %d, row %d decodes but does not re-encode: %v", i, j, err)
			}
		}
	}
	t.Logf("%d of %d mutated batches decoded", accepted, iterations)
}
