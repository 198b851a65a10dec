package http

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestRESTDataTypeRoundTrip: every type of the official ColumnDataType
// vocabulary decodes and encodes back to the same document, nested
// nullability included (written only as false).
func TestRESTDataTypeRoundTrip(t *testing.T) {
	t.Parallel()
	docs := []string{
		`{"type":"BOOLEAN"}`, `{"type":"TINYINT"}`, `{"type":"SMALLINT"}`, `{"type":"INTEGER"}`, `{"type":"BIGINT"}`,
		`{"type":"FLOAT"}`, `{"type":"DOUBLE"}`, `{"type":"STRING"}`, `{"type":"BYTES"}`, `{"type":"DATE"}`,
		`{"type":"CHAR","length":5}`, `{"type":"BINARY","length":16}`, `{"type":"DECIMAL","precision":18,"scale":2}`,
		`{"type":"TIME_WITHOUT_TIME_ZONE","precision":3}`, `{"type":"TIMESTAMP_WITHOUT_TIME_ZONE","precision":6}`,
		`{"type":"TIMESTAMP_WITH_LOCAL_TIME_ZONE","precision":9}`,
		`{"type":"ARRAY","element_type":{"type":"STRING","nullable":false}}`,
		`{"type":"MAP","key_type":{"type":"STRING","nullable":false},"value_type":{"type":"ARRAY","element_type":{"type":"INTEGER"}}}`,
		`{"type":"ROW","fields":[{"name":"a","field_type":{"type":"INTEGER","nullable":false},"description":"first"},{"name":"b","field_type":{"type":"ROW","fields":[]}}]}`,
	}
	for _, doc := range docs {
		t.Run(doc, func(t *testing.T) {
			t.Parallel()
			dt, err := decodeDataType(json.RawMessage(doc), "data_type")
			require.NoError(t, err)
			assert.True(t, dt.Nullable, "the column decides the top-level nullability")
			out, err := json.Marshal(restDataType{t: dt, top: true})
			require.NoError(t, err)
			assert.Equal(t, doc, string(out))
		})
	}
}

func TestRESTDataTypeTopLevelNeverCarriesNullable(t *testing.T) {
	t.Parallel()
	out, err := json.Marshal(restDataType{t: domain.DataType{Root: domain.TypeBigInt}, top: true})
	require.NoError(t, err)
	assert.Equal(t, `{"type":"BIGINT"}`, string(out), "a NOT NULL column's type is written without nullable")
	out, err = json.Marshal(restDataType{t: domain.DataType{Root: domain.TypeRow, Fields: []domain.DataField{
		{Name: "f", Type: domain.DataType{Root: domain.TypeString}, FieldID: 7}}}, top: true})
	require.NoError(t, err)
	assert.Equal(t, `{"type":"ROW","fields":[{"name":"f","field_type":{"type":"STRING","nullable":false}}]}`, string(out),
		"field ids are not exposed")
}

func TestRESTDataTypeRejects(t *testing.T) {
	t.Parallel()
	cases := []struct{ doc, msg string }{
		{`{"type":"STRING","nullable":false}`, "data_type.nullable: a column's nullability is the column's own `nullable` member"},
		{`{"type":"DECIMAL","precision":10}`, "data_type.scale: required for DECIMAL"},
		{`{"type":"CHAR"}`, "data_type.length: required for CHAR"},
		{`{"type":"TIMESTAMP_WITHOUT_TIME_ZONE"}`, "data_type.precision: required for TIMESTAMP_WITHOUT_TIME_ZONE"},
		{`{"type":"STRING","length":3}`, "data_type.length: unknown field of a STRING data type"},
		{`{"type":"INT"}`, `data_type.type: unknown data type "INT"`},
		{`{"type":"VARCHAR"}`, `data_type.type: unknown data type "VARCHAR"`},
		{`{"precision":3}`, "data_type.type: required"},
		{`{"type":1}`, "data_type.type: expected a string"},
		{`"INTEGER"`, "data_type: expected a data type object"},
		{`{"type":"ARRAY"}`, "data_type.element_type: required for ARRAY"},
		{`{"type":"ARRAY","element_type":{"type":"STRING","nullable":"no"}}`, "data_type.element_type.nullable: expected a boolean"},
		{`{"type":"ROW","fields":[{"name":"a","field_type":{"type":"INTEGER"},"field_id":0}]}`, "data_type.fields[0].field_id: unknown field of a ROW field"},
		{`{"type":"ROW","fields":[{"field_type":{"type":"INTEGER"}}]}`, "data_type.fields[0].name: required"},
		{`{"type":"ROW","fields":[{"name":"a"}]}`, "data_type.fields[0].field_type: required"},
		{`{"type":"DECIMAL","precision":1.5,"scale":0}`, "data_type.precision: expected a 32-bit integer"},
	}
	for _, tc := range cases {
		t.Run(tc.doc, func(t *testing.T) {
			t.Parallel()
			_, err := decodeDataType(json.RawMessage(tc.doc), "data_type")
			require.Error(t, err)
			assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}
