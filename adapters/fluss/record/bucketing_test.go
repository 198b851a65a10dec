package record

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// apache/fluss fluss-common/src/test/java/org/apache/fluss/bucketing/BucketingFunctionTest.java
// (v0.9.1-incubating); docs/fluss-records.md, Test vectors tier 1.
func TestBucketingFunctionTest(t *testing.T) {
	t.Parallel()
	uuid := []byte("2bb87d68-baf9-4e64-90f9-f80910419fa6")
	fox := []byte("The quick brown fox jumps over the lazy dog")
	tests := []struct {
		key                           []byte
		n                             int
		fluss, lance, paimon, iceberg int
	}{
		{[]byte{0, 10}, 7, 1, 1, 1, 3},
		{[]byte{0, 10, 10, 10}, 12, 0, 0, 11, 4},
		{uuid, 16, 6, 6, 12, 12},
		{fox, 8, 6, 6, 0, 3},
	}
	for _, tc := range tests {
		for lake, want := range map[LakeFormat]int{
			LakeNone: tc.fluss, LakeLance: tc.lance, LakePaimon: tc.paimon, LakeIceberg: tc.iceberg,
		} {
			f, err := NewBucketingFunction(lake)
			require.NoError(t, err)
			got, err := f.Bucket(tc.key, tc.n)
			require.NoError(t, err)
			assert.Equal(t, want, got, "lake %q key %x n %d", lake, tc.key, tc.n)
		}
	}
}

// Hash primitives of docs/fluss-records.md, Test vectors tier 1 (from
// fluss-rust murmur_hash.rs tests; Java agrees since no tail byte is >= 0x80).
func TestHashPrimitives(t *testing.T) {
	t.Parallel()
	fox := []byte("The quick brown fox jumps over the lazy dog")
	i32 := func(u uint32) int32 { return int32(u) }
	assert.Equal(t, i32(0x087FCD5C), HashBytesWithSeed(nil, 42))
	assert.Equal(t, i32(0x087FCD5C), HashBytes([]byte{}))
	assert.Equal(t, i32(0x1BC6F880), HashBytes(fox))
	assert.Equal(t, i32(0x00000000), HashBytesWithSeed(nil, 0))
	assert.Equal(t, i32(0x81F16F39), HashBytesWithSeed(nil, -1))
	assert.Equal(t, i32(0x5FD20A20), HashBytesWithSeed(fox, 0))

	assert.Equal(t, i32(0x2362F9DE), MixHash(0))
	assert.Equal(t, i32(0x43A46E1D), MixHash(42))
	assert.Equal(t, i32(0x2EEB27DE), MixHash(-77))

	assert.Equal(t, uint32(0x00000000), Murmur3Sum32(nil, 0))
	assert.Equal(t, uint32(0x514E28B7), Murmur3Sum32(nil, 1))
	assert.Equal(t, uint32(0x81F16F39), Murmur3Sum32(nil, 0xFFFFFFFF))
	assert.Equal(t, uint32(0x2E4FF723), Murmur3Sum32(fox, 0))
	assert.Equal(t, uint32(0x2FA826CD), Murmur3Sum32(fox, 0x9747B28C))
}

// Derived vectors of docs/fluss-records.md, Test vectors tier 3 (computed by
// an independent re-implementation, not asserted upstream). The key bytes come
// from our own CompactedKeyEncoder.
func TestDerivedKeyBuckets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name               string
		types              []domain.DataType
		row                []domain.Datum
		key                string
		hash               uint32
		n3, n4, n16, pai16 int
	}{
		{"INT 1", types(typ(domain.TypeInteger)), row(i64(1)), "01", 0xE8F30D16, 0, 0, 12, 10},
		// Java sign-extends the tail byte 0x01 and 0xC8: bucket 6 of 16
		// (the Rust client's zero extension gives 10).
		{"INT 200", types(typ(domain.TypeInteger)), row(i64(200)), "C8 01", 0x56AAB02C, 2, 2, 6, 12},
		{"INT -1", types(typ(domain.TypeInteger)), row(i64(-1)), "FF FF FF FF 0F", 0x0008B8CF, 0, 2, 10, 15},
		{"STRING a2", types(typ(domain.TypeString)), row(str("a2")), "02 61 32", 0x8BE0C34B, 0, 2, 14, 5},
		{"INT 1, STRING a2", types(typ(domain.TypeInteger), typ(domain.TypeString)), row(i64(1), str("a2")), "01 02 61 32", 0xF7F9B285, 2, 1, 13, 11},
		{"BIGINT 1698235273182", types(typ(domain.TypeBigInt)), row(i64(1698235273182)), "DE 9F D7 B5 B6 31", 0x0EFA312E, 1, 1, 13, 14},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			enc, err := NewCompactedKeyEncoder(tc.types, nil)
			require.NoError(t, err)
			key, err := enc.AppendKey(nil, tc.row)
			require.NoError(t, err)
			require.Equal(t, unhex(t, tc.key), key)
			assert.Equal(t, int32(tc.hash), HashBytes(key))
			for n, want := range map[int]int{3: tc.n3, 4: tc.n4, 16: tc.n16} {
				got, err := FlussBucketing{}.Bucket(key, n)
				require.NoError(t, err)
				assert.Equal(t, want, got, "n=%d", n)
			}
			got, err := PaimonBucketing{}.Bucket(key, 16)
			require.NoError(t, err)
			assert.Equal(t, tc.pai16, got)
		})
	}
}

func TestBucketingErrors(t *testing.T) {
	t.Parallel()
	for _, f := range []BucketingFunction{FlussBucketing{}, PaimonBucketing{}, IcebergBucketing{}} {
		_, err := f.Bucket([]byte{1}, 0)
		assert.ErrorIs(t, err, ErrInvalidValue, "%T n=0", f)
		_, err = f.Bucket([]byte{1}, -3)
		assert.ErrorIs(t, err, ErrInvalidValue, "%T n<0", f)
	}
	_, err := FlussBucketing{}.Bucket(nil, 3)
	assert.ErrorIs(t, err, ErrInvalidValue, "Fluss rejects an empty key")
	_, err = IcebergBucketing{}.Bucket(nil, 3)
	assert.ErrorIs(t, err, ErrInvalidValue, "Iceberg rejects an empty key")
	// Paimon accepts an empty key (PaimonBucketingFunction has no check).
	_, err = PaimonBucketing{}.Bucket(nil, 3)
	assert.NoError(t, err)

	_, err = NewBucketingFunction("hudi")
	assert.ErrorIs(t, err, ErrUnsupported)
	var de *domain.Error
	require.True(t, errors.As(err, &de))
	assert.Equal(t, domain.KindUnsupported, de.Kind)
}

func TestBucketsAlwaysInRange(t *testing.T) {
	t.Parallel()
	key := make([]byte, 0, 16)
	for i := 0; i < 2000; i++ {
		key = append(key[:0], byte(i), byte(i>>3), byte(i*7), byte(0x80|i))
		key = key[:1+i%4]
		for _, f := range []BucketingFunction{FlussBucketing{}, PaimonBucketing{}, IcebergBucketing{}} {
			for _, n := range []int{1, 2, 7, 128, 1<<31 - 1} {
				b, err := f.Bucket(key, n)
				require.NoError(t, err)
				require.True(t, b >= 0 && b < n, "%T bucket %d of %d", f, b, n)
			}
		}
	}
}
