package rowjson

import (
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// kind is the compiled form of a domain.TypeRoot: an integer switch is much
// cheaper on the hot path than comparing root names.
type kind uint8

const (
	kBool kind = iota + 1
	kTinyInt
	kSmallInt
	kInt
	kBigInt
	kFloat
	kDouble
	kDecimal
	kChar
	kString
	kBinary
	kBytes
	kDate
	kTime
	kTsNTZ
	kTsLTZ
	kArray
	kMap
	kRow
)

// typ is a compiled, immutable data type.
type typ struct {
	kind      kind
	nullable  bool
	length    int // CHAR, BINARY
	precision int // DECIMAL, TIME, TIMESTAMP_*
	scale     int // DECIMAL
	elem      *typ
	key       *typ
	val       *typ
	fields    []field
	// fieldIdx maps a ROW field name to its position; nil for rows with few
	// fields, which are searched linearly.
	fieldIdx map[string]int
	// name is the type as shown in error messages, e.g. DECIMAL(10,2).
	name string
	// intMin and intMax bound the integer types.
	intMin, intMax int64
}

type field struct {
	name   string
	nameID int32  // index in Codec.names
	quoted string // the name as a JSON string, compared before unquoting
	t      *typ
}

// rowFieldMapThreshold is the field count from which a ROW gets a name map.
const rowFieldMapThreshold = 12

func (t *typ) fieldByName(name []byte) int {
	if t.fieldIdx != nil {
		if i, ok := t.fieldIdx[string(name)]; ok {
			return i
		}
		return -1
	}
	for i := range t.fields {
		if t.fields[i].name == string(name) {
			return i
		}
	}
	return -1
}

// isStringKey reports whether a MAP with this key type may also be written as
// a JSON object: STRING keys only, not CHAR(n), as the official decoder
// (decoder.rs, ComplexValueVisitor::visit_map) decides.
func (t *typ) isStringKey() bool { return t.kind == kString }

// compileType compiles dt; ROW field names are appended to names, which
// error paths index (see seg).
func compileType(dt *domain.DataType, where string, names *[]string) (*typ, error) {
	t := &typ{nullable: dt.Nullable}
	switch dt.Root {
	case domain.TypeBoolean:
		t.kind, t.name = kBool, "BOOLEAN"
	case domain.TypeTinyInt:
		t.kind, t.name, t.intMin, t.intMax = kTinyInt, "TINYINT", -1<<7, 1<<7-1
	case domain.TypeSmallInt:
		t.kind, t.name, t.intMin, t.intMax = kSmallInt, "SMALLINT", -1<<15, 1<<15-1
	case domain.TypeInteger:
		t.kind, t.name, t.intMin, t.intMax = kInt, "INTEGER", -1<<31, 1<<31-1
	case domain.TypeBigInt:
		t.kind, t.name, t.intMin, t.intMax = kBigInt, "BIGINT", -1<<63, 1<<63-1
	case domain.TypeFloat:
		t.kind, t.name = kFloat, "FLOAT"
	case domain.TypeDouble:
		t.kind, t.name = kDouble, "DOUBLE"
	case domain.TypeDecimal:
		if dt.Precision < 1 || dt.Precision > 38 || dt.Scale < 0 || dt.Scale > dt.Precision {
			return nil, fmt.Errorf("%s: invalid DECIMAL(%d,%d)", where, dt.Precision, dt.Scale)
		}
		t.kind, t.precision, t.scale = kDecimal, dt.Precision, dt.Scale
		t.name = "DECIMAL(" + strconv.Itoa(dt.Precision) + "," + strconv.Itoa(dt.Scale) + ")"
	case domain.TypeChar:
		if dt.Length < 1 {
			return nil, fmt.Errorf("%s: invalid CHAR(%d)", where, dt.Length)
		}
		t.kind, t.length, t.name = kChar, dt.Length, "CHAR("+strconv.Itoa(dt.Length)+")"
	case domain.TypeString:
		t.kind, t.name = kString, "STRING"
	case domain.TypeBinary:
		if dt.Length < 1 {
			return nil, fmt.Errorf("%s: invalid BINARY(%d)", where, dt.Length)
		}
		t.kind, t.length, t.name = kBinary, dt.Length, "BINARY("+strconv.Itoa(dt.Length)+")"
	case domain.TypeBytes:
		t.kind, t.name = kBytes, "BYTES"
	case domain.TypeDate:
		t.kind, t.name = kDate, "DATE"
	case domain.TypeTime, domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		if dt.Precision < 0 || dt.Precision > 9 {
			return nil, fmt.Errorf("%s: invalid %s precision %d", where, dt.Root, dt.Precision)
		}
		t.precision = dt.Precision
		switch dt.Root {
		case domain.TypeTime:
			t.kind, t.name = kTime, "TIME("+strconv.Itoa(dt.Precision)+")"
		case domain.TypeTimestampNTZ:
			t.kind, t.name = kTsNTZ, "TIMESTAMP("+strconv.Itoa(dt.Precision)+")"
		default:
			t.kind, t.name = kTsLTZ, "TIMESTAMP_LTZ("+strconv.Itoa(dt.Precision)+")"
		}
	case domain.TypeArray:
		if dt.Element == nil {
			return nil, fmt.Errorf("%s: ARRAY without element type", where)
		}
		e, err := compileType(dt.Element, where+"[]", names)
		if err != nil {
			return nil, err
		}
		t.kind, t.elem, t.name = kArray, e, "ARRAY<"+e.name+">"
	case domain.TypeMap:
		if dt.Key == nil || dt.Value == nil {
			return nil, fmt.Errorf("%s: MAP without key or value type", where)
		}
		k, err := compileType(dt.Key, where+".key", names)
		if err != nil {
			return nil, err
		}
		v, err := compileType(dt.Value, where+".value", names)
		if err != nil {
			return nil, err
		}
		t.kind, t.key, t.val, t.name = kMap, k, v, "MAP<"+k.name+", "+v.name+">"
	case domain.TypeRow:
		t.kind, t.name = kRow, "ROW"
		t.fields = make([]field, len(dt.Fields))
		seen := make(map[string]bool, len(dt.Fields))
		for i := range dt.Fields {
			f := &dt.Fields[i]
			if seen[f.Name] {
				return nil, fmt.Errorf("%s: duplicate ROW field %q", where, f.Name)
			}
			seen[f.Name] = true
			ft, err := compileType(&f.Type, where+"."+f.Name, names)
			if err != nil {
				return nil, err
			}
			*names = append(*names, f.Name)
			t.fields[i] = field{name: f.Name, quoted: quote(f.Name), nameID: int32(len(*names) - 1), t: ft}
		}
		if len(t.fields) >= rowFieldMapThreshold {
			t.fieldIdx = make(map[string]int, len(t.fields))
			for i, f := range t.fields {
				t.fieldIdx[f.name] = i
			}
		}
	default:
		return nil, fmt.Errorf("%s: unsupported data type %q", where, dt.Root)
	}
	return t, nil
}

// column is a compiled top-level column.
type column struct {
	name    string
	quoted  string // the name as a JSON string, compared before unquoting
	match   quotedMatcher
	t       *typ
	pk      bool
	autoInc bool
}

// TableSpec describes the table a Codec decodes for.
type TableSpec struct {
	// Columns are the table's columns in schema order; decoded rows have one
	// Datum per column, by position.
	Columns []domain.Column
	// PrimaryKey names the primary-key columns in key order. Empty means a
	// log table (append only, no lookups).
	PrimaryKey []string
	// AutoIncrementColumns are primary-key-table columns whose value Fluss
	// assigns; writes must not carry values for them.
	AutoIncrementColumns []string
}

// Codec is the compiled JSON codec of one table schema. It is immutable and
// safe for concurrent use; build it once per (table, schema id) and cache it.
type Codec struct {
	cols []column
	// names holds the column names (by position) followed by every nested
	// ROW field name, so that column paths are ints (see seg).
	names   []string
	byName  map[string]int
	pk      []int // column positions in primary-key order
	autoInc []int
	words   int // 64-bit words of a column bitset
	// writeErr, when set, refuses every write body: a column whose type
	// JSON rows cannot carry (a MAP keyed by ARRAY, MAP or ROW, which the
	// official decoder answers 501 unsupported for). Lookups still work.
	writeErr error
}

// NewCodec compiles spec. It fails with a KindInternal *domain.Error when the
// schema itself is inconsistent (it comes from the cluster, not the caller).
func NewCodec(spec TableSpec) (*Codec, error) {
	c := &Codec{
		cols:   make([]column, len(spec.Columns)),
		byName: make(map[string]int, len(spec.Columns)),
		words:  (len(spec.Columns) + 63) / 64,
	}
	if len(spec.Columns) == 0 {
		return nil, domain.Errorf(domain.KindInternal, "rowjson: table has no columns")
	}
	for i := range spec.Columns {
		c.names = append(c.names, spec.Columns[i].Name)
	}
	for i := range spec.Columns {
		col := &spec.Columns[i]
		if _, dup := c.byName[col.Name]; dup {
			return nil, domain.Errorf(domain.KindInternal, "rowjson: duplicate column %q", col.Name)
		}
		t, err := compileType(&col.Type, col.Name, &c.names)
		if err != nil {
			return nil, &domain.Error{Kind: domain.KindInternal, Message: "rowjson: " + err.Error(), Cause: err}
		}
		if c.writeErr == nil && t.complexMapKey() {
			c.writeErr = domain.Errorf(domain.KindUnsupported,
				"column `%s`: JSON rows do not support ARRAY, MAP or ROW values as MAP keys", col.Name)
		}
		q := quote(col.Name)
		c.cols[i] = column{name: col.Name, quoted: q, match: newQuotedMatcher(q), t: t}
		c.byName[col.Name] = i
	}
	for _, name := range spec.PrimaryKey {
		i, ok := c.byName[name]
		if !ok {
			return nil, domain.Errorf(domain.KindInternal, "rowjson: primary-key column %q is not a column", name)
		}
		if c.cols[i].pk {
			return nil, domain.Errorf(domain.KindInternal, "rowjson: primary-key column %q listed twice", name)
		}
		c.cols[i].pk = true
		c.pk = append(c.pk, i)
	}
	for _, name := range spec.AutoIncrementColumns {
		i, ok := c.byName[name]
		if !ok {
			return nil, domain.Errorf(domain.KindInternal, "rowjson: auto-increment column %q is not a column", name)
		}
		if c.cols[i].pk {
			return nil, domain.Errorf(domain.KindInternal, "rowjson: auto-increment column %q is a primary-key column", name)
		}
		c.cols[i].autoInc = true
		c.autoInc = append(c.autoInc, i)
	}
	return c, nil
}

// complexMapKey reports whether t is or holds a MAP whose key type is an
// ARRAY, MAP or ROW.
func (t *typ) complexMapKey() bool {
	switch t.kind {
	case kArray:
		return t.elem.complexMapKey()
	case kMap:
		switch t.key.kind {
		case kArray, kMap, kRow:
			return true
		}
		return t.val.complexMapKey()
	case kRow:
		for i := range t.fields {
			if t.fields[i].t.complexMapKey() {
				return true
			}
		}
	}
	return false
}

// IsPrimaryKeyTable reports whether the table has a primary key.
func (c *Codec) IsPrimaryKeyTable() bool { return len(c.pk) > 0 }

// columnIndex returns the position of the column called name, or -1. hint is
// tried first: clients usually send columns in schema order.
func (c *Codec) columnIndex(name []byte, hint int) int {
	if uint(hint) < uint(len(c.cols)) && c.cols[hint].name == string(name) {
		return hint
	}
	if i, ok := c.byName[string(name)]; ok {
		return i
	}
	return -1
}

// quote returns name as jsontext writes a JSON string: the spelling clients
// almost always use, so raw member names can be matched without unquoting.
func quote(name string) string {
	b, _ := jsontext.AppendQuote(nil, name)
	return string(b)
}
