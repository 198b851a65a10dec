package rowjson

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func typ_(root domain.TypeRoot) domain.DataType {
	return domain.DataType{Root: root, Nullable: true}
}

func notNull(t domain.DataType) domain.DataType {
	t.Nullable = false
	return t
}

func decimalT(p, s int) domain.DataType {
	return domain.DataType{Root: domain.TypeDecimal, Nullable: true, Precision: p, Scale: s}
}

func charT(n int) domain.DataType {
	return domain.DataType{Root: domain.TypeChar, Nullable: true, Length: n}
}

func binaryT(n int) domain.DataType {
	return domain.DataType{Root: domain.TypeBinary, Nullable: true, Length: n}
}

func precT(root domain.TypeRoot, p int) domain.DataType {
	return domain.DataType{Root: root, Nullable: true, Precision: p}
}

func arrayT(e domain.DataType) domain.DataType {
	return domain.DataType{Root: domain.TypeArray, Nullable: true, Element: &e}
}

func mapT(k, v domain.DataType) domain.DataType {
	return domain.DataType{Root: domain.TypeMap, Nullable: true, Key: &k, Value: &v}
}

func rowT(fields ...domain.DataField) domain.DataType {
	return domain.DataType{Root: domain.TypeRow, Nullable: true, Fields: fields}
}

func fieldT(name string, t domain.DataType) domain.DataField {
	return domain.DataField{Name: name, Type: t, FieldID: -1}
}

func col(name string, t domain.DataType) domain.Column {
	return domain.Column{Name: name, Type: t, ID: -1}
}

func mustCodec(t testing.TB, spec TableSpec) *Codec {
	t.Helper()
	c, err := NewCodec(spec)
	require.NoError(t, err)
	return c
}

// javaBytes is java.math.BigInteger#toByteArray of v.
func javaBytes(v *big.Int) []byte {
	if v.Sign() >= 0 {
		b := v.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// Two's complement of a negative value: 2^(8n) + v with the smallest n
	// whose top bit is set.
	for n := 1; ; n++ {
		m := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
		r := new(big.Int).Add(m, v)
		if r.Sign() < 0 {
			continue
		}
		b := r.Bytes()
		if len(b) < n {
			b = append(make([]byte, n-len(b)), b...)
		}
		if len(b) == n && b[0]&0x80 != 0 {
			return b
		}
	}
}

func bigInt(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}

// errMessage returns the *domain.Error message of err, failing otherwise.
func errMessage(t *testing.T, err error, kind domain.Kind) string {
	t.Helper()
	require.Error(t, err)
	de := domain.AsError(err)
	require.NotNil(t, de, "not a *domain.Error: %v", err)
	require.Equal(t, kind, de.Kind, "kind of %q", de.Message)
	return de.Message
}
