package serde

// This file holds the Fluss JSON forms of DataType, Schema, TableDescriptor
// and DatabaseDescriptor: the payloads carried in the `table_json`,
// `schema_json`, `database_json` and `data_type_json` fields of Fluss RPCs.
//
// Writers produce the bytes the Fluss 0.9.1 Java client produces for the same
// definition (apache/fluss: fluss-common/src/main/java/org/apache/fluss/utils/
// json/{DataTypeJsonSerde,ColumnJsonSerde,SchemaJsonSerde,
// TableDescriptorJsonSerde,DatabaseDescriptorJsonSerde}.java): the same key
// order, the same optional keys, Jackson's string escaping, and the same
// normalisation that the Java builders apply before serialising (column ids,
// NOT NULL primary-key columns and map keys, default bucket keys).
//
// Readers accept what the Java readers accept, with these deliberate
// differences: value types are checked strictly (Jackson would coerce a number
// where a string is expected, or the text "3" where an int is); missing type
// parameters take the defaults of the Java type constructors (Java fails with
// a NullPointerException); a JSON null comment or description counts as absent
// (Java reads the text "null"); data after the document is an error. Readers
// check structure only; the semantic checks that the Java constructors run on
// read (primary-key columns exist, bucket keys fit, ...) are left to
// ValidateTableDescriptor.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Parameter defaults of the Fluss type constructors, used when a type's JSON
// omits its parameter (apache/fluss: fluss-common/.../types/DecimalType.java,
// CharType.java, BinaryType.java, TimeType.java, TimestampType.java,
// LocalZonedTimestampType.java).
const (
	DefaultDecimalPrecision   = 10
	DefaultDecimalScale       = 0
	DefaultCharLength         = 1
	DefaultBinaryLength       = 1
	DefaultTimePrecision      = 0
	DefaultTimestampPrecision = 6
)

// The version number Fluss writes into schema, table and database JSON.
const flussJSONVersion = 1

// Fluss JSON keys (apache/fluss: utils/json/*JsonSerde.java).
const (
	keyType             = "type"
	keyNullable         = "nullable"
	keyLength           = "length"
	keyPrecision        = "precision"
	keyScale            = "scale"
	keyElementType      = "element_type"
	keyKeyType          = "key_type"
	keyValueType        = "value_type"
	keyFields           = "fields"
	keyName             = "name"
	keyFieldType        = "field_type"
	keyDescription      = "description"
	keyFieldID          = "field_id"
	keyDataType         = "data_type"
	keyComment          = "comment"
	keyID               = "id"
	keyColumns          = "columns"
	keyPrimaryKey       = "primary_key"
	keyAutoIncrement    = "auto_increment_column"
	keyHighestFieldID   = "highest_field_id"
	keySchema           = "schema"
	keyPartitionKey     = "partition_key"
	keyBucketKey        = "bucket_key"
	keyBucketCount      = "bucket_count"
	keyProperties       = "properties"
	keyCustomProperties = "custom_properties"
)

// ---------------------------------------------------------------------------
// DataType
// ---------------------------------------------------------------------------

// MarshalDataTypeJSON writes t in Fluss's DataType JSON form
// (apache/fluss: utils/json/DataTypeJsonSerde.java): `type`, then
// `"nullable":false` only for NOT NULL types, then the root's parameters
// (`length`; `precision` and `scale`; `precision`; `element_type`;
// `key_type` and `value_type`; `fields`, each `name`, `field_type`,
// optional `description`, `field_id`). A MAP key is always written NOT NULL,
// as Fluss's MapType forces it. Parameters are written as they are, without
// range checks (see ValidateDataType). It fails for an unknown root, a
// missing element, key or value type, or nesting deeper than MaxTypeNesting.
//
// The bytes are Jackson-compatible (the `data_type_json` of an added column).
func MarshalDataTypeJSON(t domain.DataType) ([]byte, error) {
	return appendDataType(nil, &t, "", 0)
}

// UnmarshalDataTypeJSON reads Fluss's DataType JSON form
// (apache/fluss: utils/json/DataTypeJsonSerde.java). A missing `nullable`
// means nullable; missing parameters take the Fluss type defaults
// (DECIMAL(10, 0), CHAR(1), BINARY(1), TIME(0), TIMESTAMP(6)); a missing
// `field_id` is UnassignedFieldID; a MAP key becomes NOT NULL. Unknown keys
// are ignored. Errors are *Error values of
// KindInvalidArgument whose message starts with the offending key's path,
// for example `element_type.type: unknown data type "INT"`.
func UnmarshalDataTypeJSON(data []byte) (domain.DataType, error) {
	v, err := parseJSONTree(data)
	if err != nil {
		return domain.DataType{}, err
	}
	return decodeDataType(v, "", 0)
}

func appendDataType(b []byte, t *domain.DataType, path string, depth int) ([]byte, error) {
	if depth > domain.MaxTypeNesting {
		return nil, jsonErrorf(path, "data types nest deeper than %d levels", domain.MaxTypeNesting)
	}
	b = append(b, `{"type":`...)
	b = appendJSONString(b, string(t.Root))
	if !t.Nullable {
		b = append(b, `,"nullable":false`...)
	}
	var err error
	switch t.Root {
	case domain.TypeBoolean, domain.TypeTinyInt, domain.TypeSmallInt, domain.TypeInteger, domain.TypeBigInt,
		domain.TypeFloat, domain.TypeDouble, domain.TypeDate, domain.TypeBytes, domain.TypeString:
		// No parameters.
	case domain.TypeChar, domain.TypeBinary:
		b = appendIntField(b, keyLength, int64(t.Length))
	case domain.TypeDecimal:
		b = appendIntField(b, keyPrecision, int64(t.Precision))
		b = appendIntField(b, keyScale, int64(t.Scale))
	case domain.TypeTime, domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		b = appendIntField(b, keyPrecision, int64(t.Precision))
	case domain.TypeArray:
		if t.Element == nil {
			return nil, jsonErrorf(joinPath(path, keyElementType), "ARRAY needs an element type")
		}
		b = append(b, `,"element_type":`...)
		if b, err = appendDataType(b, t.Element, joinPath(path, keyElementType), depth+1); err != nil {
			return nil, err
		}
	case domain.TypeMap:
		if t.Key == nil {
			return nil, jsonErrorf(joinPath(path, keyKeyType), "MAP needs a key type")
		}
		if t.Value == nil {
			return nil, jsonErrorf(joinPath(path, keyValueType), "MAP needs a value type")
		}
		key := *t.Key
		key.Nullable = false // Fluss's MapType forces NOT NULL keys.
		b = append(b, `,"key_type":`...)
		if b, err = appendDataType(b, &key, joinPath(path, keyKeyType), depth+1); err != nil {
			return nil, err
		}
		b = append(b, `,"value_type":`...)
		if b, err = appendDataType(b, t.Value, joinPath(path, keyValueType), depth+1); err != nil {
			return nil, err
		}
	case domain.TypeRow:
		b = append(b, `,"fields":[`...)
		for i := range t.Fields {
			f := &t.Fields[i]
			fpath := indexPath(joinPath(path, keyFields), i)
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendJSONString(b, f.Name)
			b = append(b, `,"field_type":`...)
			if b, err = appendDataType(b, &f.Type, joinPath(fpath, keyFieldType), depth+1); err != nil {
				return nil, err
			}
			if f.Description != "" {
				b = append(b, `,"description":`...)
				b = appendJSONString(b, f.Description)
			}
			b = appendIntField(b, keyFieldID, int64(f.FieldID))
			b = append(b, '}')
		}
		b = append(b, ']')
	default:
		return nil, jsonErrorf(joinPath(path, keyType), "unsupported data type %q", string(t.Root))
	}
	return append(b, '}'), nil
}

func decodeDataType(v any, path string, depth int) (domain.DataType, error) {
	if depth > domain.MaxTypeNesting {
		return domain.DataType{}, jsonErrorf(path, "data types nest deeper than %d levels", domain.MaxTypeNesting)
	}
	obj, err := asObject(v, path)
	if err != nil {
		return domain.DataType{}, err
	}
	name, ok, err := optString(obj, keyType, path)
	if err != nil {
		return domain.DataType{}, err
	}
	if !ok {
		return domain.DataType{}, jsonErrorf(joinPath(path, keyType), "missing")
	}
	t := domain.DataType{Root: domain.TypeRoot(name), Nullable: true}
	if nv, present := obj[keyNullable]; present {
		b, isBool := nv.(bool)
		if !isBool {
			return domain.DataType{}, jsonErrorf(joinPath(path, keyNullable), "must be a boolean")
		}
		t.Nullable = b
	}
	switch t.Root {
	case domain.TypeBoolean, domain.TypeTinyInt, domain.TypeSmallInt, domain.TypeInteger, domain.TypeBigInt,
		domain.TypeFloat, domain.TypeDouble, domain.TypeDate, domain.TypeBytes, domain.TypeString:
	case domain.TypeChar:
		t.Length, err = intParam(obj, keyLength, path, DefaultCharLength)
	case domain.TypeBinary:
		t.Length, err = intParam(obj, keyLength, path, DefaultBinaryLength)
	case domain.TypeDecimal:
		if t.Precision, err = intParam(obj, keyPrecision, path, DefaultDecimalPrecision); err == nil {
			t.Scale, err = intParam(obj, keyScale, path, DefaultDecimalScale)
		}
	case domain.TypeTime:
		t.Precision, err = intParam(obj, keyPrecision, path, DefaultTimePrecision)
	case domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		t.Precision, err = intParam(obj, keyPrecision, path, DefaultTimestampPrecision)
	case domain.TypeArray:
		t.Element, err = childType(obj, keyElementType, path, depth)
	case domain.TypeMap:
		if t.Key, err = childType(obj, keyKeyType, path, depth); err == nil {
			t.Key.Nullable = false // Fluss's MapType forces NOT NULL keys.
			t.Value, err = childType(obj, keyValueType, path, depth)
		}
	case domain.TypeRow:
		t.Fields, err = decodeRowFields(obj, path, depth)
	default:
		return domain.DataType{}, jsonErrorf(joinPath(path, keyType), "%s", domain.UnknownTypeMessage(name))
	}
	if err != nil {
		return domain.DataType{}, err
	}
	return t, nil
}

func childType(obj map[string]any, key, path string, depth int) (*domain.DataType, error) {
	v, ok := obj[key]
	if !ok {
		return nil, jsonErrorf(joinPath(path, key), "missing")
	}
	t, err := decodeDataType(v, joinPath(path, key), depth+1)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

func decodeRowFields(obj map[string]any, path string, depth int) ([]domain.DataField, error) {
	fpath := joinPath(path, keyFields)
	raw, ok := obj[keyFields]
	if !ok {
		return nil, jsonErrorf(fpath, "missing")
	}
	items, isArray := raw.([]any)
	if !isArray {
		return nil, jsonErrorf(fpath, "must be an array")
	}
	fields := make([]domain.DataField, 0, len(items))
	for i, item := range items {
		ipath := indexPath(fpath, i)
		fo, err := asObject(item, ipath)
		if err != nil {
			return nil, err
		}
		name, ok, err := optString(fo, keyName, ipath)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, jsonErrorf(joinPath(ipath, keyName), "missing")
		}
		ft, present := fo[keyFieldType]
		if !present {
			return nil, jsonErrorf(joinPath(ipath, keyFieldType), "missing")
		}
		typ, err := decodeDataType(ft, joinPath(ipath, keyFieldType), depth+1)
		if err != nil {
			return nil, err
		}
		desc, _, err := optString(fo, keyDescription, ipath)
		if err != nil {
			return nil, err
		}
		id, ok, err := optInt32(fo, keyFieldID, ipath)
		if err != nil {
			return nil, err
		}
		if !ok {
			id = domain.UnassignedFieldID
		}
		fields = append(fields, domain.DataField{Name: name, Type: typ, Description: desc, FieldID: id})
	}
	return fields, nil
}

// ---------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------

// MarshalSchemaJSON writes s in Fluss's Schema JSON form (apache/fluss:
// utils/json/SchemaJsonSerde.java, ColumnJsonSerde.java): `version` 1,
// `columns` (each `name`, `data_type`, optional `comment`, `id`),
// `primary_key` and `auto_increment_column` only when not empty, then
// `highest_field_id`.
//
// Before writing it applies what the Java Schema.Builder applies: field ids
// as AssignFieldIDs assigns them, and NOT NULL on primary-key columns. It fails
// with a KindInvalidArgument *Error when AssignFieldIDs does or a type cannot
// be written (see MarshalDataTypeJSON).
func MarshalSchemaJSON(s domain.Schema) ([]byte, error) {
	return appendSchema(nil, s, "")
}

func appendSchema(b []byte, s domain.Schema, path string) ([]byte, error) {
	ns, err := domain.NormalizeSchema(s)
	if err != nil {
		return nil, prefixError(path, err)
	}
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, flussJSONVersion, 10)
	b = append(b, `,"columns":[`...)
	for i := range ns.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendColumn(b, &ns.Columns[i], joinPath(path, indexPath(keyColumns, i))); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	if len(ns.PrimaryKey) > 0 {
		b = append(b, `,"primary_key":`...)
		b = appendStringArray(b, ns.PrimaryKey)
	}
	if len(ns.AutoIncrementColumn) > 0 {
		b = append(b, `,"auto_increment_column":`...)
		b = appendStringArray(b, ns.AutoIncrementColumn)
	}
	b = appendIntField(b, keyHighestFieldID, int64(ns.HighestFieldID))
	return append(b, '}'), nil
}

// appendColumn writes one column as ColumnJsonSerde does: `name`,
// `data_type`, `comment` when not empty, `id`.
func appendColumn(b []byte, c *domain.Column, path string) ([]byte, error) {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, c.Name)
	b = append(b, `,"data_type":`...)
	b, err := appendDataType(b, &c.Type, joinPath(path, keyDataType), 0)
	if err != nil {
		return nil, err
	}
	if c.Comment != "" {
		b = append(b, `,"comment":`...)
		b = appendJSONString(b, c.Comment)
	}
	b = appendIntField(b, keyID, int64(c.ID))
	return append(b, '}'), nil
}

// UnmarshalSchemaJSON reads Fluss's Schema JSON form, as returned by
// GetTableSchema (apache/fluss: utils/json/SchemaJsonSerde.java). It follows
// the Java reader: `columns` is required; `id`s are all present or all absent
// (absent: columns get 0..n-1 and nested field ids stay as written);
// `highest_field_id` defaults to the largest id and must not be smaller than
// any id; ids must be distinct; a present `primary_key` must not be empty;
// primary-key columns and MAP keys become NOT NULL. Column `agg_function`s are
// not represented in Schema and are dropped. Errors are KindInvalidArgument
// *Error values naming the JSON path.
func UnmarshalSchemaJSON(data []byte) (domain.Schema, error) {
	v, err := parseJSONTree(data)
	if err != nil {
		return domain.Schema{}, err
	}
	return decodeSchema(v, "")
}

func decodeSchema(v any, path string) (domain.Schema, error) {
	obj, err := asObject(v, path)
	if err != nil {
		return domain.Schema{}, err
	}
	cpath := joinPath(path, keyColumns)
	raw, ok := obj[keyColumns]
	if !ok {
		return domain.Schema{}, jsonErrorf(cpath, "missing")
	}
	items, isArray := raw.([]any)
	if !isArray {
		return domain.Schema{}, jsonErrorf(cpath, "must be an array")
	}
	var s domain.Schema
	s.Columns = make([]domain.Column, 0, len(items))
	withID := 0
	for i, item := range items {
		col, err := decodeColumn(item, indexPath(cpath, i))
		if err != nil {
			return domain.Schema{}, err
		}
		if col.ID != domain.UnassignedFieldID {
			withID++
		}
		s.Columns = append(s.Columns, col)
	}
	switch {
	case withID == len(s.Columns):
		// Every column has an id (or there are none): keep them all.
	case withID == 0:
		// Schemas written before column ids existed: ids follow positions and
		// nested field ids stay as they are (Schema.Builder#fromColumns).
		for i := range s.Columns {
			s.Columns[i].ID = int32(i)
		}
	default:
		return domain.Schema{}, domain.MixedFieldIDsError(s.Columns, cpath)
	}
	largest, err := domain.CheckFieldIDs(s.Columns)
	if err != nil {
		return domain.Schema{}, prefixError(path, err)
	}
	hpath := joinPath(path, keyHighestFieldID)
	if hv, present := obj[keyHighestFieldID]; present {
		if s.HighestFieldID, err = asInt32(hv, hpath); err != nil {
			return domain.Schema{}, err
		}
		if len(s.Columns) > 0 && s.HighestFieldID < largest {
			return domain.Schema{}, jsonErrorf(hpath, "%d is smaller than the largest field id %d", s.HighestFieldID, largest)
		}
	} else {
		// Java counts only the column ids it hands out in the id-less case.
		s.HighestFieldID = largest
		if withID == 0 && len(s.Columns) > 0 {
			s.HighestFieldID = int32(len(s.Columns) - 1)
			if largest > s.HighestFieldID {
				return domain.Schema{}, jsonErrorf(hpath, "missing, and nested field id %d is larger than the last column id %d",
					largest, s.HighestFieldID)
			}
		}
	}
	pk, present, err := optStringList(obj, keyPrimaryKey, path)
	if err != nil {
		return domain.Schema{}, err
	}
	if present && len(pk) == 0 {
		return domain.Schema{}, jsonErrorf(joinPath(path, keyPrimaryKey), "must name at least one column when present")
	}
	s.PrimaryKey = pk
	if s.AutoIncrementColumn, _, err = optStringList(obj, keyAutoIncrement, path); err != nil {
		return domain.Schema{}, err
	}
	domain.ForcePrimaryKeyNotNull(&s)
	return s, nil
}

func decodeColumn(v any, path string) (domain.Column, error) {
	obj, err := asObject(v, path)
	if err != nil {
		return domain.Column{}, err
	}
	name, ok, err := optString(obj, keyName, path)
	if err != nil {
		return domain.Column{}, err
	}
	if !ok {
		return domain.Column{}, jsonErrorf(joinPath(path, keyName), "missing")
	}
	tv, ok := obj[keyDataType]
	if !ok {
		return domain.Column{}, jsonErrorf(joinPath(path, keyDataType), "missing")
	}
	typ, err := decodeDataType(tv, joinPath(path, keyDataType), 0)
	if err != nil {
		return domain.Column{}, err
	}
	comment, _, err := optString(obj, keyComment, path)
	if err != nil {
		return domain.Column{}, err
	}
	id, ok, err := optInt32(obj, keyID, path)
	if err != nil {
		return domain.Column{}, err
	}
	if !ok {
		id = domain.UnassignedFieldID
	}
	return domain.Column{Name: name, Type: typ, Comment: comment, ID: id}, nil
}

// ---------------------------------------------------------------------------
// TableDescriptor
// ---------------------------------------------------------------------------

// MarshalTableDescriptorJSON writes d in Fluss's TableDescriptor JSON form,
// the `table_json` of CreateTable (apache/fluss:
// utils/json/TableDescriptorJsonSerde.java): `version` 1, `schema` (see
// MarshalSchemaJSON), `comment` when not empty, `partition_key` (always),
// `bucket_key` and `bucket_count` when the table has a distribution, then
// `properties` and `custom_properties` (always, possibly `{}`).
//
// It applies what the Java TableDescriptor applies before serialising: a
// primary-key table always has a distribution, and empty bucket keys become
// the primary key minus the partition keys; a log table has a distribution
// when BucketCount or BucketKeys is set. `bucket_count` is written when
// BucketCount is not 0. Property keys follow java.util.HashMap iteration
// order (see javaHashMapOrder) so that the bytes equal the Java client's.
//
// It fails with a KindInvalidArgument *Error when the schema cannot be
// written or when the primary key has no column besides the partition keys
// (no default bucket key exists). It does not validate; call
// ValidateTableDescriptor first.
func MarshalTableDescriptorJSON(d domain.TableDescriptor) ([]byte, error) {
	schema, err := appendSchema(nil, d.Schema, keySchema)
	if err != nil {
		return nil, err
	}
	bucketKeys, err := effectiveBucketKeys(d)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(schema)+256)
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, flussJSONVersion, 10)
	b = append(b, `,"schema":`...)
	b = append(b, schema...)
	if d.Comment != "" {
		b = append(b, `,"comment":`...)
		b = appendJSONString(b, d.Comment)
	}
	b = append(b, `,"partition_key":`...)
	b = appendStringArray(b, d.PartitionKeys)
	if len(d.Schema.PrimaryKey) > 0 || d.BucketCount != 0 || len(bucketKeys) > 0 {
		b = append(b, `,"bucket_key":`...)
		b = appendStringArray(b, bucketKeys)
		if d.BucketCount != 0 {
			b = appendIntField(b, keyBucketCount, int64(d.BucketCount))
		}
	}
	b = append(b, `,"properties":`...)
	b = appendStringMap(b, d.Properties)
	b = append(b, `,"custom_properties":`...)
	b = appendStringMap(b, d.CustomProperties)
	return append(b, '}'), nil
}

// effectiveBucketKeys returns the bucket keys Fluss uses for d: the given ones,
// or for a primary-key table without any, the primary key minus the partition
// keys (apache/fluss: TableDescriptor#normalizeDistribution).
func effectiveBucketKeys(d domain.TableDescriptor) ([]string, error) {
	if len(d.BucketKeys) > 0 || len(d.Schema.PrimaryKey) == 0 {
		return d.BucketKeys, nil
	}
	keys := domain.DefaultBucketKeys(d.Schema.PrimaryKey, d.PartitionKeys)
	if len(keys) == 0 {
		return nil, jsonErrorf(joinPath(keySchema, keyPrimaryKey),
			"the primary key %v has no column besides the partition keys %v", d.Schema.PrimaryKey, d.PartitionKeys)
	}
	return keys, nil
}

// UnmarshalTableDescriptorJSON reads Fluss's TableDescriptor JSON form, as
// carried by GetTableInfo and CreateTable (apache/fluss:
// utils/json/TableDescriptorJsonSerde.java). `schema`, `partition_key`,
// `properties` and `custom_properties` are required; `bucket_key` is required
// when `bucket_count` is present; `version` and unknown keys are ignored.
// Schema rules are those of UnmarshalSchemaJSON. As in Java, a primary-key
// table without bucket keys gets the default ones (see DefaultBucketKeys).
// A `bucket_count` of 0 cannot be told apart from an absent one. The result
// is not validated (see ValidateTableDescriptor). Errors are KindInvalidArgument
// *Error values naming the JSON path; callers decoding a server response
// should report them as backend errors.
func UnmarshalTableDescriptorJSON(data []byte) (domain.TableDescriptor, error) {
	v, err := parseJSONTree(data)
	if err != nil {
		return domain.TableDescriptor{}, err
	}
	obj, err := asObject(v, "")
	if err != nil {
		return domain.TableDescriptor{}, err
	}
	var d domain.TableDescriptor
	sv, ok := obj[keySchema]
	if !ok {
		return domain.TableDescriptor{}, jsonErrorf(keySchema, "missing")
	}
	if d.Schema, err = decodeSchema(sv, keySchema); err != nil {
		return domain.TableDescriptor{}, err
	}
	if d.Comment, _, err = optString(obj, keyComment, ""); err != nil {
		return domain.TableDescriptor{}, err
	}
	pk, present, err := optStringList(obj, keyPartitionKey, "")
	if err != nil {
		return domain.TableDescriptor{}, err
	}
	if !present {
		return domain.TableDescriptor{}, jsonErrorf(keyPartitionKey, "missing")
	}
	d.PartitionKeys = pk
	_, hasKeys := obj[keyBucketKey]
	_, hasCount := obj[keyBucketCount]
	if hasKeys || hasCount {
		if !hasKeys {
			return domain.TableDescriptor{}, jsonErrorf(keyBucketKey, "missing (required with %s)", keyBucketCount)
		}
		if d.BucketKeys, _, err = optStringList(obj, keyBucketKey, ""); err != nil {
			return domain.TableDescriptor{}, err
		}
		if hasCount {
			n, err := asInt32(obj[keyBucketCount], keyBucketCount)
			if err != nil {
				return domain.TableDescriptor{}, err
			}
			d.BucketCount = int(n)
		}
	}
	if len(d.BucketKeys) == 0 && len(d.Schema.PrimaryKey) > 0 {
		if keys := domain.DefaultBucketKeys(d.Schema.PrimaryKey, d.PartitionKeys); len(keys) > 0 {
			d.BucketKeys = keys
		}
	}
	if d.Properties, err = requiredStringMap(obj, keyProperties); err != nil {
		return domain.TableDescriptor{}, err
	}
	if d.CustomProperties, err = requiredStringMap(obj, keyCustomProperties); err != nil {
		return domain.TableDescriptor{}, err
	}
	return d, nil
}

// ---------------------------------------------------------------------------
// DatabaseDescriptor
// ---------------------------------------------------------------------------

// MarshalDatabaseDescriptorJSON writes d in Fluss's DatabaseDescriptor JSON
// form, the `database_json` of CreateDatabase (apache/fluss:
// utils/json/DatabaseDescriptorJsonSerde.java): `version` 1, `comment` when
// not empty, `custom_properties` (always, possibly `{}`) in java.util.HashMap
// iteration order. It does not fail; the error is there for symmetry with
// the other writers.
func MarshalDatabaseDescriptorJSON(d domain.DatabaseDescriptor) ([]byte, error) {
	b := make([]byte, 0, 64)
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, flussJSONVersion, 10)
	if d.Comment != "" {
		b = append(b, `,"comment":`...)
		b = appendJSONString(b, d.Comment)
	}
	b = append(b, `,"custom_properties":`...)
	b = appendStringMap(b, d.CustomProperties)
	return append(b, '}'), nil
}

// UnmarshalDatabaseDescriptorJSON reads Fluss's DatabaseDescriptor JSON form,
// as returned by GetDatabaseInfo (apache/fluss:
// utils/json/DatabaseDescriptorJsonSerde.java). `custom_properties` is
// required; `comment` is optional; other keys are ignored. Errors are
// KindInvalidArgument *Error values naming the JSON path.
func UnmarshalDatabaseDescriptorJSON(data []byte) (domain.DatabaseDescriptor, error) {
	v, err := parseJSONTree(data)
	if err != nil {
		return domain.DatabaseDescriptor{}, err
	}
	obj, err := asObject(v, "")
	if err != nil {
		return domain.DatabaseDescriptor{}, err
	}
	var d domain.DatabaseDescriptor
	if d.Comment, _, err = optString(obj, keyComment, ""); err != nil {
		return domain.DatabaseDescriptor{}, err
	}
	if d.CustomProperties, err = requiredStringMap(obj, keyCustomProperties); err != nil {
		return domain.DatabaseDescriptor{}, err
	}
	return d, nil
}

// ---------------------------------------------------------------------------
// Reading helpers
// ---------------------------------------------------------------------------

// parseJSONTree decodes exactly one JSON value, keeping numbers as
// json.Number so that integers are checked exactly.
func parseJSONTree(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, jsonErrorf("", "empty JSON document")
		}
		return nil, jsonErrorf("", "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, jsonErrorf("", "malformed JSON: unexpected data after the top-level value")
	}
	return v, nil
}

func asObject(v any, path string) (map[string]any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, jsonErrorf(path, "must be a JSON object")
	}
	return obj, nil
}

// optString returns obj[key] as a string. A JSON null counts as absent.
func optString(obj map[string]any, key, path string) (string, bool, error) {
	v, ok := obj[key]
	if !ok || v == nil {
		return "", false, nil
	}
	s, isString := v.(string)
	if !isString {
		return "", false, jsonErrorf(joinPath(path, key), "must be a string")
	}
	return s, true, nil
}

func optInt32(obj map[string]any, key, path string) (int32, bool, error) {
	v, ok := obj[key]
	if !ok {
		return 0, false, nil
	}
	n, err := asInt32(v, joinPath(path, key))
	return n, err == nil, err
}

func asInt32(v any, path string) (int32, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, jsonErrorf(path, "must be an integer")
	}
	n, err := strconv.ParseInt(string(num), 10, 32)
	if err != nil {
		return 0, jsonErrorf(path, "must be an integer between %d and %d, got %s", math.MinInt32, math.MaxInt32, string(num))
	}
	return int32(n), nil
}

func intParam(obj map[string]any, key, path string, def int) (int, error) {
	n, ok, err := optInt32(obj, key, path)
	if err != nil {
		return 0, err
	}
	if !ok {
		return def, nil
	}
	return int(n), nil
}

func optStringList(obj map[string]any, key, path string) ([]string, bool, error) {
	v, ok := obj[key]
	if !ok {
		return nil, false, nil
	}
	lpath := joinPath(path, key)
	items, isArray := v.([]any)
	if !isArray {
		return nil, false, jsonErrorf(lpath, "must be an array of strings")
	}
	out := make([]string, len(items))
	for i, item := range items {
		s, isString := item.(string)
		if !isString {
			return nil, false, jsonErrorf(indexPath(lpath, i), "must be a string")
		}
		out[i] = s
	}
	return out, true, nil
}

func requiredStringMap(obj map[string]any, key string) (map[string]string, error) {
	v, ok := obj[key]
	if !ok {
		return nil, jsonErrorf(key, "missing")
	}
	m, isObject := v.(map[string]any)
	if !isObject {
		return nil, jsonErrorf(key, "must be an object of strings")
	}
	out := make(map[string]string, len(m))
	for k, mv := range m {
		s, isString := mv.(string)
		if !isString {
			return nil, jsonErrorf(key+"."+strconv.Quote(k), "must be a string")
		}
		out[k] = s
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// Writing helpers
// ---------------------------------------------------------------------------

const hexDigits = "0123456789ABCDEF"

// appendJSONString appends s as a JSON string escaped the way Jackson's
// default generator escapes it: `"` and `\`, the short forms \b \t \n \f \r,
// \u00XX (upper-case hex) for other control characters, characters beyond
// U+FFFF as two \u-escaped UTF-16 surrogates, and everything else verbatim
// (no HTML escaping, no escaping of other non-ASCII). Invalid UTF-8 is written
// as U+FFFD, as a Java string decoded from those bytes would hold.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\b':
				b = append(b, '\\', 'b')
			case '\t':
				b = append(b, '\\', 't')
			case '\n':
				b = append(b, '\\', 'n')
			case '\f':
				b = append(b, '\\', 'f')
			case '\r':
				b = append(b, '\\', 'r')
			default:
				if c < 0x20 {
					b = appendUnicodeEscape(b, rune(c))
				} else {
					b = append(b, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = utf8.AppendRune(b, utf8.RuneError)
		case r >= 0x10000:
			// Jackson 2.15 (shaded in Fluss 0.9.1) writes a supplementary
			// character as its two UTF-16 surrogates, each \u-escaped.
			hi, lo := utf16.EncodeRune(r)
			b = appendUnicodeEscape(b, hi)
			b = appendUnicodeEscape(b, lo)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// appendUnicodeEscape appends \uXXXX for a UTF-16 code unit, with Jackson's
// upper-case hex digits.
func appendUnicodeEscape(b []byte, u rune) []byte {
	return append(b, '\\', 'u', hexDigits[u>>12&0xF], hexDigits[u>>8&0xF], hexDigits[u>>4&0xF], hexDigits[u&0xF])
}

func appendIntField(b []byte, key string, n int64) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, n, 10)
}

func appendStringArray(b []byte, items []string) []byte {
	b = append(b, '[')
	for i, s := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

func appendStringMap(b []byte, m map[string]string) []byte {
	b = append(b, '{')
	for i, k := range javaHashMapOrder(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

// java.util.HashMap constants (OpenJDK java/util/HashMap.java).
const (
	javaHashMapInitialCapacity = 16
	javaHashMapTreeifyAt       = 9  // a bin holding this many nodes is treeified ...
	javaHashMapMinTreeCapacity = 64 // ... or, below this capacity, the table grows instead
)

// javaHashMapOrder returns the keys of m in the iteration order of a
// java.util.HashMap created with `new HashMap<>()` into which the keys were
// put one at a time in ascending order. Fluss serialises properties by
// iterating such maps, so this reproduces the Java client's bytes whenever it
// filled the map key by key (TableDescriptor.Builder#property). A HashMap
// iterates bins in index order (hash spread, masked by the capacity) and each
// bin in insertion order; only the final capacity matters, since resizing
// preserves relative order. The capacity starts at 16, doubles when the size
// exceeds 3/4 of it, and also doubles when a bin reaches 9 nodes while the
// capacity is below 64. A bin of 9+ nodes in a table of 64+ bins becomes a
// tree whose iteration order is not reproduced; that needs nine colliding
// keys and does not happen with realistic property sets.
//
// Java's order is not fully determined by the keys: maps presized by putAll
// (whose sizing changed in JDK 19) or filled in another order may iterate
// differently. Fluss reads these objects by key, so order never changes
// meaning.
func javaHashMapOrder(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	hashes := make([]uint32, len(keys))
	capacity := uint32(javaHashMapInitialCapacity)
	bins := make(map[uint32]int)
	inserted := 0
	grow := func() {
		capacity *= 2
		clear(bins)
		for _, h := range hashes[:inserted] {
			bins[h&(capacity-1)]++
		}
	}
	for i, k := range keys {
		h := javaSpreadHash(k)
		hashes[i] = h
		inserted = i + 1
		idx := h & (capacity - 1)
		bins[idx]++
		if bins[idx] >= javaHashMapTreeifyAt && capacity < javaHashMapMinTreeCapacity {
			grow()
		}
		if uint32(inserted) > capacity/4*3 {
			grow()
		}
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return hashes[order[a]]&(capacity-1) < hashes[order[b]]&(capacity-1)
	})
	out := make([]string, len(keys))
	for i, j := range order {
		out[i] = keys[j]
	}
	return out
}

// javaSpreadHash is java.lang.String#hashCode (over UTF-16 code units) mixed
// by HashMap#hash (h ^ h>>>16).
func javaSpreadHash(s string) uint32 {
	var h uint32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + uint32(hi)
			h = 31*h + uint32(lo)
			continue
		}
		h = 31*h + uint32(r)
	}
	return h ^ (h >> 16)
}

// ---------------------------------------------------------------------------
// Paths, errors and copies
// ---------------------------------------------------------------------------

func joinPath(base, key string) string {
	if base == "" {
		return key
	}
	return base + "." + key
}

func indexPath(base string, i int) string {
	return base + "[" + strconv.Itoa(i) + "]"
}

// jsonErrorf builds a KindInvalidArgument *Error whose message is
// "path: reason" (or only the reason at the root).
func jsonErrorf(path, format string, args ...any) *domain.Error {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	return &domain.Error{Kind: domain.KindInvalidArgument, Message: msg}
}

// prefixError puts path in front of the message of an *Error built by
// jsonErrorf for a sub-document.
func prefixError(path string, err error) error {
	e := domain.AsError(err)
	if path == "" || e == nil {
		return err
	}
	return &domain.Error{Kind: e.Kind, Message: path + "." + e.Message}
}
