package domain

// TypeRoot is the name of a Fluss data type root exactly as Fluss spells it in
// its JSON form (apache/fluss: fluss-common/.../types/DataTypeRoot.java and
// utils/json/DataTypeJsonSerde.java). There is no second naming: INTEGER, not
// INT; STRING, not VARCHAR; BYTES, not VARBINARY.
type TypeRoot string

// The Fluss data type roots.
const (
	TypeBoolean      TypeRoot = "BOOLEAN"
	TypeTinyInt      TypeRoot = "TINYINT"
	TypeSmallInt     TypeRoot = "SMALLINT"
	TypeInteger      TypeRoot = "INTEGER"
	TypeBigInt       TypeRoot = "BIGINT"
	TypeFloat        TypeRoot = "FLOAT"
	TypeDouble       TypeRoot = "DOUBLE"
	TypeDecimal      TypeRoot = "DECIMAL"
	TypeChar         TypeRoot = "CHAR"
	TypeString       TypeRoot = "STRING"
	TypeBinary       TypeRoot = "BINARY"
	TypeBytes        TypeRoot = "BYTES"
	TypeDate         TypeRoot = "DATE"
	TypeTime         TypeRoot = "TIME_WITHOUT_TIME_ZONE"
	TypeTimestampNTZ TypeRoot = "TIMESTAMP_WITHOUT_TIME_ZONE"
	TypeTimestampLTZ TypeRoot = "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
	TypeArray        TypeRoot = "ARRAY"
	TypeMap          TypeRoot = "MAP"
	TypeRow          TypeRoot = "ROW"
)

// DataType is a Fluss logical type. Which fields are meaningful depends on Root:
// Length for CHAR and BINARY; Precision for DECIMAL, TIME and both TIMESTAMPs;
// Scale for DECIMAL; Element for ARRAY; Key and Value for MAP; Fields for ROW.
// Nullable is the type's nullability (a column's NOT NULL is its type's).
type DataType struct {
	Root      TypeRoot
	Nullable  bool
	Length    int
	Precision int
	Scale     int
	Element   *DataType
	Key       *DataType
	Value     *DataType
	Fields    []DataField
}

// DataField is one field of a ROW type. FieldID is -1 when unassigned.
type DataField struct {
	Name        string
	Type        DataType
	Description string
	FieldID     int32
}

// IsNested reports whether the type is ARRAY, MAP or ROW.
func (t *DataType) IsNested() bool {
	return t.Root == TypeArray || t.Root == TypeMap || t.Root == TypeRow
}
