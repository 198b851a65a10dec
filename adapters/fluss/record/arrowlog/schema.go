package arrowlog

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// kind is the Arrow vector class of a Fluss type (utils/ArrowUtils.java,
// DataTypeToArrowTypeConverter, at v0.9.1-incubating).
type kind uint8

const (
	kBool      kind = iota + 1 // BOOLEAN -> Bool
	kInt8                      // TINYINT -> Int(8, signed)
	kInt16                     // SMALLINT -> Int(16, signed)
	kInt32                     // INTEGER -> Int(32, signed)
	kInt64                     // BIGINT -> Int(64, signed)
	kFloat32                   // FLOAT -> FloatingPoint(SINGLE)
	kFloat64                   // DOUBLE -> FloatingPoint(DOUBLE)
	kDecimal                   // DECIMAL(p,s) -> Decimal(p, s, 128)
	kUtf8                      // CHAR(n), STRING -> Utf8
	kFixedBin                  // BINARY(n) -> FixedSizeBinary(n)
	kBinary                    // BYTES -> Binary
	kDate                      // DATE -> Date(DAY)
	kTime                      // TIME(p) -> Time(SECOND|MILLISECOND, 32) or Time(MICROSECOND|NANOSECOND, 64)
	kTimestamp                 // TIMESTAMP(p), TIMESTAMP_LTZ(p) -> Timestamp(unit, no zone)
	kList                      // ARRAY<T> -> List, child "element"
	kMap                       // MAP<K,V> -> Map(keysSorted=false), child "entries" Struct(key, value)
	kStruct                    // ROW<...> -> Struct
)

// Time units, indexed like arrow.TimeUnit: precision 0 -> s, 1..3 -> ms,
// 4..6 -> us, 7..9 -> ns.
const (
	unitSecond = iota
	unitMilli
	unitMicro
	unitNano
)

// Bounds of Fluss types (types/DecimalType.java, TimeType.java,
// TimestampType.java, BinaryType.java).
const (
	maxDecimalPrecision = 38
	maxCompactPrecision = 18 // Decimal.isCompact: the Datum holds the value in I64
	maxTimePrecision    = 9
	maxDepth            = 64 // also arrow-go's IPC nesting limit
)

// node is a compiled Fluss type.
type node struct {
	kind      kind
	root      domain.TypeRoot
	nullable  bool
	precision int // DECIMAL, TIME, TIMESTAMP*
	scale     int // DECIMAL
	width     int // BINARY(n): n; fixed value width in bytes for the other fixed-width kinds
	unit      int // TIME, TIMESTAMP*
	elem      *node
	value     *node
	fields    []node
	names     []string
}

// bufferCount is the number of Arrow buffers of the type
// (org.apache.arrow.vector.TypeLayout.getTypeBufferCount in Arrow Java 15, the
// version Fluss 0.9.1 ships): validity plus values for fixed-width types,
// validity + offsets + data for Utf8 and Binary, validity + offsets for List
// and Map, validity only for Struct.
func (n *node) bufferCount() int {
	switch n.kind {
	case kUtf8, kBinary:
		return 3
	case kStruct:
		return 1
	default:
		return 2
	}
}

func (n *node) String() string {
	switch n.kind {
	case kList:
		return "ARRAY<" + n.elem.String() + ">"
	case kMap:
		return "MAP<" + n.elem.String() + ", " + n.value.String() + ">"
	case kStruct:
		s := "ROW<"
		for i := range n.fields {
			if i > 0 {
				s += ", "
			}
			s += n.names[i] + " " + n.fields[i].String()
		}
		return s + ">"
	case kDecimal:
		return "DECIMAL(" + strconv.Itoa(n.precision) + "," + strconv.Itoa(n.scale) + ")"
	case kTime, kTimestamp:
		return string(n.root) + "(" + strconv.Itoa(n.precision) + ")"
	default:
		return string(n.root)
	}
}

// compileColumns compiles the column types of a table schema.
func compileColumns(types []domain.DataType) ([]node, error) {
	if len(types) == 0 {
		return nil, invalidSchema("an Arrow batch needs at least one column")
	}
	out := make([]node, len(types))
	for i := range types {
		n, err := compile(&types[i], 1)
		if err != nil {
			return nil, prefix(err, "column %d", i)
		}
		out[i] = n
	}
	return out, nil
}

func compile(t *domain.DataType, depth int) (node, error) {
	if depth > maxDepth {
		return node{}, invalidSchema("type nesting deeper than %d", maxDepth)
	}
	n := node{root: t.Root, nullable: t.Nullable}
	switch t.Root {
	case domain.TypeBoolean:
		n.kind = kBool
	case domain.TypeTinyInt:
		n.kind, n.width = kInt8, 1
	case domain.TypeSmallInt:
		n.kind, n.width = kInt16, 2
	case domain.TypeInteger:
		n.kind, n.width = kInt32, 4
	case domain.TypeBigInt:
		n.kind, n.width = kInt64, 8
	case domain.TypeFloat:
		n.kind, n.width = kFloat32, 4
	case domain.TypeDouble:
		n.kind, n.width = kFloat64, 8
	case domain.TypeDecimal:
		if t.Precision < 1 || t.Precision > maxDecimalPrecision {
			return node{}, invalidSchema("DECIMAL precision %d outside 1..%d", t.Precision, maxDecimalPrecision)
		}
		if t.Scale < 0 || t.Scale > t.Precision {
			return node{}, invalidSchema("DECIMAL scale %d outside 0..%d", t.Scale, t.Precision)
		}
		n.kind, n.width, n.precision, n.scale = kDecimal, 16, t.Precision, t.Scale
	case domain.TypeChar, domain.TypeString:
		n.kind = kUtf8
	case domain.TypeBinary:
		if t.Length < 1 {
			return node{}, invalidSchema("BINARY length %d, must be at least 1", t.Length)
		}
		n.kind, n.width = kFixedBin, t.Length
	case domain.TypeBytes:
		n.kind = kBinary
	case domain.TypeDate:
		n.kind, n.width = kDate, 4
	case domain.TypeTime, domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		if t.Precision < 0 || t.Precision > maxTimePrecision {
			return node{}, invalidSchema("%s precision %d outside 0..%d", t.Root, t.Precision, maxTimePrecision)
		}
		n.precision = t.Precision
		switch {
		case t.Precision == 0:
			n.unit = unitSecond
		case t.Precision <= 3:
			n.unit = unitMilli
		case t.Precision <= 6:
			n.unit = unitMicro
		default:
			n.unit = unitNano
		}
		if t.Root == domain.TypeTime {
			n.kind, n.width = kTime, 4
			if n.unit >= unitMicro {
				n.width = 8
			}
		} else {
			n.kind, n.width = kTimestamp, 8
		}
	case domain.TypeArray:
		if t.Element == nil {
			return node{}, invalidSchema("ARRAY without element type")
		}
		e, err := compile(t.Element, depth+1)
		if err != nil {
			return node{}, prefix(err, "element type")
		}
		n.kind, n.elem = kList, &e
	case domain.TypeMap:
		if t.Key == nil || t.Value == nil {
			return node{}, invalidSchema("MAP without key or value type")
		}
		k, err := compile(t.Key, depth+2)
		if err != nil {
			return node{}, prefix(err, "key type")
		}
		// Fluss's MapType forces the key type NOT NULL (types/MapType.java);
		// ArrowUtils.toArrowField relies on it.
		k.nullable = false
		v, err := compile(t.Value, depth+2)
		if err != nil {
			return node{}, prefix(err, "value type")
		}
		n.kind, n.elem, n.value = kMap, &k, &v
	case domain.TypeRow:
		n.kind = kStruct
		n.fields = make([]node, len(t.Fields))
		n.names = make([]string, len(t.Fields))
		for i := range t.Fields {
			f, err := compile(&t.Fields[i].Type, depth+1)
			if err != nil {
				return node{}, prefix(err, "field %d", i)
			}
			n.fields[i], n.names[i] = f, t.Fields[i].Name
		}
	default:
		return node{}, unsupported("data type %q has no Arrow mapping in Fluss 0.9.1", t.Root)
	}
	return n, nil
}

var timeUnits = [4]arrow.TimeUnit{arrow.Second, arrow.Millisecond, arrow.Microsecond, arrow.Nanosecond}

// arrowType is the arrow-go type of n, as ArrowUtils.toArrowField builds it.
func (n *node) arrowType() arrow.DataType {
	switch n.kind {
	case kBool:
		return arrow.FixedWidthTypes.Boolean
	case kInt8:
		return arrow.PrimitiveTypes.Int8
	case kInt16:
		return arrow.PrimitiveTypes.Int16
	case kInt32:
		return arrow.PrimitiveTypes.Int32
	case kInt64:
		return arrow.PrimitiveTypes.Int64
	case kFloat32:
		return arrow.PrimitiveTypes.Float32
	case kFloat64:
		return arrow.PrimitiveTypes.Float64
	case kDecimal:
		return &arrow.Decimal128Type{Precision: int32(n.precision), Scale: int32(n.scale)}
	case kUtf8:
		return arrow.BinaryTypes.String
	case kFixedBin:
		return &arrow.FixedSizeBinaryType{ByteWidth: n.width}
	case kBinary:
		return arrow.BinaryTypes.Binary
	case kDate:
		return arrow.FixedWidthTypes.Date32
	case kTime:
		if n.unit <= unitMilli {
			return &arrow.Time32Type{Unit: timeUnits[n.unit]}
		}
		return &arrow.Time64Type{Unit: timeUnits[n.unit]}
	case kTimestamp:
		// Java leaves the zone null for both TIMESTAMP and TIMESTAMP_LTZ; the
		// zone is schema information that never goes on the wire anyway.
		return &arrow.TimestampType{Unit: timeUnits[n.unit]}
	case kList:
		return arrow.ListOfField(arrow.Field{Name: "element", Type: n.elem.arrowType(), Nullable: n.elem.nullable})
	case kMap:
		return arrow.MapOfFields(
			arrow.Field{Name: "key", Type: n.elem.arrowType(), Nullable: false},
			arrow.Field{Name: "value", Type: n.value.arrowType(), Nullable: n.value.nullable})
	case kStruct:
		fs := make([]arrow.Field, len(n.fields))
		for i := range n.fields {
			fs[i] = arrow.Field{Name: n.names[i], Type: n.fields[i].arrowType(), Nullable: n.fields[i].nullable}
		}
		return arrow.StructOf(fs...)
	}
	panic("arrowlog: unknown kind " + strconv.Itoa(int(n.kind)))
}

// ArrowSchema returns the Arrow schema Fluss 0.9.1 derives from a table's
// columns (ArrowUtils.toArrowSchema): field names and nullability follow the
// Fluss columns, map keys are never nullable. Fluss never sends this schema;
// it is rebuilt from the table schema by every reader.
func ArrowSchema(columns []domain.Column) (*arrow.Schema, error) {
	nodes, err := compileColumns(domain.ColumnTypes(columns))
	if err != nil {
		return nil, err
	}
	return arrowSchema(nodes, columnNames(columns)), nil
}

func arrowSchema(nodes []node, names []string) *arrow.Schema {
	fs := make([]arrow.Field, len(nodes))
	for i := range nodes {
		name := "f" + strconv.Itoa(i)
		if i < len(names) && names[i] != "" {
			name = names[i]
		}
		fs[i] = arrow.Field{Name: name, Type: nodes[i].arrowType(), Nullable: nodes[i].nullable}
	}
	return arrow.NewSchema(fs, nil)
}

func columnNames(columns []domain.Column) []string {
	names := make([]string, len(columns))
	for i := range columns {
		names[i] = columns[i].Name
	}
	return names
}
