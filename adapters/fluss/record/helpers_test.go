package record

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Type constructors: nullable unless wrapped in notNull, as Fluss's DataTypes.

func typ(root domain.TypeRoot) domain.DataType { return domain.DataType{Root: root, Nullable: true} }

func notNull(t domain.DataType) domain.DataType { t.Nullable = false; return t }

func decimalT(p, s int) domain.DataType {
	return domain.DataType{Root: domain.TypeDecimal, Nullable: true, Precision: p, Scale: s}
}

func tsT(p int) domain.DataType {
	return domain.DataType{Root: domain.TypeTimestampNTZ, Nullable: true, Precision: p}
}

func ltzT(p int) domain.DataType {
	return domain.DataType{Root: domain.TypeTimestampLTZ, Nullable: true, Precision: p}
}

func charT(n int) domain.DataType {
	return domain.DataType{Root: domain.TypeChar, Nullable: true, Length: n}
}

func binaryT(n int) domain.DataType {
	return domain.DataType{Root: domain.TypeBinary, Nullable: true, Length: n}
}

func arrayT(e domain.DataType) domain.DataType {
	return domain.DataType{Root: domain.TypeArray, Nullable: true, Element: &e}
}

func mapT(k, v domain.DataType) domain.DataType {
	return domain.DataType{Root: domain.TypeMap, Nullable: true, Key: &k, Value: &v}
}

func rowT(fields ...domain.DataType) domain.DataType {
	t := domain.DataType{Root: domain.TypeRow, Nullable: true}
	for i, f := range fields {
		t.Fields = append(t.Fields, domain.DataField{Name: "f" + string(rune('0'+i)), Type: f, FieldID: -1})
	}
	return t
}

func types(ts ...domain.DataType) []domain.DataType { return ts }

// Datum constructors.

func i64(v int64) domain.Datum             { return domain.Datum{I64: v} }
func f64(v float64) domain.Datum           { return domain.Datum{F64: v} }
func str(s string) domain.Datum            { return domain.Datum{Bytes: []byte(s)} }
func raw(b ...byte) domain.Datum           { return domain.Datum{Bytes: b} }
func null() domain.Datum                   { return domain.Datum{Null: true} }
func ts(ms int64, ns int32) domain.Datum   { return domain.Datum{I64: ms, Nanos: ns} }
func elems(e ...domain.Datum) domain.Datum { return domain.Datum{Elems: e} }
func row(d ...domain.Datum) []domain.Datum { return d }

// unhex parses hex bytes, ignoring spaces, '|' and newlines.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "", ",", "").Replace(s)
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}
