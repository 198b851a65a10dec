package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Type constructors and checks shared by the domain tests.

func dtPrim(r TypeRoot) DataType { return DataType{Root: r, Nullable: true} }

func dtNotNull(t DataType) DataType {
	t.Nullable = false
	return t
}

func dtDecimal(p, s int) DataType {
	return DataType{Root: TypeDecimal, Nullable: true, Precision: p, Scale: s}
}

func dtLen(r TypeRoot, n int) DataType { return DataType{Root: r, Nullable: true, Length: n} }

func dtPrec(r TypeRoot, p int) DataType { return DataType{Root: r, Nullable: true, Precision: p} }

func dtArray(e DataType) DataType { return DataType{Root: TypeArray, Nullable: true, Element: &e} }

func dtMap(k, v DataType) DataType {
	return DataType{Root: TypeMap, Nullable: true, Key: &k, Value: &v}
}

func dtRow(fields ...DataField) DataType {
	if fields == nil {
		fields = []DataField{}
	}
	return DataType{Root: TypeRow, Nullable: true, Fields: fields}
}

func dtField(name string, t DataType, id int32) DataField {
	return DataField{Name: name, Type: t, FieldID: id}
}

// newColumn is a column as a create request carries it: no id yet.
func newColumn(name string, t DataType, comment string) Column {
	return Column{Name: name, Type: t, Comment: comment, ID: UnassignedFieldID}
}

// semanticJSON decodes b into a generic value for order-insensitive comparison.

func requireInvalid(t *testing.T, err error, wantMsg string) {
	t.Helper()
	require.Error(t, err)
	e := AsError(err)
	require.NotNil(t, e, "want *domain.Error, got %T: %v", err, err)
	assert.Equal(t, KindInvalidArgument, e.Kind)
	assert.Equal(t, wantMsg, e.Message)
}

// --- DataType ---------------------------------------------------------------

// TestDataTypeJSONFlussVectors replays DataTypeJsonSerdeTest [Fluss tests]:
// each type is written exactly as Fluss writes it and read back unchanged.

// docExampleDescriptor is the table of docs/fluss-json.md, "The worked
// example", as a create request states it:
// no ids yet.
func docExampleDescriptor() TableDescriptor {
	u := UnassignedFieldID
	return TableDescriptor{
		Schema: Schema{
			Columns: []Column{
				newColumn("order_id", dtNotNull(dtPrim(TypeBigInt)), ""),
				newColumn("region", dtNotNull(dtPrim(TypeString)), ""),
				newColumn("dt", dtNotNull(dtPrim(TypeString)), ""),
				newColumn("amount", dtDecimal(12, 2), "order total"),
				newColumn("created_at", dtPrec(TypeTimestampLTZ, 3), ""),
				newColumn("tags", dtArray(dtPrim(TypeString)), ""),
				newColumn("attrs", dtMap(dtNotNull(dtPrim(TypeString)), dtPrim(TypeInteger)), ""),
				newColumn("ship_to", dtRow(
					dtField("city", dtPrim(TypeString), u),
					DataField{Name: "zip", Type: dtLen(TypeChar, 5), Description: "postal code", FieldID: u},
				), ""),
			},
			PrimaryKey: []string{"order_id", "region", "dt"},
		},
		Comment:       "orders per day",
		PartitionKeys: []string{"dt"},
		BucketKeys:    []string{"order_id"},
		BucketCount:   8,
		Properties: map[string]string{
			"table.replication.factor":       "3",
			"table.kv.format":                "COMPACTED",
			"table.auto-partition.enabled":   "true",
			"table.auto-partition.time-unit": "DAY",
		},
		CustomProperties: map[string]string{"owner": "team-go"},
	}
}
