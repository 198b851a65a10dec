package serde

// This file holds the DataType document (`data_type_json`; apache/fluss:
// utils/json/DataTypeJsonSerde.java) and the JSON keys and defaults the
// four documents share.

import (
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
