package record

import (
	"encoding/binary"
	"math/bits"
)

// Hashing and bucketing (bucketing/*.java, utils/MurmurHashUtils.java,
// utils/MathUtils.java).

// FlussHashSeed is the seed of Fluss's murmur hash (MurmurHashUtils.DEFAULT_SEED).
const FlussHashSeed = 42

const (
	murmurC1 = 0xcc9e2d51
	murmurC2 = 0x1b873593
)

func mixK1(k uint32) uint32 {
	k *= murmurC1
	k = bits.RotateLeft32(k, 15)
	return k * murmurC2
}

func mixH1(h, k uint32) uint32 {
	h ^= k
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// HashBytes is Fluss's murmur hash with seed 42 (MurmurHashUtils.hashBytes,
// hashUnsafeBytes).
func HashBytes(b []byte) int32 { return HashBytesWithSeed(b, FlussHashSeed) }

// HashBytesWithSeed is Fluss's murmur3 variant: 4-byte blocks read
// little-endian, then each remaining byte (len mod 4 of them) mixed on its
// own as a sign-extended int (Java's byte), each followed by the full h
// update; finally h ^= len and the murmur3 finaliser. It differs from
// standard murmur3_32 whenever len mod 4 != 0.
func HashBytesWithSeed(b []byte, seed int32) int32 {
	h := uint32(seed)
	aligned := len(b) &^ 3
	for i := 0; i < aligned; i += 4 {
		h = mixH1(h, mixK1(binary.LittleEndian.Uint32(b[i:])))
	}
	for i := aligned; i < len(b); i++ {
		h = mixH1(h, mixK1(uint32(int32(int8(b[i])))))
	}
	return int32(fmix32(h ^ uint32(len(b))))
}

// MixHash is Flink's MathUtils.murmurHash applied by FlussBucketingFunction
// to the key hash: one murmur3 round of code with seed 0, ^= 4, the murmur3
// finaliser, then the absolute value (MinInt32 becomes 0). The result is >= 0.
func MixHash(code int32) int32 {
	h := mixH1(0, mixK1(uint32(code)))
	h = fmix32(h ^ 4)
	c := int32(h)
	switch {
	case c >= 0:
		return c
	case c != -1<<31:
		return -c
	default:
		return 0
	}
}

// Murmur3Sum32 is the standard MurmurHash3 x86 32-bit hash (Guava
// Hashing.murmur3_32_fixed(seed)), used by Iceberg bucketing: the tail bytes
// are packed little-endian into one word, zero-extended.
func Murmur3Sum32(b []byte, seed uint32) uint32 {
	h := seed
	aligned := len(b) &^ 3
	for i := 0; i < aligned; i += 4 {
		h = mixH1(h, mixK1(binary.LittleEndian.Uint32(b[i:])))
	}
	var k uint32
	switch len(b) - aligned {
	case 3:
		k ^= uint32(b[aligned+2]) << 16
		fallthrough
	case 2:
		k ^= uint32(b[aligned+1]) << 8
		fallthrough
	case 1:
		k ^= uint32(b[aligned])
		h ^= mixK1(k)
	}
	return fmix32(h ^ uint32(len(b)))
}

// BucketingFunction maps encoded bucket-key bytes to a bucket in
// [0, numBuckets) (bucketing/BucketingFunction.java).
type BucketingFunction interface {
	// Bucket returns the bucket of key. It fails with ErrInvalidValue for
	// numBuckets <= 0 and, where Fluss rejects it, for an empty key.
	Bucket(key []byte, numBuckets int) (int, error)
}

// NewBucketingFunction returns the bucketing function of a lake format, as
// BucketingFunction.of does: Fluss for none and lance, Paimon, Iceberg.
func NewBucketingFunction(lake LakeFormat) (BucketingFunction, error) {
	switch lake {
	case LakeNone, LakeLance:
		return FlussBucketing{}, nil
	case LakePaimon:
		return PaimonBucketing{}, nil
	case LakeIceberg:
		return IcebergBucketing{}, nil
	default:
		return nil, unsupported("bucketing for data lake format %q", lake)
	}
}

func checkBuckets(numBuckets int) error {
	if numBuckets <= 0 || numBuckets > 1<<31-1 {
		return invalidValue("bucket count %d, must be in 1..2^31-1", numBuckets)
	}
	return nil
}

// FlussBucketing is the default bucketing (bucketing/FlussBucketingFunction.java):
// MixHash(HashBytes(key)) % numBuckets. The key must not be empty.
type FlussBucketing struct{}

// Bucket implements BucketingFunction.
func (FlussBucketing) Bucket(key []byte, numBuckets int) (int, error) {
	if err := checkBuckets(numBuckets); err != nil {
		return 0, err
	}
	if len(key) == 0 {
		return 0, invalidValue("assigned key must not be empty")
	}
	return int(MixHash(HashBytes(key))) % numBuckets, nil
}

// PaimonBucketing follows Paimon (bucketing/PaimonBucketingFunction.java):
// |HashBytes(key) % numBuckets| with Java's truncated remainder.
type PaimonBucketing struct{}

// Bucket implements BucketingFunction.
func (PaimonBucketing) Bucket(key []byte, numBuckets int) (int, error) {
	if err := checkBuckets(numBuckets); err != nil {
		return 0, err
	}
	r := HashBytes(key) % int32(numBuckets)
	if r < 0 {
		r = -r
	}
	return int(r), nil
}

// IcebergBucketing follows Iceberg (bucketing/IcebergBucketingFunction.java):
// (Murmur3Sum32(key, 0) & 0x7FFFFFFF) % numBuckets. The key must not be empty.
type IcebergBucketing struct{}

// Bucket implements BucketingFunction.
func (IcebergBucketing) Bucket(key []byte, numBuckets int) (int, error) {
	if err := checkBuckets(numBuckets); err != nil {
		return 0, err
	}
	if len(key) == 0 {
		return 0, invalidValue("bucket key must not be empty")
	}
	return int(Murmur3Sum32(key, 0)&0x7FFFFFFF) % numBuckets, nil
}
