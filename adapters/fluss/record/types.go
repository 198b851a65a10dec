package record

import (
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// kind is a column's encoding class, resolved once from its domain.DataType so
// that the per-row hot path switches on a small integer.
type kind uint8

const (
	kindBoolean          kind = iota + 1
	kindTinyInt               // TINYINT
	kindSmallInt              // SMALLINT
	kindInt                   // INTEGER, DATE, TIME_WITHOUT_TIME_ZONE (BinaryWriter: all three are writeInt)
	kindBigInt                // BIGINT
	kindFloat                 // FLOAT
	kindDouble                // DOUBLE
	kindDecimalCompact        // DECIMAL with precision <= 18 (Decimal.isCompact)
	kindDecimal               // DECIMAL with precision > 18
	kindChar                  // CHAR(n)
	kindString                // STRING
	kindBinary                // BINARY(n)
	kindBytes                 // BYTES
	kindTimestampCompact      // TIMESTAMP / TIMESTAMP_LTZ with precision <= 3 (TimestampNtz.isCompact)
	kindTimestamp             // TIMESTAMP / TIMESTAMP_LTZ with precision > 3
	kindArray                 // ARRAY<elem>
	kindMap                   // MAP<elem, value>
	kindRow                   // ROW<fields...>
)

// Bounds Fluss puts on types (types/DecimalType.java, TimestampType.java).
const (
	maxCompactPrecision = 18 // Decimal.MAX_COMPACT_PRECISION
	maxDecimalPrecision = 38 // DecimalType.MAX_PRECISION
	maxCompactTimestamp = 3  // TimestampNtz/TimestampLtz.isCompact
	maxTimestampPrec    = 9
	maxTypeDepth        = 64 // guards against cyclic DataType pointers
)

// column is the compiled form of a domain.DataType.
type column struct {
	kind     kind
	root     domain.TypeRoot
	nullable bool
	length   int      // CHAR(n) / BINARY(n)
	elem     *column  // ARRAY element type, MAP key type
	value    *column  // MAP value type
	fields   []column // ROW field types
	// nullBytes is the CompactedRow / IndexedRow null bitmap size of a ROW:
	// ceil(len(fields)/8) (CompactedRow.calculateBitSetWidthInBytes).
	nullBytes int
	// varFields is, for a ROW, the number of fields that take a slot in the
	// IndexedRow variable-length list (IndexedRow.isFixedLength is false).
	varFields int
}

// compileRow compiles the column types of a row.
func compileRow(types []domain.DataType) (column, error) {
	c := column{kind: kindRow, root: domain.TypeRow, nullable: false}
	if err := c.compileFields(types, 0); err != nil {
		return column{}, err
	}
	return c, nil
}

func (c *column) compileFields(types []domain.DataType, depth int) error {
	c.fields = make([]column, len(types))
	for i := range types {
		f, err := compile(&types[i], depth+1)
		if err != nil {
			return prefixError(err, "field %d", i)
		}
		c.fields[i] = f
		if !f.indexedFixed() {
			c.varFields++
		}
	}
	c.nullBytes = (len(types) + 7) / 8
	return nil
}

// compile resolves one DataType, recursively.
func compile(t *domain.DataType, depth int) (column, error) {
	if depth > maxTypeDepth {
		return column{}, invalidSchema("type nesting deeper than %d", maxTypeDepth)
	}
	c := column{root: t.Root, nullable: t.Nullable, length: t.Length}
	switch t.Root {
	case domain.TypeBoolean:
		c.kind = kindBoolean
	case domain.TypeTinyInt:
		c.kind = kindTinyInt
	case domain.TypeSmallInt:
		c.kind = kindSmallInt
	case domain.TypeInteger, domain.TypeDate, domain.TypeTime:
		c.kind = kindInt
	case domain.TypeBigInt:
		c.kind = kindBigInt
	case domain.TypeFloat:
		c.kind = kindFloat
	case domain.TypeDouble:
		c.kind = kindDouble
	case domain.TypeDecimal:
		if t.Precision < 1 || t.Precision > maxDecimalPrecision {
			return column{}, invalidSchema("DECIMAL precision %d outside 1..%d", t.Precision, maxDecimalPrecision)
		}
		if t.Scale < 0 || t.Scale > t.Precision {
			return column{}, invalidSchema("DECIMAL scale %d outside 0..%d", t.Scale, t.Precision)
		}
		if t.Precision <= maxCompactPrecision {
			c.kind = kindDecimalCompact
		} else {
			c.kind = kindDecimal
		}
	case domain.TypeChar:
		c.kind = kindChar
	case domain.TypeString:
		c.kind = kindString
	case domain.TypeBinary:
		c.kind = kindBinary
	case domain.TypeBytes:
		c.kind = kindBytes
	case domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		if t.Precision < 0 || t.Precision > maxTimestampPrec {
			return column{}, invalidSchema("%s precision %d outside 0..%d", t.Root, t.Precision, maxTimestampPrec)
		}
		if t.Precision <= maxCompactTimestamp {
			c.kind = kindTimestampCompact
		} else {
			c.kind = kindTimestamp
		}
	case domain.TypeArray:
		if t.Element == nil {
			return column{}, invalidSchema("ARRAY without element type")
		}
		e, err := compile(t.Element, depth+1)
		if err != nil {
			return column{}, prefixError(err, "element type")
		}
		c.kind, c.elem = kindArray, &e
	case domain.TypeMap:
		if t.Key == nil || t.Value == nil {
			return column{}, invalidSchema("MAP without key or value type")
		}
		k, err := compile(t.Key, depth+1)
		if err != nil {
			return column{}, prefixError(err, "key type")
		}
		v, err := compile(t.Value, depth+1)
		if err != nil {
			return column{}, prefixError(err, "value type")
		}
		c.kind, c.elem, c.value = kindMap, &k, &v
	case domain.TypeRow:
		types := make([]domain.DataType, len(t.Fields))
		for i := range t.Fields {
			types[i] = t.Fields[i].Type
		}
		c.kind = kindRow
		if err := c.compileFields(types, depth); err != nil {
			return column{}, err
		}
	default:
		return column{}, unsupported("data type %q", t.Root)
	}
	return c, nil
}

// indexedFixed reports whether the type has a fixed width inside an IndexedRow
// (IndexedRow.isFixedLength): everything but STRING, BYTES, non-compact
// DECIMAL, ARRAY, MAP and ROW.
func (c *column) indexedFixed() bool {
	switch c.kind {
	case kindString, kindBytes, kindDecimal, kindArray, kindMap, kindRow:
		return false
	default:
		return true
	}
}

// arrayWidth is the fixed slot width of an element of this type in a
// BinaryArray (BinaryArray.calculateFixLengthPartSize).
func (c *column) arrayWidth() int {
	switch c.kind {
	case kindBoolean, kindTinyInt:
		return 1
	case kindSmallInt:
		return 2
	case kindInt, kindFloat:
		return 4
	default:
		return 8
	}
}

// checkIndexed validates what only the IndexedRow layout needs: CHAR and
// BINARY lengths, which fix the width of their slots.
func (c *column) checkIndexed() error {
	switch c.kind {
	case kindChar, kindBinary:
		if c.length < 1 {
			return invalidSchema("%s length %d, must be at least 1 in an IndexedRow", c.root, c.length)
		}
	case kindArray:
		return c.elem.checkIndexed()
	case kindMap:
		if err := c.elem.checkIndexed(); err != nil {
			return err
		}
		return c.value.checkIndexed()
	case kindRow:
		for i := range c.fields {
			if err := c.fields[i].checkIndexed(); err != nil {
				return prefixError(err, "field %d", i)
			}
		}
	}
	return nil
}

// String renders the type for messages, e.g. ARRAY<INTEGER>.
func (c *column) String() string {
	switch c.kind {
	case kindArray:
		return "ARRAY<" + c.elem.String() + ">"
	case kindMap:
		return "MAP<" + c.elem.String() + ", " + c.value.String() + ">"
	case kindRow:
		parts := make([]string, len(c.fields))
		for i := range c.fields {
			parts[i] = c.fields[i].String()
		}
		return "ROW<" + strings.Join(parts, ", ") + ">"
	default:
		return string(c.root)
	}
}
