package domain

// Genuine domain rules of Fluss schemas and tables, independent of any wire
// format: field ids (AssignFieldIDs), the NOT NULL primary key and schema
// normalisation (NormalizeSchema), default bucket keys (DefaultBucketKeys)
// and the Fluss type names. The Fluss JSON forms of these types live in the
// Fluss adapter (adapters/fluss/serde); the REST JSON in the HTTP adapter.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Field paths named in the messages of the rules below (the member names of
// the request and of Fluss's schema alike).
const (
	keyColumns     = "columns"
	keyDataType    = "data_type"
	keyID          = "id"
	keyElementType = "element_type"
	keyKeyType     = "key_type"
	keyValueType   = "value_type"
	keyFields      = "fields"
	keyFieldType   = "field_type"
	keyFieldID     = "field_id"
)

// UnassignedFieldID is the value of Column.ID and DataField.FieldID before
// Fluss ids are assigned (apache/fluss: Schema.Column.UNKNOWN_COLUMN_ID).
const UnassignedFieldID int32 = -1

// MaxTypeNesting bounds how deeply ARRAY, MAP and ROW types may nest. Fluss has
// no such limit of its own; the gateway imposes one so that hostile input
// cannot exhaust the stack.
const MaxTypeNesting = 64

// typeAliases maps names that other systems use to the Fluss spelling, only to
// make the error for an unknown type name more helpful.
var typeAliases = map[string]TypeRoot{
	"INT":           TypeInteger,
	"VARCHAR":       TypeString,
	"VARBINARY":     TypeBytes,
	"TIME":          TypeTime,
	"TIMESTAMP":     TypeTimestampNTZ,
	"TIMESTAMP_NTZ": TypeTimestampNTZ,
	"TIMESTAMP_LTZ": TypeTimestampLTZ,
}

// knownRoots lists every TypeRoot.
var knownRoots = []TypeRoot{
	TypeBoolean, TypeTinyInt, TypeSmallInt, TypeInteger, TypeBigInt, TypeFloat,
	TypeDouble, TypeDecimal, TypeChar, TypeString, TypeBinary, TypeBytes, TypeDate,
	TypeTime, TypeTimestampNTZ, TypeTimestampLTZ, TypeArray, TypeMap, TypeRow,
}

// UnknownTypeMessage explains an unknown type name, suggesting the Fluss
// spelling for a name in the wrong case or from another vocabulary.
func UnknownTypeMessage(name string) string {
	msg := fmt.Sprintf("unknown data type %q", name)
	upper := strings.ToUpper(name)
	if alias, known := typeAliases[upper]; known {
		return msg + fmt.Sprintf(" (Fluss spells it %s)", alias)
	}
	if slices.Contains(knownRoots, TypeRoot(upper)) {
		return msg + fmt.Sprintf(" (Fluss spells it %s)", upper)
	}
	return msg
}

// AssignFieldIDs returns a deep copy of s with Fluss field ids, as the Java
// client's Schema.Builder sets them before CreateTable (apache/fluss:
// metadata/Schema.java, types/ReassignFieldId.java; the coordinator keeps the
// ids it receives and assigns none).
//
// When no column has an id (every Column.ID is UnassignedFieldID), ids are
// handed out pre-order from 0: each column takes the next id, then the fields
// of a ROW in its type take the following ids, depth first (a ROW inside an
// ARRAY or MAP included); any nested FieldID in s is replaced. HighestFieldID
// becomes the last id handed out.
//
// When every column has an id, the ids are kept, nested ones included, and
// HighestFieldID becomes the larger of s.HighestFieldID and the largest id
// (a schema without columns keeps its HighestFieldID).
//
// It fails with KindInvalidArgument when only some columns have ids, or when
// two ids (nested ones included) are equal.
func AssignFieldIDs(s Schema) (Schema, error) {
	out := cloneSchema(s)
	set := 0
	for _, c := range out.Columns {
		if c.ID != UnassignedFieldID {
			set++
		}
	}
	switch {
	case len(out.Columns) > 0 && set == 0:
		next := int32(-1)
		for i := range out.Columns {
			next++
			out.Columns[i].ID = next
			if err := reassignNested(&out.Columns[i].Type, &next, indexPath(keyColumns, i)+"."+keyDataType, 0); err != nil {
				return Schema{}, err
			}
		}
		out.HighestFieldID = next
		return out, nil
	case set == len(out.Columns):
		highest, err := CheckFieldIDs(out.Columns)
		if err != nil {
			return Schema{}, err
		}
		if len(out.Columns) > 0 {
			out.HighestFieldID = max(out.HighestFieldID, highest)
		}
		return out, nil
	default:
		return Schema{}, MixedFieldIDsError(out.Columns, keyColumns)
	}
}

// MixedFieldIDsError reports the first column whose id state (assigned or not)
// differs from the first column's.
func MixedFieldIDsError(cols []Column, path string) *Error {
	first := cols[0].ID == UnassignedFieldID
	for i, c := range cols {
		if (c.ID == UnassignedFieldID) != first {
			return fieldErrorf(joinPath(indexPath(path, i), keyID), "either every column has an id or none has")
		}
	}
	return fieldErrorf(path, "either every column has an id or none has")
}

// reassignNested gives the ROW fields inside t fresh pre-order ids.
func reassignNested(t *DataType, next *int32, path string, depth int) error {
	if depth > MaxTypeNesting {
		return fieldErrorf(path, "data types nest deeper than %d levels", MaxTypeNesting)
	}
	switch t.Root {
	case TypeArray:
		if t.Element != nil {
			return reassignNested(t.Element, next, joinPath(path, keyElementType), depth+1)
		}
	case TypeMap:
		if t.Key != nil {
			if err := reassignNested(t.Key, next, joinPath(path, keyKeyType), depth+1); err != nil {
				return err
			}
		}
		if t.Value != nil {
			return reassignNested(t.Value, next, joinPath(path, keyValueType), depth+1)
		}
	case TypeRow:
		for i := range t.Fields {
			*next++
			t.Fields[i].FieldID = *next
			fpath := joinPath(indexPath(joinPath(path, keyFields), i), keyFieldType)
			if err := reassignNested(&t.Fields[i].Type, next, fpath, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckFieldIDs verifies that column ids and nested field ids are pairwise
// distinct, as Schema.checkFieldIds does, and returns the largest (-1 when
// there is none).
func CheckFieldIDs(cols []Column) (int32, error) {
	seen := make(map[int32]string)
	highest := int32(-1)
	var visit func(t *DataType, path string, depth int) error
	add := func(id int32, path string) error {
		if prev, dup := seen[id]; dup {
			return fieldErrorf(path, "field id %d is already used by %s", id, prev)
		}
		seen[id] = path
		highest = max(highest, id)
		return nil
	}
	visit = func(t *DataType, path string, depth int) error {
		if depth > MaxTypeNesting {
			return fieldErrorf(path, "data types nest deeper than %d levels", MaxTypeNesting)
		}
		switch t.Root {
		case TypeArray:
			if t.Element != nil {
				return visit(t.Element, joinPath(path, keyElementType), depth+1)
			}
		case TypeMap:
			if t.Key != nil {
				if err := visit(t.Key, joinPath(path, keyKeyType), depth+1); err != nil {
					return err
				}
			}
			if t.Value != nil {
				return visit(t.Value, joinPath(path, keyValueType), depth+1)
			}
		case TypeRow:
			for i := range t.Fields {
				fpath := indexPath(joinPath(path, keyFields), i)
				if err := add(t.Fields[i].FieldID, joinPath(fpath, keyFieldID)); err != nil {
					return err
				}
				if err := visit(&t.Fields[i].Type, joinPath(fpath, keyFieldType), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i := range cols {
		cpath := indexPath(keyColumns, i)
		if err := add(cols[i].ID, joinPath(cpath, keyID)); err != nil {
			return 0, err
		}
		if err := visit(&cols[i].Type, joinPath(cpath, keyDataType), 0); err != nil {
			return 0, err
		}
	}
	return highest, nil
}

// NormalizeSchema applies the Java Schema.Builder normalisation: field ids and
// NOT NULL primary-key columns.
func NormalizeSchema(s Schema) (Schema, error) {
	ns, err := AssignFieldIDs(s)
	if err != nil {
		return Schema{}, err
	}
	ForcePrimaryKeyNotNull(&ns)
	return ns, nil
}

// ForcePrimaryKeyNotNull makes every primary-key column NOT NULL, as Fluss
// does for every schema it builds or reads.
func ForcePrimaryKeyNotNull(s *Schema) {
	if len(s.PrimaryKey) == 0 {
		return
	}
	for i := range s.Columns {
		if slices.Contains(s.PrimaryKey, s.Columns[i].Name) {
			s.Columns[i].Type.Nullable = false
		}
	}
}

// DefaultBucketKeys returns the bucket keys Fluss gives a primary-key table
// that declares none: the primary-key columns that are not partition keys, in
// primary-key order (apache/fluss: TableDescriptor#defaultBucketKeyOfPrimaryKeyTable).
// The result is empty when every primary-key column is a partition key.
func DefaultBucketKeys(primaryKey, partitionKeys []string) []string {
	keys := make([]string, 0, len(primaryKey))
	for _, k := range primaryKey {
		if !slices.Contains(partitionKeys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

func cloneSchema(s Schema) Schema {
	out := Schema{
		PrimaryKey:          slices.Clone(s.PrimaryKey),
		AutoIncrementColumn: slices.Clone(s.AutoIncrementColumn),
		HighestFieldID:      s.HighestFieldID,
	}
	if s.Columns != nil {
		out.Columns = make([]Column, len(s.Columns))
		for i, c := range s.Columns {
			c.Type = cloneDataType(c.Type, 0)
			out.Columns[i] = c
		}
	}
	return out
}

// cloneDataType deep-copies t. Past MaxTypeNesting it stops copying (and
// shares the rest); every walker rejects such types anyway.
func cloneDataType(t DataType, depth int) DataType {
	if depth > MaxTypeNesting+1 {
		return t
	}
	out := t
	if t.Element != nil {
		e := cloneDataType(*t.Element, depth+1)
		out.Element = &e
	}
	if t.Key != nil {
		k := cloneDataType(*t.Key, depth+1)
		out.Key = &k
	}
	if t.Value != nil {
		v := cloneDataType(*t.Value, depth+1)
		out.Value = &v
	}
	if t.Fields != nil {
		out.Fields = make([]DataField, len(t.Fields))
		for i, f := range t.Fields {
			f.Type = cloneDataType(f.Type, depth+1)
			out.Fields[i] = f
		}
	}
	return out
}

func joinPath(base, key string) string {
	if base == "" {
		return key
	}
	return base + "." + key
}

func indexPath(base string, i int) string {
	return base + "[" + strconv.Itoa(i) + "]"
}

// fieldErrorf builds a KindInvalidArgument *Error whose message is
// "path: reason" (or only the reason at the root).
func fieldErrorf(path, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	return &Error{Kind: KindInvalidArgument, Message: msg}
}
