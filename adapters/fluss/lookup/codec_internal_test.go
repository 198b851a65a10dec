package lookup

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func oneKeyCodec(t *testing.T, root domain.TypeRoot, buckets int) *codec {
	t.Helper()
	s := domain.Schema{
		Columns:    []domain.Column{{Name: "k", Type: domain.DataType{Root: root}}, {Name: "v", Type: domain.DataType{Root: domain.TypeString, Nullable: true}}},
		PrimaryKey: []string{"k"},
	}
	tb := &meta.Table{Info: domain.TableInfo{Path: domain.TablePath{Database: "db", Table: "t"}, TableID: 1, SchemaID: 1,
		Descriptor: domain.TableDescriptor{Schema: s, BucketCount: buckets}}, NumBuckets: buckets}
	c, err := newCodec(tb, 1, s)
	require.NoError(t, err)
	return c
}

// TestBucketsMatchJava checks key bytes and buckets against values printed
// by the Fluss 0.9.1 Java FlussBucketingFunction.bucketForRowKey for the
// same key bytes (12 and 7 buckets). The keys include tail bytes >= 0x80,
// which Java mixes in sign-extended; the Rust client (pyfluss 1.0) mixes
// them in zero-extended and so places such keys in other buckets.
func TestBucketsMatchJava(t *testing.T) {
	t.Parallel()
	cases := []struct {
		root    domain.TypeRoot
		key     domain.Datum
		hex     string
		b12, b7 int32
	}{
		{domain.TypeInteger, domain.Datum{I64: 127}, "7f", 10, 2},
		{domain.TypeInteger, domain.Datum{I64: 128}, "8001", 10, 2},
		{domain.TypeInteger, domain.Datum{I64: 150}, "9601", 3, 6},
		{domain.TypeInteger, domain.Datum{I64: 300}, "ac02", 1, 6},
		{domain.TypeInteger, domain.Datum{I64: -1}, "ffffffff0f", 6, 1},
		{domain.TypeString, domain.Datum{Bytes: []byte("é")}, "02c3a9", 2, 5},
		{domain.TypeString, domain.Datum{Bytes: []byte("héllo")}, "0668c3a96c6c6f", 6, 2},
		{domain.TypeBigInt, domain.Datum{I64: 1 << 40}, "808080808020", 9, 5},
	}
	for _, tc := range cases {
		for _, nb := range []struct {
			n    int
			want int32
		}{{12, tc.b12}, {7, tc.b7}} {
			c := oneKeyCodec(t, tc.root, nb.n)
			var sc scratch
			key, b, err := c.encode(&c.pk, nil, []domain.Datum{tc.key}, &sc)
			require.NoError(t, err)
			assert.Equal(t, tc.hex, hex.EncodeToString(key))
			assert.Equal(t, nb.want, b, "key %s, %d buckets", tc.hex, nb.n)
		}
	}
}
